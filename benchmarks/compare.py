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
The solvers (every cfrkit trainer this cfrkit exports, OpenSpiel's CFRSolver and CFRPlusSolver,
LiteEFG's CFR, CFR+, DCFR and PCFR+) are the adapters of ``peers.py``, which says how each peer
is trained and evaluated. Note LiteEFG's OpenSpiel environment caches the game it converts
under ~/game_instances.

    python benchmarks/compare.py                       # everything, about 15 minutes
    python benchmarks/compare.py --quick               # Kuhn 2p/3p and Leduc, ~3 minutes
    python benchmarks/compare.py --games leduc --seconds 5 --cap 30
    python benchmarks/compare.py --games liars_dice --no-convergence

Measures; never asserts.
"""

from __future__ import annotations

import argparse
import gc
import json
import math
import sys
import time
from dataclasses import dataclass, field

from peers import (
    GAMES,
    CfrkitSolver,
    checkpoints,
    fmt_rate,
    fmt_time,
    load_game,
    print_table,
    solver_entries,
    versions_line,
)

THRESHOLDS = (1e-3, 1e-4)


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


def measure_convergence(factory, cap, target=THRESHOLDS[-1]):
    solver, _ = timed_setup(factory)
    if isinstance(solver, CfrkitSolver):  # compile (or load) the numba kernels off the clock
        warm = factory()
        warm.step(1)
        warm.nash_conv()
        del warm
    curve = Curve(solver.name)
    done, trained = 0, 0.0
    wall_start = time.perf_counter()
    for target_iterations in checkpoints(growth=1.05):
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


def run(args, out=print):
    gc.collect()
    throughput_rows, convergence_rows, results = [], [], {}
    log = out
    for key in args.games:
        game = load_game(GAMES[key], log)
        if game is None:
            continue
        spec, compiled, compile_time = game.spec, game.compiled, game.compile_seconds
        nodes, players = compiled.num_nodes, compiled.num_players
        log(game.describe())
        makers = solver_entries(compiled, args.peers, log)
        measured = []
        for name, _, factory in makers:
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
        for name, _, factory in makers:
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
    print(versions_line())
    results = run(args)
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(results, fh, indent=1)


if __name__ == "__main__":
    main()
