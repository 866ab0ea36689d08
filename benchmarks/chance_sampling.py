"""A 2018 C++ report's headline: 10^7 chance-sampled CFR iterations of three-player Kuhn.

The 2018 C++ code took 64.2 s optimised (193.2 s unoptimised) for 10^7 iterations, each one
sampled deal walked once for all players (about 25 nodes; 2.5e8 nodes in all). This prints
cfrkit's time, nodes touched and the NashConv reached for each of ChanceSampledCFR's iteration
semantics. The time is wall-clock; the CPU time of the running thread is printed next to it,
since on a shared machine the wall clock also counts the time other processes held the core
(the two agree on an idle one). Each semantics runs in a process of its own, as a user runs
one trainer per process, so that none pays for what an earlier one left in the process.
Measures; never asserts.

    python benchmarks/chance_sampling.py [--iterations 10000000]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time

import cfrkit
from cfrkit.games import KuhnPoker

REFERENCE_SECONDS = 64.2  # for 10^7 iterations; scaled to --iterations


VARIANTS = [
    ("simultaneous, one sample (as in 2018)", dict(alternating=False)),
    ("alternating, one sample (default)", dict()),
    ("alternating, sample per player", dict(sample_per_player=True)),
]


def run(label: str, options: dict, iterations: int, seed: int) -> str:
    """One row of the table: ``iterations`` iterations of one semantics, timed."""
    game = KuhnPoker(players=3)
    trainer = cfrkit.ChanceSampledCFR(game, seed=seed, **options)
    trainer.iterate(1)  # compile outside the timing
    first_nodes = trainer.nodes_touched
    start, cpu = time.perf_counter(), time.thread_time()
    trainer.iterate(iterations - 1)
    elapsed, cpu = time.perf_counter() - start, time.thread_time() - cpu
    nash_conv = cfrkit.nash_conv(game, trainer.average_policy())
    timed = iterations - 1  # the rates are of the timed iterations only
    touched = trainer.nodes_touched - first_nodes
    return (f"{label:<40}{elapsed:>8.2f}s{cpu:>8.2f}s{timed / elapsed:>13,.0f}"
            f"{trainer.nodes_touched:>16,}{elapsed / touched * 1e9:>9.2f}"
            f"{nash_conv:>11.2e}{REFERENCE_SECONDS * timed / 1e7 / elapsed:>12.1f}x")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--iterations", type=int, default=10_000_000)
    parser.add_argument("--seed", type=int, default=2018)
    parser.add_argument("--variant", type=int, help=argparse.SUPPRESS)  # one row, this process
    args = parser.parse_args()
    if args.variant is not None:
        print(run(*VARIANTS[args.variant], args.iterations, args.seed))
        return
    print(f"three-player Kuhn poker, {args.iterations:,} chance-sampled iterations\n")
    print(f"{'semantics':<40}{'time':>9}{'cpu':>9}{'iter/s':>13}{'nodes touched':>16}"
          f"{'ns/node':>9}{'NashConv':>11}{'vs 2018 C++':>13}")
    for k in range(len(VARIANTS)):
        out = subprocess.run(
            [sys.executable, __file__, "--iterations", str(args.iterations), "--seed",
             str(args.seed), "--variant", str(k)],
            check=True, capture_output=True, text=True,
        ).stdout
        print(out.strip().splitlines()[-1])


if __name__ == "__main__":
    main()
