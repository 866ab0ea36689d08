"""Nodes reached by CFR with and without pruning on 2- and 3-player Kuhn poker.

Prints, after the same number of iterations, the nodes each trainer touched (every node a
kernel read or wrote), the reduction against vanilla CFR, the NashConv reached and the wall
time. Zero-reach and regret-based pruning are exact; the threshold row is the approximate
pruning of earlier CFR code, for comparison. Measures; never asserts.

    python benchmarks/pruning.py [--iterations 100000]
"""

from __future__ import annotations

import argparse
import time

import cfrkit
from cfrkit.games import KuhnPoker


def run(trainer, iterations: int) -> tuple[float, float]:
    trainer.iterate(1)  # compile the kernels outside the timing
    start = time.perf_counter()
    trainer.iterate(iterations - 1)
    elapsed = time.perf_counter() - start
    return elapsed, cfrkit.nash_conv(trainer.game, trainer.average_policy())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--iterations", type=int, default=100_000)
    args = parser.parse_args()
    rows = [
        ("pruning off (VanillaCFR)", lambda g: cfrkit.VanillaCFR(g)),
        ("zero-reach only", lambda g: cfrkit.PrunedCFR(g, regret_pruning=False)),
        ("zero-reach + regret-based", lambda g: cfrkit.PrunedCFR(g)),
        ("+ threshold 1e-3 (approx.)", lambda g: cfrkit.PrunedCFR(g, threshold=1e-3)),
    ]
    print(f"{args.iterations:,} iterations\n")
    print(f"{'game':<14}{'trainer':<28}{'nodes reached':>16}{'reduction':>11}"
          f"{'NashConv':>12}{'time':>9}")
    for game in (KuhnPoker(), KuhnPoker(players=3)):
        baseline = None
        for label, make in rows:
            trainer = make(game)
            elapsed, nash_conv = run(trainer, args.iterations)
            baseline = baseline or trainer.nodes_touched
            reduction = 1 - trainer.nodes_touched / baseline
            note = "" if label != "zero-reach + regret-based" or trainer.regret_pruning_active else " *"
            print(f"{game.name:<14}{label + note:<28}{trainer.nodes_touched:>16,}{reduction:>10.1%}"
                  f"{nash_conv:>12.3g}{elapsed:>8.2f}s")
        print()
    print("* regret-based pruning runs in two-player games only; with three players the row is "
          "zero-reach pruning alone (see cfrkit.PrunedCFR).")


if __name__ == "__main__":
    main()
