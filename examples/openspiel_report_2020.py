"""Reproduce Bleukx & Bruynseraede, "Machine Learning Project: Report 2" (10 May 2020) with cfrkit.

The report studies agents for Kuhn and Leduc poker with OpenSpiel, measured by NashConv and
exploitability (NashConv / 2): extensive-form fictitious play (XFP) and its neural form NFSP,
CFR with regret matching, and two function-approximation variants of CFR, RCFR and Deep CFR.
This script runs the tabular ones in cfrkit -- CFR (``cfrkit.VanillaCFR``), XFP
(``cfrkit.FictitiousPlay``, the report's update rule of section 1.2) -- together with CFR+
and the newer regret rules (Discounted CFR, predictive CFR+, DCFR+, PDCFR+), and

1. prints exploitability at fixed iteration counts per game, with the report's numbers beside
   them (the stored report gives none: its Kuhn and Leduc sections list research questions
   only -- the script says so rather than invent any);
2. checks the report's definitions on a policy (``d_i``, NashConv = sum d_i, exploitability =
   NashConv / 2);
3. where OpenSpiel (``pyspiel``) is installed, runs OpenSpiel's own CFR, CFR+ (C++) and XFP
   (Python) -- the implementations the report used -- for a few iteration counts as a
   cross-check;
4. plots exploitability against iterations, log-log, one figure per game;
5. says which of the report's systems are neural (NFSP, RCFR with a network, Deep CFR) and out
   of cfrkit's scope.

    python examples/openspiel_report_2020.py [--quick] [--out DIR]

``--quick`` (or the environment variable ``CFRKIT_EXAMPLES_QUICK=1``) runs a small version in
a few seconds. Figures go to ``--out`` (default ``examples/output/openspiel_report_2020/``).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
import time
from pathlib import Path

from _common import _Tee, display_path, header  # examples/_common.py, beside this script
import matplotlib.pyplot as plt
import numpy as np

import cfrkit
import cfrkit.plot
from cfrkit.games import KuhnPoker, LeducPoker

QUICK_ENV = "CFRKIT_EXAMPLES_QUICK"

#: name -> (constructor, in the report?). CFR and XFP are the report's tabular algorithms;
#: CFR+ is OpenSpiel's other CFR solver; the rest are newer regret rules.
ALGORITHMS = {
    "CFR": (cfrkit.VanillaCFR, "section 1.3"),
    "XFP": (cfrkit.FictitiousPlay, "section 1.2"),
    "CFR+": (cfrkit.CFRPlus, "-"),
    "DCFR": (cfrkit.DiscountedCFR, "-"),
    "PCFR+": (cfrkit.PredictiveCFRPlus, "-"),
    "DCFR+": (cfrkit.DCFRPlus, "-"),
    "PDCFR+": (cfrkit.PDCFRPlus, "-"),
}

#: the report's systems and where they stand in cfrkit
SCOPE = [
    ("XFP (1.2)", "tabular",
     "cfrkit.FictitiousPlay: the report's update rule; OpenSpiel's XFPSolver bit for bit"),
    ("NFSP (1.2.1)", "neural",
     "out of scope: a DQN best response and an MLP average policy, trained from sampled play"),
    ("CFR (1.3)", "tabular",
     "cfrkit.VanillaCFR: regret matching, eq. (5); OpenSpiel's CFRSolver iterate for iterate"),
    ("RCFR (1.3.1)", "neural*",
     ("out of scope: regrets from a regressor (the report: a feed-forward network); with an "
      "exact tabular regressor it is CFR")),
    ("Deep CFR (1.3.2)", "neural",
     ("out of scope: value and policy networks trained on MCCFR samples; its sampler alone is "
      "cfrkit.ExternalSamplingCFR")),
    ("ensemble (3)", "-", "a question in the report, with no method given: not reproduced"),
]


def grid(largest: int) -> list[int]:
    """1, 2, 5, 10, 20, 50, ... up to ``largest`` (included)."""
    points, decade = [], 1
    while decade <= largest:
        points += [m * decade for m in (1, 2, 5) if m * decade <= largest]
        decade *= 10
    if points[-1] != largest:
        points.append(largest)
    return points


def run(name: str, game, checkpoints: list[int]):
    """Train one algorithm through ``checkpoints``: (the curve as a SolveRecord, for
    cfrkit.plot.convergence, exploitability at every checkpoint; the trainer)."""
    trainer = ALGORITHMS[name][0](game)
    trainer.iterate(1)  # compiles (once per machine: numba caches it), outside the clock
    iterations, seconds, values, spent, evaluating = [], [], [], 0.0, 0.0
    for target in checkpoints:
        start = time.perf_counter()
        trainer.iterate(target - trainer.iteration)
        spent += time.perf_counter() - start
        start = time.perf_counter()
        values.append(cfrkit.nash_conv(game, trainer.average_policy()))
        evaluating += time.perf_counter() - start
        iterations.append(trainer.iteration)
        seconds.append(spent)
    nash_conv = np.array(values)
    return cfrkit.SolveRecord(
        trainer=name, game=repr(game), iterations=np.array(iterations, dtype=np.int64),
        seconds=np.array(seconds), training_seconds=np.array(seconds), nash_conv=nash_conv,
        exploitability=nash_conv / 2, stopped="max_iterations", evaluation_seconds=evaluating,
    ), trainer


def openspiel_points(name: str, game_name: str, points: list[int]) -> dict[int, float] | None:
    """Exploitability of OpenSpiel's own solver after each of ``points`` iterations, or None
    without OpenSpiel. CFR and CFR+ are its C++ solvers, XFP its Python XFPSolver."""
    try:
        import pyspiel
        from open_spiel.python.algorithms import exploitability, fictitious_play
    except ImportError:
        return None
    game = pyspiel.load_game(game_name)
    out, done = {}, 0
    if name == "XFP":
        solver = fictitious_play.XFPSolver(game)
        for n in points:
            for _ in range(n - done):
                solver.iteration()
            done = n
            out[n] = exploitability.exploitability(game, solver.average_policy())
        return out
    solver = {"CFR": pyspiel.CFRSolver, "CFR+": pyspiel.CFRPlusSolver}[name](game)
    for n in points:
        for _ in range(n - done):
            solver.evaluate_and_update_policy()
        done = n
        out[n] = pyspiel.exploitability(game, solver.average_policy())
    return out


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true",
                        help=f"a small run of a few seconds (also: {QUICK_ENV}=1)")
    parser.add_argument("--out", type=Path, default=None, help="folder for the figures")
    args = parser.parse_args(argv)
    quick = args.quick or os.environ.get(QUICK_ENV, "") not in ("", "0")
    out = args.out or Path(__file__).resolve().parent / "output" / Path(__file__).stem
    out.mkdir(parents=True, exist_ok=True)
    args.quick = quick
    with open(out / "output.txt", "w") as log, contextlib.redirect_stdout(_Tee(sys.stdout, log)):
        print(header(Path(__file__).stem, args))
        _reproduce(out, quick)


def _reproduce(out: Path, quick: bool) -> None:
    """Print the comparison and write the figures into ``out``."""

    # game -> (cfrkit game, OpenSpiel name, iterations, OpenSpiel cross-check points per solver)
    if quick:
        games = {
            "Kuhn": (KuhnPoker(), "kuhn_poker", 1000, {"CFR": [1, 10, 100], "CFR+": [1, 10, 100],
                                                       "XFP": [1, 10]}),
            "Leduc": (LeducPoker(), "leduc_poker", 100, {"CFR": [1, 2], "CFR+": [1, 2]}),
        }
    else:
        games = {
            "Kuhn": (KuhnPoker(), "kuhn_poker", 10**6,
                     {"CFR": [1, 10, 100, 1000], "CFR+": [1, 10, 100, 1000],
                      "XFP": [1, 10, 100, 1000]}),
            "Leduc": (LeducPoker(), "leduc_poker", 10**5,
                      {"CFR": [1, 10, 100, 1000], "CFR+": [1, 10, 100, 1000],
                       "XFP": [1, 10, 30]}),
        }

    print("Reproducing: I. Bleukx and Q. Bruynseraede, 'Machine Learning Project: Report 2' "
          "(10 May 2020), Kuhn and Leduc poker with OpenSpiel")
    print(f"mode: {'quick' if quick else 'full'}; iterations: "
          + ", ".join(f"{g} {spec[2]:,}" for g, spec in games.items()) + "\n")

    print("== What the report gives ==")
    print("Definitions (section 1.1): d_i(pi) = u_i(pi_i^b, pi_-i) - u_i(pi); NashConv = sum_i "
          "d_i; exploitability = NashConv / 2 in two-player zero-sum games.")
    print("Algorithms (sections 1.2-1.3): XFP and NFSP; CFR with regret matching, RCFR, Deep CFR.")
    print("Numbers: none. Sections 2 (Kuhn poker) and 3 (Leduc poker) of the stored report list "
          "research questions only -- no table, figure, final exploitability, iteration count or "
          "network size; the appendix 'Time spent' is empty. The 'report' column below is "
          "therefore empty, and the comparison that can be made is with OpenSpiel's own solvers, "
          "the implementations the report used.\n")
    print(f"{'system':<18}{'kind':<10}in cfrkit")
    for system, kind, where in SCOPE:
        print(f"{system:<18}{kind:<10}{where}")
    print("(* RCFR with the report's neural regressor. CFR+, DCFR, PCFR+, DCFR+ and PDCFR+ are "
          "not in the report: CFR+ is OpenSpiel's other CFR solver, the rest newer regret rules.)")

    records_by_game = {}
    for label, (game, os_name, iterations, os_points) in games.items():
        compiled = cfrkit.compile_game(game)
        print(f"\n== {label} poker: {game!r}, {compiled.num_nodes:,} nodes, "
              f"{compiled.num_infosets} infosets ==")
        checkpoints = grid(iterations)
        records, trainers = {}, {}
        for name in ALGORITHMS:
            records[name], trainers[name] = run(name, game, checkpoints)
        records_by_game[label] = records
        shown = [n for n in (10, 100, 1000, 10**4, 10**5, 10**6) if n <= iterations]
        print("Exploitability (NashConv / 2) of the average policy after N iterations:")
        print(f"{'algorithm':<9}{'report':>8}" + "".join(f"{f'{n:,}':>11}" for n in shown)
              + f"{'seconds':>9}   {'in report'}")
        for name, record in records.items():
            values = dict(zip(record.iterations.tolist(), record.exploitability.tolist()))
            print(f"{name:<9}{'-':>8}" + "".join(f"{values[n]:>11.2e}" for n in shown)
                  + f"{record.training_seconds[-1]:>9.2f}   {ALGORITHMS[name][1]}")
        print("(report: '-' = not given; seconds: training time on this shared 2-core machine, "
              "evaluation excluded)")
        targets = (1e-2, 1e-3, 1e-4, 1e-5)
        print("Iterations (of the grid 1, 2, 5, 10, ...) until exploitability first reaches:")
        print(f"{'algorithm':<9}" + "".join(f"{t:>11.0e}" for t in targets))
        for name, record in records.items():
            cells = []
            for t in targets:
                hit = np.flatnonzero(record.exploitability <= t)
                text = f"{int(record.iterations[hit[0]]):,}" if hit.size else f">{iterations:,}"
                cells.append(f"{text:>11}")
            print(f"{name:<9}" + "".join(cells))

        # the report's definitions, on XFP's final policy
        policy = trainers["XFP"].average_policy()
        ev = cfrkit.evaluate(game, policy)
        print(f"Definitions on XFP's policy after {trainers['XFP'].iteration:,} iterations: "
              f"d_1 = {ev.player_improvements[0]:.6e}, d_2 = {ev.player_improvements[1]:.6e}, "
              f"NashConv = {ev.nash_conv:.6e} (sum {sum(ev.player_improvements):.6e}), "
              f"exploitability = {ev.exploitability:.6e} = NashConv / 2 "
              f"({ev.nash_conv / 2:.6e}); values {ev.values[0]:+.6f} / {ev.values[1]:+.6f}.")

        # OpenSpiel cross-check
        print("OpenSpiel cross-check (its C++ CFRSolver / CFRPlusSolver, its Python XFPSolver; "
              "each side scored by its own exploitability code):")
        cross = {}
        print(f"  {'solver':<7}{'iterations':>10}{'OpenSpiel':>16}{'cfrkit':>16}{'difference':>12}")
        for name, points in os_points.items():
            start = time.perf_counter()
            theirs = openspiel_points(name, os_name, points)
            elapsed = time.perf_counter() - start
            if theirs is None:
                print("  pyspiel is not installed: skipped (pip install open_spiel)")
                break
            cross[name] = theirs
            ours = run(name, game, points)[0]
            mine = dict(zip(ours.iterations.tolist(), ours.exploitability.tolist()))
            for n in points:
                print(f"  {name:<7}{n:>10,}{theirs[n]:>16.10f}{mine[n]:>16.10f}"
                      f"{abs(theirs[n] - mine[n]):>12.1e}")
            worst = max(abs(theirs[n] - mine[n]) for n in points)
            if worst > 1e-9:
                first = next(n for n in points if abs(theirs[n] - mine[n]) > 1e-9)
                print(f"  {'':<7}equal to 1e-9 through {points[points.index(first) - 1]:,} "
                      "iterations, then drifting apart, as two correct implementations do on "
                      "long Leduc runs: last-bit rounding differences grow under regret "
                      "matching, and faster under regret matching+, whose floor at zero can "
                      "switch an action on or off on a last-bit difference")
            print(f"  {'':<7}({elapsed:.1f} s for OpenSpiel's {name})")

        fig, ax = plt.subplots(figsize=(7, 4.8), layout="constrained")
        cfrkit.plot.convergence(list(records.values()), ax, x="iterations",
                                metric="exploitability", labels=list(records),
                                title=f"{label} poker: exploitability of the average policy",
                                floor=1e-15)
        for i, (name, theirs) in enumerate(cross.items()):
            ax.plot(list(theirs), [max(v, 1e-15) for v in theirs.values()], linestyle="none",
                    marker="x", markersize=8, color=f"C{list(ALGORITHMS).index(name)}",
                    label=f"OpenSpiel {name}")
        ax.legend(fontsize="small", ncols=2)
        fig.savefig(out / f"exploitability_{label.lower()}.png", dpi=100)
        plt.close(fig)

    print("\n== Summary ==")
    for label, records in records_by_game.items():
        final = {name: r.exploitability[-1] for name, r in records.items()}
        best = min(final, key=final.get)
        last = int(next(iter(records.values())).iterations[-1])
        print(f"{label}: after {last:,} iterations, exploitability "
              + ", ".join(f"{n} {v:.1e}" for n, v in final.items()) + f"; lowest: {best}.")
    print(f"figures: {', '.join(sorted(p.name for p in out.glob('*.png')))} in {display_path(out)}")


if __name__ == "__main__":
    main()
