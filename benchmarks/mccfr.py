"""Monte Carlo CFR: training seconds to a target, cfrkit against OpenSpiel's C++, over seeds.

Solvers, side by side in one process, on the same compiled OpenSpiel tree:

- cfrkit ``ExternalSamplingCFR`` and ``OutcomeSamplingCFR`` (exploration 0.6), each with the
  vanilla rule and as Linear MCCFR (``rule=cfrkit.RegretRule.linear()``);
- OpenSpiel's C++ ``ExternalSamplingMCCFRSolver`` (simple averaging, its default) and
  ``OutcomeSamplingMCCFRSolver`` (epsilon 0.6, its default), driven by ``run_iteration()``;
- cfrkit's full-pass ``CFRPlus``, ``DCFRPlus`` and ``PDCFRPlus`` (deterministic), so the
  table shows where sampling beats full passes in wall time.

One iteration is one pass per player everywhere (OpenSpiel's ``run_iteration`` and cfrkit's
``iterate(1)`` both loop over the players, alternating). Games and targets (defaults):

- Leduc (``leduc_poker``): exploitability (NashConv / 2) <= 0.25, 0.05, 1e-2 and 1e-3;
- liar's dice (``liars_dice``, 295k histories): NashConv <= 0.5, 0.1 and 1e-2.

The targets 1e-2 / 1e-3 are the ones asked for; the looser ones are added because within a
short cap OpenSpiel's solvers (and outcome sampling generally) reach only those, and a ratio
is measured only where both solvers got there.

How it measures, per game, seed and solver (seeds 0..S-1, ``--seeds``; a seed is the
solver's own: cfrkit's ``seed=`` and OpenSpiel's ``seed=``, so the two see different random
streams and agree only in distribution; the full-pass trainers ignore it and are simply run
again). The seeds are the outer loop and the solvers the inner one, so machine drift hits
every solver alike.

0. The policy reader is checked on Kuhn first: cfrkit's NashConv of OpenSpiel's MCCFR average
   policies as read against ``pyspiel.nash_conv`` of the same policies (printed).
1. Warm-up, off every clock: each cfrkit trainer kind (class and rule) runs ``iterate(1)``
   once on a throwaway trainer (numba JIT or cache load), and cfrkit's evaluator is called
   once. OpenSpiel's policy reader walks the OpenSpiel game once per game (also off the
   clock).
2. A search run on a fresh solver, evaluated exactly (cfrkit's ``nash_conv``; OpenSpiel's
   average policy read state by state, see ``peers.OpenSpielPolicyReader``) at iteration
   checkpoints: every iteration while that is within ``--growth`` (default 1.15), then
   counts 15% apart, plus the agreement counts below exactly. Evaluation is timed apart and
   never counted as training. Time to a target = training seconds up to the first checkpoint
   at or below it, so its iteration count (and seconds) is up to ~15% above the first
   crossing of the curve on a finer grid (the curves of sampled solvers are noisy: this is
   the first crossing on this grid). The run stops once every target is reached and every
   agreement count passed, or at the first checkpoint past ``--cap`` training seconds (then
   the unreached targets are ``>cap`` for that seed).
3. cfrkit crossings reached in under 1 s of training are timed again on a fresh trainer with
   the same seed, trained straight to the crossing (one ``iterate`` call per target, no
   evaluation; the same seed gives the same iterates, checked): at that scale the checkpoint
   calls' ~30 microseconds each would be a visible share. Longer crossings keep the search
   run's time (the checkpoint calls are then < 1%). OpenSpiel steps one ``run_iteration``
   per Python call anyway, so checkpoints cost it nothing and its search-run time is kept.

Reported per solver and target: the median over seeds of the seconds and of the iterations
(a seed that did not get there counts as infinitely slow, so the median is ``>cap`` when
more than half did not), how many seeds got there, nodes touched per iteration (cfrkit), the
median training seconds per iteration, and the median metric where the runs stopped. Ratios
compare the same algorithm: OpenSpiel ES against cfrkit's vanilla ES, OS against vanilla OS.
``measured`` = OpenSpiel's median seconds / cfrkit's median seconds where both medians are
finite; when OpenSpiel's median is ``>cap`` it is a lower bound, ``> cap / cfrkit seconds``.
``per iteration`` = OpenSpiel's median seconds per iteration / cfrkit's: since the two agree
in distribution (the agreement table: the same median NashConv at the same iteration counts),
they need the same iterations in distribution and this is what the time ratio converges to.

Agreement in distribution: the median NashConv over the seeds at fixed iteration counts
(``--agreement``, default 10^4 and 10^5), cfrkit's vanilla ES / OS against OpenSpiel's.

    python benchmarks/mccfr.py               # Leduc and liar's dice, 5 seeds, cap 20 s: ~23 min
    python benchmarks/mccfr.py --quick       # 3 seeds, cap 4 s, agreement at 10^3, 10^4: ~3.5 min
    python benchmarks/mccfr.py --solvers cfrkit-es,openspiel-es --seeds 3 --cap 600 \\
        --target leduc=0.01 --target liars_dice=0.01 --agreement 1e5,1e6
        # external sampling to the 1e-2 targets, OpenSpiel included: ~21 min

Absolute times drift on a shared machine; the ratios are of solvers measured in the same run.
Measures; never asserts.
"""

from __future__ import annotations

import argparse
import inspect
import json
import math
import shlex
import statistics
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

from peers import (
    GAMES,
    CfrkitSolver,
    LoadedGame,
    OpenSpielMCCFRSolver,
    OpenSpielPolicyReader,
    Solver,
    check_reader,
    fmt_time,
    load_game,
    print_table,
    pyspiel,
    versions_line,
)

import cfrkit

RERUN_BELOW = 1.0  # cfrkit crossings faster than this (seconds) are timed again, see step 3


@dataclass(frozen=True)
class Target:
    """What a game's targets bound: exploitability (NashConv / 2) or NashConv."""

    metric: str
    scale: float  # metric = scale x NashConv
    values: tuple[float, ...]


DEFAULT_TARGETS = {
    "leduc": Target("exploitability", 0.5, (0.25, 0.05, 1e-2, 1e-3)),
    "liars_dice": Target("NashConv", 1.0, (0.5, 0.1, 1e-2)),
    "kuhn2": Target("exploitability", 0.5, (1e-2, 1e-3)),
    "kuhn3": Target("NashConv", 1.0, (1e-2, 1e-3)),
}
DEFAULT_GAMES = ("leduc", "liars_dice")


@dataclass(frozen=True)
class SolverSpec:
    """A solver of the benchmark: its key, label, family, algorithm and factory."""

    key: str
    label: str
    family: str  # "cfrkit" or "OpenSpiel"
    algorithm: str  # "ES", "OS" or "full pass"
    sampled: bool
    make: Callable[[cfrkit.CompiledGame, int, OpenSpielPolicyReader | None], Solver]


def _cfrkit(cls_name: str, label: str, **options) -> Callable:
    def make(compiled, seed, reader):
        cls = getattr(cfrkit, cls_name)
        seeded = "seed" in inspect.signature(cls).parameters
        seed_option = {"seed": seed} if seeded else {}
        return CfrkitSolver(cls, compiled, name=label, **options, **seed_option)
    return make


def _openspiel(kind: str) -> Callable:
    def make(compiled, seed, reader):
        return OpenSpielMCCFRSolver(kind, compiled, seed=seed, reader=reader)
    return make


def solver_specs() -> list[SolverSpec]:
    linear = cfrkit.RegretRule.linear()
    specs = [
        SolverSpec("cfrkit-es", "cfrkit ExternalSamplingCFR", "cfrkit", "ES", True,
                   _cfrkit("ExternalSamplingCFR", "cfrkit ExternalSamplingCFR")),
        SolverSpec("cfrkit-es-linear", "cfrkit ExternalSamplingCFR linear", "cfrkit", "ES", True,
                   _cfrkit("ExternalSamplingCFR", "cfrkit ExternalSamplingCFR linear",
                           rule=linear)),
        SolverSpec("openspiel-es", "OpenSpiel ExternalSamplingMCCFRSolver", "OpenSpiel", "ES",
                   True, _openspiel("ES")),
        SolverSpec("cfrkit-os", "cfrkit OutcomeSamplingCFR", "cfrkit", "OS", True,
                   _cfrkit("OutcomeSamplingCFR", "cfrkit OutcomeSamplingCFR")),
        SolverSpec("cfrkit-os-linear", "cfrkit OutcomeSamplingCFR linear", "cfrkit", "OS", True,
                   _cfrkit("OutcomeSamplingCFR", "cfrkit OutcomeSamplingCFR linear",
                           rule=linear)),
        SolverSpec("openspiel-os", "OpenSpiel OutcomeSamplingMCCFRSolver", "OpenSpiel", "OS",
                   True, _openspiel("OS")),
    ]
    for name in ("CFRPlus", "DCFRPlus", "PDCFRPlus"):
        if hasattr(cfrkit, name):
            specs.append(SolverSpec(f"cfrkit-{name.lower()}", f"cfrkit {name} (full pass)",
                                    "cfrkit", "full pass", False,
                                    _cfrkit(name, f"cfrkit {name} (full pass)")))
    return specs


# -- one run -------------------------------------------------------------------------------------


@dataclass
class Run:
    """One solver, one seed, one game."""

    crossings: dict[float, int] = field(default_factory=dict)  # target -> iteration
    seconds: dict[float, float] = field(default_factory=dict)  # target -> training seconds
    values: dict[float, float] = field(default_factory=dict)  # target -> metric at crossing
    rerun: dict[float, bool] = field(default_factory=dict)  # target -> timed by a rerun
    at: dict[int, float] = field(default_factory=dict)  # agreement count -> NashConv
    iterations: int = 0
    trained: float = 0.0
    last_value: float = float("nan")
    nodes_touched: int | None = None
    evaluation: float = 0.0
    evaluations: int = 0
    capped: bool = False

    def as_json(self) -> dict:
        return {
            "targets": {f"{t:g}": {"iterations": self.crossings[t], "seconds": self.seconds[t],
                                   "value": self.values[t], "timed_by_rerun": self.rerun[t]}
                        for t in self.crossings},
            "nash_conv_at": {str(k): v for k, v in self.at.items()},
            "iterations": self.iterations, "trained_seconds": self.trained,
            "last_value": self.last_value, "nodes_touched": self.nodes_touched,
            "evaluation_seconds": self.evaluation, "evaluations": self.evaluations,
            "capped": self.capped,
        }


def grid(growth: float, extra: tuple[int, ...]) -> Iterator[int]:
    """Every iteration while within ``growth``, then counts ``growth`` apart; ``extra`` counts
    are inserted exactly."""
    pending = sorted(set(extra))
    value = 1
    while True:
        while pending and pending[0] <= value:
            count = pending.pop(0)
            if count < value:
                yield count
        yield value
        value = max(value + 1, int(value * growth))


def search(make: Callable[[], Solver], target: Target, counts: tuple[int, ...], cap: float,
           growth: float) -> Run:
    """The search run of step 2 (module docstring), then the reruns of step 3 for cfrkit."""
    solver = make()
    run = Run()
    pending = sorted(target.values, reverse=True)
    last_count = max(counts, default=0)
    wall_start = time.perf_counter()
    done = 0
    for checkpoint in grid(growth, counts):
        start = time.perf_counter()
        solver.step(checkpoint - done)
        run.trained += time.perf_counter() - start
        done = checkpoint
        start = time.perf_counter()
        nash_conv = solver.nash_conv()
        run.evaluation += time.perf_counter() - start
        run.evaluations += 1
        value = target.scale * nash_conv
        run.iterations, run.last_value = done, value
        if done in counts:
            run.at[done] = nash_conv
        while pending and value <= pending[0]:
            t = pending.pop(0)
            run.crossings[t], run.values[t], run.seconds[t] = done, value, run.trained
            run.rerun[t] = False
        if not pending and done >= last_count:
            break
        if run.trained > cap or time.perf_counter() - wall_start > 4 * cap + 30:
            run.capped = True
            break
    if isinstance(solver, CfrkitSolver):
        run.nodes_touched = solver.trainer.nodes_touched
        fast = sorted((t for t in run.crossings if run.seconds[t] < RERUN_BELOW),
                      key=run.crossings.get)
        if fast:
            again = make()
            done, elapsed = 0, 0.0
            for t in fast:
                start = time.perf_counter()
                again.step(run.crossings[t] - done)
                elapsed += time.perf_counter() - start
                done = run.crossings[t]
                run.seconds[t], run.rerun[t] = elapsed, True
            value = target.scale * again.nash_conv()
            if abs(value - run.values[fast[-1]]) > 1e-9 * max(1.0, abs(value)):
                raise RuntimeError(f"rerun reached {value!r} at {done} iterations, the search "
                                   f"run {run.values[fast[-1]]!r}: not deterministic")
    return run


# -- summaries -----------------------------------------------------------------------------------


def median_or_inf(values: list[float]) -> float:
    return statistics.median(values) if values else math.inf


@dataclass
class Summary:
    """One solver on one game, over the seeds."""

    spec: SolverSpec
    runs: list[Run]

    def reached(self, t: float) -> int:
        return sum(t in r.crossings for r in self.runs)

    def seconds(self, t: float) -> float:
        """Median seconds over every seed (inf for a seed that did not get there)."""
        return median_or_inf([r.seconds.get(t, math.inf) for r in self.runs])

    def iterations(self, t: float) -> float:
        return median_or_inf([r.crossings.get(t, math.inf) for r in self.runs])

    def per_iteration(self) -> float:
        return median_or_inf([r.trained / r.iterations for r in self.runs if r.iterations])

    def touched(self) -> float:
        per = [r.nodes_touched / r.iterations for r in self.runs
               if r.nodes_touched is not None and r.iterations]
        return median_or_inf(per) if per else math.nan

    def last(self) -> tuple[float, float]:
        """Median metric and iterations where the runs stopped."""
        return (statistics.median(r.last_value for r in self.runs),
                statistics.median(r.iterations for r in self.runs))

    def at(self, count: int) -> tuple[float, int]:
        """Median NashConv at ``count`` iterations over the seeds that got there, and how many."""
        values = [r.at[count] for r in self.runs if count in r.at]
        return (statistics.median(values) if values else math.nan), len(values)


def fmt_it(n: float) -> str:
    if math.isinf(n):
        return "-"
    n = int(n)
    if n >= 10_000:
        exponent = int(math.floor(math.log10(n)))
        return f"{n / 10 ** exponent:.2g}e{exponent}"
    return f"{n:,}"


def cell(s: Summary, t: float, cap: float) -> str:
    seconds, n = s.seconds(t), len(s.runs)
    reached = s.reached(t)
    if math.isinf(seconds):
        return f">{cap:g} s ({reached}/{n})"
    suffix = "" if reached == n else f" ({reached}/{n})"
    return f"{fmt_time(seconds)}, {fmt_it(s.iterations(t))} it{suffix}"


def fmt_per_iteration(seconds: float) -> str:
    return f"{seconds * 1e6:.3g} µs" if seconds < 1e-3 else fmt_time(seconds)


def fmt_ratio(x: float) -> str:
    return f"{x:,.0f}x" if x >= 10 else f"{x:.1f}x"


def fmt_target(t: float) -> str:
    return f"{t:g}"


# -- the benchmark -------------------------------------------------------------------------------


def warm_up(compiled: cfrkit.CompiledGame, specs: list[SolverSpec], log) -> None:
    """Compile (or load) each cfrkit trainer kind and the evaluator, off every clock."""
    start = time.perf_counter()
    cfrkit.nash_conv(compiled, cfrkit.Policy.uniform(compiled))
    for spec in specs:
        if spec.family == "cfrkit":
            spec.make(compiled, 0, None).step(1)
    seconds = time.perf_counter() - start
    log(f"  warm-up (JIT or cache load, evaluator included): {fmt_time(seconds)}")


def run_game(game: LoadedGame, target: Target, specs: list[SolverSpec],
             args: argparse.Namespace, log) -> dict:
    compiled = game.compiled
    log(game.describe())
    warm_up(compiled, specs, log)
    start = time.perf_counter()
    needed = any(s.family == "OpenSpiel" for s in specs)
    reader = OpenSpielPolicyReader(compiled) if needed else None
    if reader is not None:
        log(f"  OpenSpiel policy reader: one state per information state found in "
            f"{fmt_time(time.perf_counter() - start)}")
    runs: dict[str, list[Run]] = {s.key: [] for s in specs}
    for seed in range(args.seeds):
        for spec in specs:
            counts = args.agreement if spec.sampled else ()
            run = search(lambda: spec.make(compiled, seed, reader), target, counts, args.cap,
                         args.growth)
            runs[spec.key].append(run)
            reached = ", ".join(f"{fmt_target(t)} at {fmt_it(run.crossings[t])} it "
                                f"({fmt_time(run.seconds[t])})" for t in run.crossings)
            which = f"seed {seed}" if spec.sampled else f"run {seed + 1}"
            log(f"  {which} {spec.label}: {reached or 'no target'}; stopped at "
                f"{fmt_it(run.iterations)} it, {target.metric} {run.last_value:.3g}, "
                f"{run.trained:.2f} s training{' (cap)' if run.capped else ''}, "
                f"{run.evaluations} evaluations {fmt_time(run.evaluation)}")
    return {"summaries": [Summary(s, runs[s.key]) for s in specs], "game": game,
            "target": target}


def section(title: str, header: list[str], rows: list[list[str]], out) -> None:
    """A titled table, or nothing when it has no rows."""
    if rows:
        out("")
        out(title)
        out("")
        print_table(header, rows, out)


def report(results: list[dict], args: argparse.Namespace, out) -> None:
    cap = args.cap
    out("")
    out(f"Seconds: median training time over {args.seeds} seed(s) to the first checkpoint at or "
        f"below the target (checkpoints ~{(args.growth - 1) * 100:.0f}% apart: up to that much "
        f"above the first crossing); a seed that did not get there within the cap "
        f"({cap:g} training seconds per run) counts as infinitely slow, (k/n): seeds that got "
        "there. Evaluation and JIT are not counted. it: median iterations (one pass per "
        "player).")
    for result in results:
        game, target, summaries = result["game"], result["target"], result["summaries"]
        out("")
        out(f"{game.spec.label} ({game.compiled.num_nodes:,} histories, "
            f"{game.compiled.num_infosets:,} infosets): {target.metric} <= target")
        out("")
        rows = []
        for s in summaries:
            value, iterations = s.last()
            touched = s.touched()
            rows.append([s.spec.label, *(cell(s, t, cap) for t in target.values),
                         "-" if math.isnan(touched)
                         else f"{touched:,.1f}" if touched < 1000 else f"{touched:,.0f}",
                         fmt_per_iteration(s.per_iteration()),
                         f"{value:.3g} at {fmt_it(iterations)} it"])
        print_table(["solver", *(f"<= {fmt_target(t)}" for t in target.values),
                     "nodes/it", "s/it", f"{target.metric} at stop (median)"], rows, out)

    rows = []
    for result in results:
        game, target, summaries = result["game"], result["target"], result["summaries"]
        by_key = {s.spec.key: s for s in summaries}
        for algorithm in ("ES", "OS"):
            ours = by_key.get(f"cfrkit-{algorithm.lower()}")
            theirs = by_key.get(f"openspiel-{algorithm.lower()}")
            if ours is None or theirs is None:
                continue
            speed = fmt_ratio(theirs.per_iteration() / ours.per_iteration())
            for t in target.values:
                a, b = ours.seconds(t), theirs.seconds(t)
                if math.isinf(a):
                    measured = "-" if math.isinf(b) else "<" + fmt_ratio(b / cap)
                elif math.isinf(b):
                    measured = ">" + fmt_ratio(cap / a)
                else:
                    measured = fmt_ratio(b / a)
                rows.append([game.spec.label, algorithm, f"{target.metric} <= {fmt_target(t)}",
                             cell(ours, t, cap), cell(theirs, t, cap), measured, speed])
    section("Same algorithm, OpenSpiel C++ vs cfrkit (vanilla rule): measured = OpenSpiel "
            "median seconds / cfrkit median seconds ('>': OpenSpiel's median is past the cap, a "
            "lower bound); per iteration = OpenSpiel s/it / cfrkit s/it",
            ["game", "algorithm", "target", "cfrkit", "OpenSpiel", "measured", "per iteration"],
            rows, out)

    rows = []
    for result in results:
        game, summaries = result["game"], result["summaries"]
        by_key = {s.spec.key: s for s in summaries}
        for algorithm in ("ES", "OS"):
            ours = by_key.get(f"cfrkit-{algorithm.lower()}")
            theirs = by_key.get(f"openspiel-{algorithm.lower()}")
            if ours is None or theirs is None:
                continue
            for count in args.agreement:
                (a, na), (b, nb) = ours.at(count), theirs.at(count)

                def spread(s: Summary) -> str:
                    values = [r.at[count] for r in s.runs if count in r.at]
                    return f"[{min(values):.3g}, {max(values):.3g}]" if values else ""
                rows.append([
                    game.spec.label, algorithm, fmt_it(count),
                    f"{a:.4g} {spread(ours)} ({na})" if na else "-",
                    f"{b:.4g} {spread(theirs)} ({nb})" if nb else "- (cap)",
                    f"{a / b:.3f}" if na and nb else "-",
                ])
    section("Agreement in distribution: median NashConv over the seeds at the same iteration "
            "counts (cfrkit vanilla vs OpenSpiel; [min, max] over the seeds); ratio = cfrkit / "
            "OpenSpiel",
            ["game", "algorithm", "iterations", "cfrkit (seeds)", "OpenSpiel (seeds)", "ratio"],
            rows, out)

    rows = []
    for result in results:
        game, target, summaries = result["game"], result["target"], result["summaries"]
        sampled = [s for s in summaries if s.spec.family == "cfrkit" and s.spec.sampled]
        full = [s for s in summaries if s.spec.family == "cfrkit" and not s.spec.sampled]
        if not sampled or not full:
            continue
        for t in target.values:
            a = min(sampled, key=lambda s: s.seconds(t))
            b = min(full, key=lambda s: s.seconds(t))
            sa, sb = a.seconds(t), b.seconds(t)
            if math.isinf(sa) and math.isinf(sb):
                verdict = "-"
            elif math.isinf(sa):
                verdict = "full pass"
            elif math.isinf(sb):
                verdict = "sampling"
            else:
                faster = "sampling" if sa < sb else "full pass"
                verdict = f"{faster} ({fmt_ratio(max(sa, sb) / min(sa, sb))})"
            rows.append([game.spec.label, f"{target.metric} <= {fmt_target(t)}",
                         f"{a.spec.label}: {cell(a, t, cap)}",
                         f"{b.spec.label}: {cell(b, t, cap)}", verdict])
    section("Sampling vs full passes in cfrkit: the fastest sampled trainer (any rule) against "
            "the fastest full-pass trainer, median seconds",
            ["game", "target", "fastest sampled", "fastest full pass", "faster"], rows, out)


def as_json(results: list[dict], args: argparse.Namespace) -> dict:
    payload = {"command": args.command, "versions": versions_line(), "seeds": args.seeds,
               "cap_seconds": args.cap, "growth": args.growth,
               "agreement_counts": list(args.agreement), "games": {}}
    for result in results:
        game, target = result["game"], result["target"]
        payload["games"][game.spec.key] = {
            "openspiel_name": game.spec.openspiel_name, "metric": target.metric,
            "targets": list(target.values), "histories": game.compiled.num_nodes,
            "infosets": game.compiled.num_infosets,
            "solvers": {
                s.spec.label: {
                    "family": s.spec.family, "algorithm": s.spec.algorithm,
                    "median_seconds": {f"{t:g}": (None if math.isinf(s.seconds(t))
                                                  else s.seconds(t)) for t in target.values},
                    "median_iterations": {f"{t:g}": (None if math.isinf(s.iterations(t))
                                                     else s.iterations(t))
                                          for t in target.values},
                    "seconds_per_iteration": s.per_iteration(),
                    "nodes_touched_per_iteration": (None if math.isnan(s.touched())
                                                    else s.touched()),
                    "runs": [r.as_json() for r in s.runs],
                }
                for s in result["summaries"]
            },
        }
    return payload


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    specs = solver_specs()
    parser = argparse.ArgumentParser(
        description=__doc__.splitlines()[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--games", default=",".join(DEFAULT_GAMES),
                        help=f"comma-separated, from {', '.join(DEFAULT_TARGETS)} "
                             f"(default: {','.join(DEFAULT_GAMES)})")
    parser.add_argument("--solvers", default=",".join(s.key for s in specs),
                        help="comma-separated, from " + ", ".join(s.key for s in specs)
                        + " (default: all)")
    parser.add_argument("--seeds", type=int, default=None,
                        help="seeds 0..N-1 per solver (default 5, --quick 3)")
    parser.add_argument("--cap", type=float, default=None,
                        help="training seconds per run (default 20, --quick 4)")
    parser.add_argument("--growth", type=float, default=1.15,
                        help="checkpoint spacing factor (default 1.15: 15%% apart)")
    parser.add_argument("--agreement", default=None,
                        help="iteration counts of the agreement table (default 1e4,1e5; "
                             "--quick 1e3,1e4)")
    parser.add_argument("--target", action="append", default=[], metavar="GAME=T1,T2",
                        help="replace a game's targets (its metric stays: exploitability for "
                             "Leduc and 2p Kuhn, NashConv for liar's dice and 3p Kuhn)")
    parser.add_argument("--quick", action="store_true",
                        help="--seeds 3 --cap 4 --agreement 1e3,1e4")
    parser.add_argument("--json", metavar="PATH", help="also write the measurements as JSON")
    args = parser.parse_args(argv)
    args.command = "python benchmarks/mccfr.py " + " ".join(shlex.quote(a) for a in
                                                            (sys.argv[1:] if argv is None
                                                             else argv))
    if args.seeds is None:
        args.seeds = 3 if args.quick else 5
    if args.cap is None:
        args.cap = 4.0 if args.quick else 20.0
    if args.agreement is None:
        args.agreement = "1e3,1e4" if args.quick else "1e4,1e5"
    args.agreement = tuple(sorted({int(float(c)) for c in args.agreement.split(",") if c}))
    if args.seeds < 1 or args.cap <= 0 or args.growth <= 1.0:
        parser.error("--seeds must be >= 1, --cap > 0 and --growth > 1")
    args.games = [g.strip() for g in args.games.split(",") if g.strip()]
    unknown = [g for g in args.games if g not in DEFAULT_TARGETS]
    if unknown:
        parser.error(f"unknown game(s) {unknown}; choose from {list(DEFAULT_TARGETS)}")
    by_key = {s.key: s for s in specs}
    chosen = [k.strip() for k in args.solvers.split(",") if k.strip()]
    unknown = [k for k in chosen if k not in by_key]
    if unknown:
        parser.error(f"unknown solver(s) {unknown}; choose from {list(by_key)}")
    args.specs = [by_key[k] for k in chosen]
    args.targets = dict(DEFAULT_TARGETS)
    for item in args.target:
        game, _, values = item.partition("=")
        if game not in DEFAULT_TARGETS or not values:
            parser.error(f"--target takes GAME=T1,T2 with GAME from {list(DEFAULT_TARGETS)}")
        base = DEFAULT_TARGETS[game]
        args.targets[game] = Target(base.metric, base.scale, tuple(sorted(
            {float(v) for v in values.split(",") if v}, reverse=True)))
    return args


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    if pyspiel is None:
        sys.exit("benchmarks/mccfr.py needs OpenSpiel (pip install open_spiel)")
    print(versions_line())
    print(args.command)
    kuhn = load_game(GAMES["kuhn2"], print).compiled
    print(f"OpenSpiel policy reader check on Kuhn: |pyspiel.nash_conv - cfrkit.nash_conv of the "
          f"policy as read| = {check_reader(kuhn):.1e} (ES and OS, 2,000 iterations)")
    results = []
    for key in args.games:
        game = load_game(GAMES[key], print)
        results.append(run_game(game, args.targets[key], args.specs, args, print))
    report(results, args, print)
    print("")
    print(args.command)
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(as_json(results, args), fh, indent=1)


if __name__ == "__main__":
    main()
