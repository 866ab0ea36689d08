"""Iterations and training seconds each solver needs to reach an exploitability target.

Every cfrkit trainer this cfrkit exports runs side by side, in one process, with OpenSpiel's
C++ ``CFRSolver`` and ``CFRPlusSolver``, OpenSpiel's C++ ``ExternalSamplingMCCFRSolver`` and
``OutcomeSamplingMCCFRSolver`` and LiteEFG's CFR, CFR+, DCFR and PCFR+ (the adapters of
``peers.py``, which also says how each peer is trained and evaluated), on the same tree:

- Kuhn (``kuhn_poker``) and Leduc (``leduc_poker``): exploitability (= NashConv / 2) <= 1e-3,
  1e-4 and 1e-5;
- 3-player Kuhn (``kuhn_poker(players=3)``): NashConv <= 1e-3 (LiteEFG's CFR+, DCFR and PCFR+
  graphs update players 1 and 2 only, so they are skipped there with a logged line).

How it measures, per solver and game:

1. setup: constructing the solver; first call: its very first ``step(1)`` (for cfrkit: the
   first ``iterate(1)`` of that trainer in this process, i.e. numba JIT or cache load, so it
   depends on which trainers ran before and share kernels). Neither is training time.
2. a search run on a fresh solver evaluates the target metric at every iteration up to 67,
   then at iteration counts ~3% apart: the reported iteration count is the first checkpoint at
   or below the target, within ~3% above the true first crossing (no refinement, for cfrkit
   either, so every solver is rounded the same way). Evaluation is timed apart and never
   counted as training. The run stops at the last target, or once training exceeds ``--cap``
   seconds (the cell then shows ``>cap``).
3. seconds = the median training time to the crossing iteration over reruns: fresh solvers
   trained straight to each crossing, in one call per target, without evaluating
   (``--repeats`` reruns of each cfrkit trainer, default 5; ``--peer-repeats`` of each slow
   peer, default 0), fewer once the runs so far took more than ``--cap`` seconds. Without a
   rerun the search run's training time is reported (``runs`` = 1): for the peers, which step
   one iteration per call anyway, the checkpoints cost nothing; cfrkit's calls take
   microseconds, so the checkpoint splits and evaluations would bias its search run. All the
   solvers are deterministic (cfrkit trainers taking a seed get seed=0); the first rerun's
   value is checked against the search run's.

The sampled solvers -- cfrkit's ``ExternalSamplingCFR`` and ``OutcomeSamplingCFR`` and
OpenSpiel's ``ExternalSamplingMCCFRSolver`` (simple averaging) and ``OutcomeSamplingMCCFRSolver``
(epsilon 0.6) -- run through the same steps with seed 0 (cfrkit's ``seed=0``, OpenSpiel's
``seed=0``): one seed, one search run. Their NashConv curves are noisy, so a crossing is that
seed's first checkpoint at or below the target, one draw of a random quantity (and the
crossings of cfrkit and OpenSpiel, whose random streams differ, are two independent draws);
for medians over seeds, agreement in distribution and the targets within MCCFR's reach, run
``benchmarks/mccfr.py``. A seed fixes every draw, so the reruns train to the same iterates
(the determinism check applies to them as to the rest). OpenSpiel's MCCFR policies are read
state by state (``peers.OpenSpielPolicyReader``; its one walk of the game is in the setup of
the first OpenSpiel MCCFR solver of each game). The targets here are mostly beyond
MCCFR within the cap (its error falls like 1/sqrt(iterations)): those cells show ``>cap``,
and the last column where the run stopped. ``--no-sampled`` leaves them out (the run and its
output are then those of the deterministic solvers alone, as before they were added); they add
about 4 x ``--cap`` seconds per game.

The last tables give, per game and target, the best cfrkit trainer's seconds against the
fastest peer's, among the deterministic solvers: ratio = peer seconds / cfrkit seconds (above
1: cfrkit is faster); and the same algorithm sampled by cfrkit and by OpenSpiel (ES against
ES, OS against OS, seed 0 each), where ``>`` marks a lower bound (OpenSpiel stopped at the cap).

Absolute times drift on a shared machine; the ratios are of solvers measured in the same run.
Iteration counts of two implementations of one algorithm match on Kuhn, but on Leduc regret
matching amplifies rounding (cfrkit's DiscountedCFR and LiteEFG's DCFR agree to 1e-13 for 30
iterations and differ by 1e-3 relative at 100), so their crossings of 1e-5 can lie far apart.
LiteEFG's CFR+ and PCFR+ also average differently (see ``peers.py``).

    python benchmarks/time_to_epsilon.py                  # Kuhn, Leduc, 3p Kuhn: ~25 minutes
    python benchmarks/time_to_epsilon.py --no-sampled     # without MCCFR: ~15 minutes
    python benchmarks/time_to_epsilon.py --quick          # --cap 10 --repeats 3: ~5 minutes
    python benchmarks/time_to_epsilon.py --games leduc --peers liteefg --json leduc.json

Measures; never asserts.
"""

from __future__ import annotations

import argparse
import itertools
import json
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TypeVar

from peers import (
    GAMES,
    SAMPLED_TRAINER_NAMES,
    TRAINER_NAMES,
    Entry,
    LoadedGame,
    Log,
    checkpoints,
    fmt_time,
    is_sampled,
    leg,
    liteefg_convention,
    load_game,
    print_table,
    solver_entries,
    versions_line,
)

import cfrkit

DEFAULT_GAMES = ("kuhn2", "leduc", "kuhn3")
TWO_PLAYER_TARGETS = (1e-3, 1e-4, 1e-5)  # exploitability
MULTI_PLAYER_TARGETS = (1e-3,)  # NashConv
GROWTH = 1.03  # checkpoints: every iteration up to 67, then ~3% apart

T = TypeVar("T")


@dataclass(frozen=True)
class Metric:
    """What the targets bound: exploitability (NashConv / 2) or NashConv itself."""

    name: str
    scale: float  # metric = scale x NashConv
    targets: tuple[float, ...]


def metric_for(compiled: cfrkit.CompiledGame, targets: tuple[float, ...] | None) -> Metric:
    """Exploitability for two players, NashConv otherwise; ``targets`` replace the defaults."""
    if compiled.num_players == 2:
        return Metric("exploitability", 0.5, targets or TWO_PLAYER_TARGETS)
    return Metric("NashConv", 1.0, targets or MULTI_PLAYER_TARGETS)


@dataclass
class Result:
    """One solver on one game."""

    name: str
    family: str
    setup: float
    first_call: float
    crossings: dict[float, int] = field(default_factory=dict)  # target -> iteration
    values: dict[float, float] = field(default_factory=dict)  # target -> metric at crossing
    search: dict[float, float] = field(default_factory=dict)  # target -> search-run seconds
    reruns: dict[float, list[float]] = field(default_factory=dict)  # target -> rerun seconds
    evaluation: float = 0.0  # seconds spent evaluating in the search run
    evaluations: int = 0
    last_iteration: int = 0
    last_value: float = float("nan")
    capped: bool = False

    def seconds(self, target: float) -> float | None:
        """Median training seconds to ``target`` (None if it was not reached)."""
        if target not in self.search:
            return None
        return statistics.median(self.reruns.get(target) or [self.search[target]])

    def runs(self) -> int:
        """How many timings the seconds are the median of (the search run when no rerun)."""
        if not self.search:
            return 0
        return max(1, max(len(r) for r in self.reruns.values()))

    def as_json(self) -> dict:
        return {
            "family": self.family, "setup_seconds": self.setup,
            "first_call_seconds": self.first_call,
            "targets": {
                fmt_target(t): {"iterations": self.crossings[t], "value": self.values[t],
                                "seconds": self.seconds(t), "search_seconds": self.search[t],
                                "rerun_seconds": self.reruns[t]}
                for t in self.crossings
            },
            "evaluation_seconds": self.evaluation, "evaluations": self.evaluations,
            "last_iteration": self.last_iteration, "last_value": self.last_value,
            "capped": self.capped,
        }


def timed(call: Callable[[], T]) -> tuple[T, float]:
    """``call()`` and the seconds it took."""
    start = time.perf_counter()
    value = call()
    return value, time.perf_counter() - start


def measure(entry: Entry, metric: Metric, cap: float, repeats: int, log: Log) -> Result:
    """Setup, first call, the search run and the timed reruns of one solver (see the module
    docstring)."""
    solver, setup = timed(entry.make)
    _, first_call = timed(lambda: solver.step(1))
    solver.step(8)  # warm up beyond the first call (numba dispatch, caches)
    del solver
    result = Result(entry.name, entry.family, setup, first_call)

    # search run: evaluated on the checkpoint schedule, evaluation off the training clock
    solver = entry.make()
    pending = sorted(metric.targets, reverse=True)
    done, trained = 0, 0.0
    wall_start = time.perf_counter()
    for checkpoint in checkpoints(GROWTH):
        start = time.perf_counter()
        solver.step(checkpoint - done)
        trained += time.perf_counter() - start
        done = checkpoint
        value, seconds = timed(lambda: metric.scale * solver.nash_conv())
        result.evaluation += seconds
        result.evaluations += 1
        result.last_iteration, result.last_value = done, value
        while pending and value <= pending[0]:
            target = pending.pop(0)
            result.crossings[target], result.values[target] = done, value
            result.search[target] = trained
        if not pending:
            break
        if trained > cap or time.perf_counter() - wall_start > 4 * cap:
            result.capped = True
            break
    result.reruns = {t: [] for t in result.search}
    if not result.crossings:
        return result

    # reruns: fresh solvers trained straight to each crossing, no evaluation
    spent = max(result.search.values())
    order = sorted(result.crossings, key=result.crossings.get)
    while len(result.reruns[order[0]]) < repeats and spent <= cap:
        solver = entry.make()
        done, elapsed = 0, 0.0
        for target in order:
            start = time.perf_counter()
            solver.step(result.crossings[target] - done)
            elapsed += time.perf_counter() - start
            done = result.crossings[target]
            result.reruns[target].append(elapsed)
        spent += elapsed
        if len(result.reruns[order[0]]) == 1:  # the same iterations must give the same value
            again = metric.scale * solver.nash_conv()
            expected = result.values[order[-1]]
            if abs(again - expected) > 1e-9 * max(1.0, abs(expected)):
                log(f"  {entry.name}: rerun gives {metric.name} {again:.6g} at {done:,} "
                    f"iterations, the search run {expected:.6g} (not deterministic)")
    return result


def fmt_target(target: float) -> str:
    """1e-03 rather than 0.001."""
    short = f"{target:.0e}"
    return short if float(short) == target else f"{target:.3g}"


def fmt_ratio(ratio: float) -> str:
    return f"{ratio:,.0f}x" if ratio >= 10 else f"{ratio:.2g}x"


def cell(result: Result, target: float, cap: float) -> str:
    """"<median seconds>, <iterations> it", or ">cap" when the run stopped before it."""
    seconds = result.seconds(target)
    if seconds is None:
        return f">{cap:g} s" if result.capped else "-"
    return f"{fmt_time(seconds)}, {result.crossings[target]:,} it"


def fastest(results: list[Result], target: float, cfrkit_family: bool) -> Result | None:
    """The cfrkit trainer (or the peer) with the fewest seconds to ``target``, if any got there."""
    reached = [r for r in results if (r.family == "cfrkit") == cfrkit_family
               and r.seconds(target) is not None]
    return min(reached, key=lambda r: r.seconds(target), default=None)


def ratio_rows(label: str, metric: Metric, results: list[Result], cap: float) -> list[list[str]]:
    """Per target: the best cfrkit trainer against the fastest peer (deterministic solvers)."""
    results = [r for r in results if not is_sampled(r.name)]
    rows = []
    for target in metric.targets:
        ours, peer = fastest(results, target, True), fastest(results, target, False)
        peers_ran = any(r.family != "cfrkit" for r in results)
        if ours is None:
            ratio = "-"
        elif peer is not None:
            ratio = fmt_ratio(peer.seconds(target) / ours.seconds(target))
        else:
            ratio = ">" + fmt_ratio(cap / ours.seconds(target)) if peers_ran else "-"
        rows.append([
            label, f"{metric.name} <= {fmt_target(target)}",
            "-" if ours is None else f"{ours.name}: {cell(ours, target, cap)}",
            ("-" if not peers_ran else f"none within {cap:g} s") if peer is None
            else f"{peer.name}: {cell(peer, target, cap)}",
            ratio,
        ])
    return rows


SAMPLED_PAIRS = (  # (algorithm, cfrkit trainer, OpenSpiel solver)
    ("ES", "cfrkit ExternalSamplingCFR", "OpenSpiel ExternalSamplingMCCFRSolver (C++)"),
    ("OS", "cfrkit OutcomeSamplingCFR", "OpenSpiel OutcomeSamplingMCCFRSolver (C++)"),
)


def sampled_ratio_rows(label: str, metric: Metric, results: list[Result],
                       cap: float) -> list[list[str]]:
    """Per target and sampling algorithm: cfrkit's trainer against OpenSpiel's (seed 0)."""
    by_name = {r.name: r for r in results}
    rows = []
    for algorithm, ours_name, theirs_name in SAMPLED_PAIRS:
        ours, theirs = by_name.get(ours_name), by_name.get(theirs_name)
        if ours is None or theirs is None:
            continue
        for target in metric.targets:
            a, b = ours.seconds(target), theirs.seconds(target)
            if a is None:
                ratio = "-"
            elif b is None:
                ratio = ">" + fmt_ratio(cap / a) if theirs.capped else "-"
            else:
                ratio = fmt_ratio(b / a)
            rows.append([label, algorithm, f"{metric.name} <= {fmt_target(target)}",
                         cell(ours, target, cap), cell(theirs, target, cap), ratio])
    return rows


def run_game(game: LoadedGame, args: argparse.Namespace, log: Log) -> tuple[list[str], dict]:
    """Measure every solver on one game; return its printed table (lines) and JSON."""
    compiled = game.compiled
    metric = metric_for(compiled, args.targets)
    log(game.describe())
    if leg is not None and "liteefg" in args.peers:
        theirs, ours = liteefg_convention(compiled)
        log(f"  LiteEFG's exploitability summed over players {theirs:.12g}; cfrkit's NashConv "
            f"of the policy LiteEFG exports {ours:.12g}")
    results = []
    for entry in solver_entries(compiled, args.peers, log, args.trainers):
        repeats = args.repeats if entry.family == "cfrkit" else args.peer_repeats
        try:
            result = measure(entry, metric, args.cap, repeats, log)
        except Exception as error:  # a broken solver costs its row, not the whole run
            log(f"  {entry.name}: failed ({type(error).__name__}: {error}), skipped")
            continue
        results.append(result)
        log(f"  {entry.name}: " + "; ".join(cell(result, t, args.cap) for t in metric.targets)
            + f" ({result.runs()} run{'s' * (result.runs() != 1)}; last {metric.name} "
            f"{result.last_value:.3g} at {result.last_iteration:,} it)")
    title = (f"{game.spec.label}: training time (median of runs) and iterations to "
             f"{metric.name} <= target; evaluation not counted")
    lines = [title]
    rows = [[r.name, fmt_time(r.setup), fmt_time(r.first_call),
             *(cell(r, t, args.cap) for t in metric.targets), str(r.runs()),
             f"{fmt_time(r.evaluation)} ({r.evaluations})",
             f"{r.last_value:.2g} at {r.last_iteration:,} it"] for r in results]
    print_table(["solver", "setup", "first call (JIT or cache load)",
                 *(f"<= {fmt_target(t)}" for t in metric.targets), "runs", "evaluation (count)",
                 f"last {metric.name}"], rows, lines.append)
    payload = {"metric": metric.name, "targets": list(metric.targets),
               "nodes": compiled.num_nodes, "players": compiled.num_players,
               "compile_seconds": game.compile_seconds,
               "solvers": {r.name: r.as_json() for r in results},
               "ratios": ratio_rows(game.spec.label, metric, results, args.cap),
               "sampled_ratios": sampled_ratio_rows(game.spec.label, metric, results, args.cap)}
    return lines, payload


def run(args: argparse.Namespace, out: Log = print) -> dict:
    """Measure every game in ``args.games``, print the tables, return the JSON payload."""
    results, tables, ratios, sampled_ratios = {}, [], [], []
    evaluator_warm = False
    for key in args.games:
        game = load_game(GAMES[key], out)
        if game is None:
            continue
        if not evaluator_warm:  # compile (or load) cfrkit's evaluator off every clock
            evaluator_warm = True
            uniform = cfrkit.Policy.uniform(game.compiled)
            start = time.perf_counter()
            cfrkit.nash_conv(game.compiled, uniform)
            seconds = time.perf_counter() - start
            out(f"cfrkit evaluator first call (JIT or cache load): {fmt_time(seconds)}")
        lines, payload = run_game(game, args, out)
        tables.append(lines)
        ratios.extend(payload["ratios"])
        sampled_ratios.extend(payload["sampled_ratios"])
        results[key] = payload
    out("")
    dense = next(v for v in itertools.count(1) if int(v * GROWTH) > v + 1)  # as checkpoints()
    out(f"Checkpoints: every iteration up to {dense}, then ~{(GROWTH - 1) * 100:.0f}% apart, so an "
        f"iteration count is at most ~{(GROWTH - 1) * 100:.0f}% above the first crossing. "
        f"Cap {args.cap:g} training seconds per solver and game. Seconds: median of up to "
        f"{args.repeats} reruns for cfrkit, {args.peer_repeats} for peers (fewer past the cap), "
        "else the search run's training time (runs = 1).")
    for lines in tables:
        out("")
        for line in lines:
            out(line)
    out("")
    among = " among the deterministic solvers" if sampled_ratios else ""
    out(f"Best cfrkit trainer vs fastest peer{among} (ratio = peer seconds / cfrkit seconds; "
        "above 1: cfrkit is faster)")
    out("")
    print_table(["game", "target", "best cfrkit", "fastest peer", "ratio"], ratios, out)
    if sampled_ratios:
        out("")
        out("MCCFR, the same algorithm in cfrkit and OpenSpiel, seed 0 each (one draw of a noisy "
            "crossing; medians over seeds: benchmarks/mccfr.py); ratio = OpenSpiel seconds / "
            "cfrkit seconds, '>': OpenSpiel stopped at the cap (a lower bound)")
        out("")
        print_table(["game", "algorithm", "target", "cfrkit", "OpenSpiel", "ratio"],
                    sampled_ratios, out)
    return results


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description=__doc__.splitlines()[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--games", default=",".join(DEFAULT_GAMES),
                        help="comma-separated, from " + ", ".join(GAMES)
                        + f" (default: {','.join(DEFAULT_GAMES)})")
    parser.add_argument("--cap", type=float, default=None,
                        help="training seconds per solver and game (default 60, --quick 10)")
    parser.add_argument("--repeats", type=int, default=None,
                        help="timed reruns per cfrkit trainer, median reported "
                             "(default 5, --quick 3)")
    parser.add_argument("--peer-repeats", type=int, default=0,
                        help="timed reruns per peer (default 0: the search run's time)")
    parser.add_argument("--peers", default="openspiel,openspiel-mccfr,liteefg",
                        help="peers to run: openspiel (CFR, CFR+), openspiel-mccfr (external "
                             "and outcome sampling, seed 0), liteefg (default all; '' for none)")
    parser.add_argument("--trainers", default=",".join(TRAINER_NAMES + SAMPLED_TRAINER_NAMES),
                        help="cfrkit trainers to run (default: every one cfrkit exports, the "
                             "sampled ones with seed 0)")
    parser.add_argument("--no-sampled", action="store_true",
                        help="leave out the sampled solvers (cfrkit's and OpenSpiel's MCCFR)")
    parser.add_argument("--targets", default=None,
                        help="comma-separated targets replacing the defaults (1e-3,1e-4,1e-5 "
                             "exploitability for 2 players, 1e-3 NashConv for more)")
    parser.add_argument("--liteefg-threads", type=int, default=None,
                        help="LiteEFG's native threads (default: LiteEFG's own, 1)")
    parser.add_argument("--quick", action="store_true", help="--cap 10 --repeats 3")
    parser.add_argument("--json", metavar="PATH", help="also write the measurements as JSON")
    args = parser.parse_args(argv)
    if args.cap is None:
        args.cap = 10.0 if args.quick else 60.0
    if args.repeats is None:
        args.repeats = 3 if args.quick else 5
    if args.repeats < 0 or args.peer_repeats < 0:
        parser.error("--repeats and --peer-repeats cannot be negative")
    args.games = [g.strip() for g in args.games.split(",") if g.strip()]
    unknown = [g for g in args.games if g not in GAMES]
    if unknown:
        parser.error(f"unknown game(s) {unknown}; choose from {list(GAMES)}")
    args.peers = {p.strip().lower() for p in args.peers.split(",") if p.strip()}
    args.trainers = [t.strip() for t in args.trainers.split(",") if t.strip()]
    if args.no_sampled:
        args.peers.discard("openspiel-mccfr")
        args.trainers = [t for t in args.trainers if t not in SAMPLED_TRAINER_NAMES]
    if args.targets is not None:
        args.targets = tuple(sorted({float(t) for t in args.targets.split(",") if t.strip()},
                                    reverse=True))
    return args


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    if args.liteefg_threads is not None and leg is not None:
        leg.set_threads(args.liteefg_threads)
    print(versions_line())
    results = run(args)
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(results, fh, indent=1)


if __name__ == "__main__":
    main()
