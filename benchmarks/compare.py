"""cfrkit side by side with OpenSpiel's C++ CFR solvers and LiteEFG, in one process.

For each game every solver gets the same tree: with OpenSpiel installed cfrkit solves
``cfrkit.openspiel.from_openspiel(name)``, node for node the tree OpenSpiel and LiteEFG solve
(for Leduc it is also the tree of the native ``cfrkit.games.LeducPoker``); without OpenSpiel
only cfrkit's native games run.

Two tables are printed (markdown):

1. throughput: iterations/s, ns per node-visit and the ratio cfrkit VanillaCFR / solver, where
   node-visits = nodes x players per iteration and nodes = cfrkit's compiled node count (what a
   full alternating CFR iteration touches). Setup (compiling, building the solver) is not timed
   and is shown on its own.
2. convergence: training wall time (and iterations) until the average policy's NashConv is
   <= 1e-3 and <= 1e-4, checked at iteration counts about 5% apart; evaluation time is not
   counted. A cell that is not reached within the cap shows ``>cap``.

NashConv: cfrkit's exact evaluator for cfrkit and OpenSpiel (the two agree to 1e-9, see
tests/test_openspiel.py), LiteEFG's own ``exploitability`` summed over players for LiteEFG.
Note LiteEFG's OpenSpiel environment caches the game it converts under ~/game_instances.

    python benchmarks/compare.py                       # everything, about 15 minutes
    python benchmarks/compare.py --quick               # Kuhn 2p/3p and Leduc, ~3 minutes
    python benchmarks/compare.py --games leduc --seconds 5 --cap 30
    python benchmarks/compare.py --games liars_dice --no-convergence

Measures; never asserts.
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import inspect
import io
import json
import math
import sys
import time
from dataclasses import dataclass, field

import numpy as np

import cfrkit
from cfrkit import games as cfrkit_games

try:
    import pyspiel
except ImportError:  # OpenSpiel is optional
    pyspiel = None

try:
    with contextlib.redirect_stdout(io.StringIO()):
        import LiteEFG as leg
        from LiteEFG.baselines.CFR import graph as LiteEFGCFR
        from LiteEFG.baselines.CFRplus import graph as LiteEFGCFRPlus
except Exception:  # LiteEFG is optional (and pulls jax); any import failure skips it
    leg = None

TRAINER_NAMES = ("VanillaCFR", "PrunedCFR", "ChanceSampledCFR")
THRESHOLDS = (1e-3, 1e-4)


@dataclass(frozen=True)
class GameSpec:
    key: str
    label: str
    openspiel_name: str
    native: object  # a factory of the native cfrkit game, or None


GAMES = {
    "kuhn2": GameSpec("kuhn2", "Kuhn 2p", "kuhn_poker", lambda: cfrkit_games.KuhnPoker()),
    "kuhn3": GameSpec(
        "kuhn3", "Kuhn 3p", "kuhn_poker(players=3)", lambda: cfrkit_games.KuhnPoker(players=3)
    ),
    "leduc": GameSpec(
        "leduc", "Leduc", "leduc_poker", lambda: getattr(cfrkit_games, "LeducPoker")()
    ),
    "liars_dice": GameSpec("liars_dice", "Liar's dice", "liars_dice", None),
}


# -- solvers behind one interface ------------------------------------------------------------


class Solver:
    """``step(n)`` runs n iterations; ``nash_conv()`` measures the average policy."""

    name: str
    family: str  # "cfrkit" or the peer's name

    def step(self, n: int) -> None:
        raise NotImplementedError

    def nash_conv(self) -> float:
        raise NotImplementedError

    def batch(self) -> int:
        """A reasonable number of iterations per step() call (1 for per-iteration APIs)."""
        return 1


class CfrkitSolver(Solver):
    family = "cfrkit"

    def __init__(self, cls, compiled):
        kwargs = {}
        if "seed" in inspect.signature(cls).parameters:
            kwargs["seed"] = 0
        self.name = f"cfrkit {cls.__name__}"
        self.compiled = compiled
        self.trainer = cls(compiled, **kwargs)

    def step(self, n):
        self.trainer.iterate(n)

    def nash_conv(self):
        return cfrkit.nash_conv(self.compiled, self.trainer.average_policy())

    def batch(self):
        return 1 << 30  # one kernel call runs any number of iterations

    def touched_per_iteration(self):
        if self.trainer.iteration == 0:
            return float("nan")
        return self.trainer.nodes_touched / self.trainer.iteration


class OpenSpielSolver(Solver):
    family = "OpenSpiel"

    def __init__(self, cls, compiled):
        from cfrkit.openspiel import from_openspiel_policy

        self.name = f"OpenSpiel {cls.__name__} (C++)"
        self.compiled = compiled
        self.solver = cls(compiled.game.openspiel_game)
        self._convert = from_openspiel_policy

    def step(self, n):
        update = self.solver.evaluate_and_update_policy
        for _ in range(n):
            update()

    def nash_conv(self):
        policy = self._convert(self.compiled, self.solver.tabular_average_policy())
        return cfrkit.nash_conv(self.compiled, policy)


class LiteEFGSolver(Solver):
    family = "LiteEFG"

    def __init__(self, graph_cls, label, average, compiled):
        self.name = f"LiteEFG {label}"
        with contextlib.redirect_stdout(io.StringIO()):  # LiteEFG prints banners
            self.env = leg.OpenSpielEnv(compiled.game.openspiel_game, traverse_type="Enumerate")
            self.graph = graph_cls()
            self.env.set_graph(self.graph)
        self.average = average
        self.strategy = self.graph.current_strategy()

    def step(self, n):
        graph, env, strategy = self.graph, self.env, self.strategy
        for _ in range(n):  # the loop of LiteEFG.baselines.utils.train
            graph.update_graph(env)
            env.update_strategy(strategy, update_best=False)

    def nash_conv(self):
        return float(sum(self.env.exploitability(self.strategy, self.average)))


def cfrkit_trainer_classes(log):
    found = []
    for name in TRAINER_NAMES:
        cls = getattr(cfrkit, name, None)
        if cls is None:
            log(f"  cfrkit {name}: not exported by this cfrkit, skipped")
        else:
            found.append(cls)
    return found


def make_solvers(compiled, spec, args, log):
    """(name, factory) for every solver that runs on this game, logging the skipped ones."""
    makers = [
        (f"cfrkit {cls.__name__}", lambda cls=cls: CfrkitSolver(cls, compiled))
        for cls in cfrkit_trainer_classes(log)
    ]
    if pyspiel is None:
        log("  OpenSpiel: not installed (pip install open_spiel), skipped")
    elif "openspiel" in args.peers:
        for cls in (pyspiel.CFRSolver, pyspiel.CFRPlusSolver):
            makers.append(
                (f"OpenSpiel {cls.__name__} (C++)", lambda cls=cls: OpenSpielSolver(cls, compiled))
            )
    if leg is None:
        log("  LiteEFG: not installed (pip install liteefg), skipped")
    elif pyspiel is not None and "liteefg" in args.peers:
        makers.append(
            ("LiteEFG CFR", lambda: LiteEFGSolver(LiteEFGCFR, "CFR", "avg-iterate", compiled))
        )
        if compiled.num_players == 2:  # LiteEFG's CFR+ graph updates players 1 and 2 only
            makers.append(
                (
                    "LiteEFG CFR+",
                    lambda: LiteEFGSolver(
                        LiteEFGCFRPlus, "CFR+", "linear-avg-iterate", compiled
                    ),
                )
            )
        else:
            log("  LiteEFG CFR+: its graph is written for two players, skipped")
    return makers


# -- measurements ----------------------------------------------------------------------------


@dataclass
class Throughput:
    name: str
    setup: float
    iterations: int
    seconds: float
    touched: float = float("nan")

    @property
    def rate(self):
        return self.iterations / self.seconds


@dataclass
class Curve:
    name: str
    iterations: list = field(default_factory=list)
    seconds: list = field(default_factory=list)  # training time only
    nash_conv: list = field(default_factory=list)
    capped: bool = False

    def reached(self, threshold):
        for it, s, nc in zip(self.iterations, self.seconds, self.nash_conv):
            if nc <= threshold:
                return s, it
        return None


def timed_setup(factory):
    start = time.perf_counter()
    solver = factory()
    return solver, time.perf_counter() - start


def measure_throughput(factory, seconds):
    solver, setup = timed_setup(factory)
    solver.step(1)  # warm up (numba kernels are compiled or loaded from cache here)
    batch = 1
    limit = solver.batch()
    while True:  # grow the batch until one call takes a measurable time
        start = time.perf_counter()
        solver.step(batch)
        elapsed = time.perf_counter() - start
        if elapsed > min(0.05, seconds / 10) or batch >= limit:
            break
        batch *= 4
    total_iterations, total_time = 0, 0.0
    while total_time < seconds:
        start = time.perf_counter()
        solver.step(batch)
        total_time += time.perf_counter() - start
        total_iterations += batch
    touched = solver.touched_per_iteration() if isinstance(solver, CfrkitSolver) else math.nan
    return Throughput(solver.name, setup, total_iterations, total_time, touched)


def checkpoints(growth=1.05):
    """Iteration counts at which NashConv is checked: every iteration, then ~5% apart."""
    value = 1
    while True:
        yield value
        value = max(value + 1, int(value * growth))


def measure_convergence(factory, cap, target=min(THRESHOLDS)):
    solver, _ = timed_setup(factory)
    if isinstance(solver, CfrkitSolver):  # compile (or load) the numba kernels off the clock
        warm = factory()
        warm.step(1)
        warm.nash_conv()
        del warm
    curve = Curve(solver.name)
    done, trained = 0, 0.0
    wall_start = time.perf_counter()
    for target_iterations in checkpoints():
        start = time.perf_counter()
        solver.step(target_iterations - done)
        trained += time.perf_counter() - start
        done = target_iterations
        value = solver.nash_conv()
        curve.iterations.append(done)
        curve.seconds.append(trained)
        curve.nash_conv.append(value)
        if value <= target:
            break
        # evaluation is not counted in `trained`; the wall limit keeps slow evaluators bounded
        if trained > cap or time.perf_counter() - wall_start > 4 * cap:
            curve.capped = True
            break
    return curve


# -- printing --------------------------------------------------------------------------------


def fmt_rate(x):
    return f"{x:,.0f}" if x >= 100 else f"{x:,.1f}"


def fmt_time(s):
    if s < 1e-3:
        return f"{s * 1e6:.0f} µs"
    if s < 1:
        return f"{s * 1e3:.1f} ms"
    return f"{s:.2f} s"


def print_table(header, rows, out):
    out("| " + " | ".join(header) + " |")
    out("| " + " | ".join("---" if i == 0 else "---:" for i in range(len(header))) + " |")
    for row in rows:
        out("| " + " | ".join(row) + " |")


def run(args, out=print):
    gc.collect()
    throughput_rows, convergence_rows, results = [], [], {}
    log = out
    for key in args.games:
        spec = GAMES[key]
        if pyspiel is not None:
            from cfrkit.openspiel import from_openspiel

            start = time.perf_counter()
            compiled = cfrkit.compile_game(from_openspiel(spec.openspiel_name))
            source = f"from_openspiel({spec.openspiel_name!r})"
        elif spec.native is not None:
            start = time.perf_counter()
            compiled = cfrkit.compile_game(spec.native())
            source = "native"
        else:
            log(f"{spec.label}: needs OpenSpiel, skipped")
            continue
        compile_time = time.perf_counter() - start
        nodes, players = compiled.num_nodes, compiled.num_players
        log(
            f"{spec.label}: {source}, {nodes:,} nodes, {compiled.num_infosets:,} infosets, "
            f"{players} players; cfrkit compile {compile_time:.2f} s"
        )
        makers = make_solvers(compiled, spec, args, log)
        measured = []
        for name, factory in makers:
            result = measure_throughput(factory, args.seconds)
            measured.append(result)
            log(f"  {name}: {fmt_rate(result.rate)} it/s")
        vanilla = next((m for m in measured if m.name == "cfrkit VanillaCFR"), None)
        for m in measured:
            ns = m.seconds / (m.iterations * nodes * players) * 1e9
            ratio = f"{vanilla.rate / m.rate:.1f}x" if vanilla else "-"
            touched = "" if math.isnan(m.touched) else f"{m.touched / (nodes * players):.3g}"
            throughput_rows.append([
                spec.label, m.name, fmt_rate(m.rate), f"{ns:.2f}", ratio, touched,
                fmt_time(m.setup),
            ])
        results[key] = {
            "nodes": nodes, "players": players, "compile_seconds": compile_time,
            "throughput": {m.name: {"iterations_per_second": m.rate, "setup_seconds": m.setup}
                           for m in measured},
        }
        if args.no_convergence:
            continue
        curves = []
        for name, factory in makers:
            curve = measure_convergence(factory, args.cap)
            curves.append(curve)
            cells = []
            for threshold in THRESHOLDS:
                hit = curve.reached(threshold)
                cells.append(f">{args.cap:g} s" if hit is None else
                             f"{fmt_time(hit[0])} ({hit[1]:,} it)")
            convergence_rows.append([spec.label, name, *cells])
            log(f"  {name}: " + ", ".join(cells) + f"; last NashConv {curve.nash_conv[-1]:.3g}")
        results[key]["curves"] = {
            c.name: {"iterations": c.iterations, "seconds": c.seconds, "nash_conv": c.nash_conv}
            for c in curves
        }
    out("")
    out(f"Throughput (measured for {args.seconds:g} s per solver; ns per node-visit = time / "
        "(iterations x nodes x players); ratio = cfrkit VanillaCFR it/s / solver it/s)")
    out("")
    print_table(
        ["game", "solver", "iterations/s", "ns/node-visit", "VanillaCFR / solver",
         "visits touched / full", "setup"],
        throughput_rows, out,
    )
    if not args.no_convergence:
        out("")
        out(f"Training wall time to NashConv <= 1e-3 and <= 1e-4 (cap {args.cap:g} s per cell)")
        out("")
        print_table(["game", "solver", "NashConv <= 1e-3", "NashConv <= 1e-4"],
                    convergence_rows, out)
    return results


def parse_args(argv=None):
    parser = argparse.ArgumentParser(
        description=__doc__.splitlines()[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--games", default="kuhn2,kuhn3,leduc,liars_dice",
        help="comma-separated, from " + ", ".join(GAMES) + " (default: all)",
    )
    parser.add_argument("--seconds", type=float, default=3.0,
                        help="timed seconds per solver in the throughput table (default 3)")
    parser.add_argument("--cap", type=float, default=30.0,
                        help="training seconds per solver and game in the convergence table "
                             "(default 30)")
    parser.add_argument("--peers", default="openspiel,liteefg",
                        help="peers to run: openspiel, liteefg (default both)")
    parser.add_argument("--no-convergence", action="store_true",
                        help="skip the time-to-NashConv table")
    parser.add_argument("--quick", action="store_true",
                        help="--seconds 0.5 --cap 10 and no liar's dice unless --games names it")
    parser.add_argument("--json", metavar="PATH", help="also write the measurements as JSON")
    args = parser.parse_args(argv)
    given = sys.argv[1:] if argv is None else argv
    games_given = any(a == "--games" or a.startswith("--games=") for a in given)
    if args.quick:
        args.seconds = 0.5 if args.seconds == 3.0 else args.seconds
        args.cap = 10.0 if args.cap == 30.0 else args.cap
        if not games_given:
            args.games = "kuhn2,kuhn3,leduc"
    args.games = [g.strip() for g in args.games.split(",") if g.strip()]
    unknown = [g for g in args.games if g not in GAMES]
    if unknown:
        parser.error(f"unknown game(s) {unknown}; choose from {list(GAMES)}")
    args.peers = {p.strip().lower() for p in args.peers.split(",") if p.strip()}
    return args


def main(argv=None):
    args = parse_args(argv)
    print(f"cfrkit {cfrkit.__version__}, numpy {np.__version__}"
          + (", OpenSpiel installed" if pyspiel is not None else "")
          + (f", LiteEFG installed ({leg.get_threads()} thread)" if leg is not None else ""))
    results = run(args)
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(results, fh, indent=1)


if __name__ == "__main__":
    main()
