"""Nodes reached by CFR with and without pruning, and what that saves in wall time.

Prints, after the same number of iterations, the nodes each trainer touched (every node a
kernel read or wrote), the reduction against vanilla CFR, the NashConv reached, the wall time
and the time per iteration. Zero-reach and regret-based pruning are exact; the threshold row is
approximate, for comparison. Measures; never asserts.

    python benchmarks/pruning.py                                  # Kuhn 2p and 3p, 10^5 iterations
    python benchmarks/pruning.py --games liars_dice --iterations 100   # needs the openspiel extra
"""

from __future__ import annotations

import argparse
import time

import cfrkit
from cfrkit.games import KuhnPoker, LeducPoker


def load(name: str) -> cfrkit.CompiledGame:
    """A built-in game by short name, or any OpenSpiel game by its name (openspiel extra)."""
    builtin = {"kuhn2": KuhnPoker, "kuhn3": lambda: KuhnPoker(players=3), "leduc": LeducPoker}
    if name in builtin:
        return cfrkit.compile_game(builtin[name]())
    from cfrkit.openspiel import from_openspiel

    return cfrkit.compile_game(from_openspiel(name))


def run(trainer, iterations: int) -> tuple[float, float]:
    trainer.iterate(1)  # compile the kernels outside the timing
    start = time.perf_counter()
    trainer.iterate(iterations - 1)
    elapsed = time.perf_counter() - start
    return elapsed / (iterations - 1), cfrkit.nash_conv(trainer.game, trainer.average_policy())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--iterations", type=int, default=100_000)
    parser.add_argument("--games", default="kuhn2,kuhn3",
                        help="kuhn2, kuhn3, leduc or any OpenSpiel game name (default kuhn2,kuhn3)")
    args = parser.parse_args()
    rows = [
        ("pruning off (VanillaCFR)", lambda g: cfrkit.VanillaCFR(g)),
        ("zero-reach only", lambda g: cfrkit.PrunedCFR(g, regret_pruning=False)),
        ("zero-reach + regret-based", lambda g: cfrkit.PrunedCFR(g)),
        ("+ threshold 1e-3 (approx.)", lambda g: cfrkit.PrunedCFR(g, threshold=1e-3)),
    ]
    print(f"{args.iterations:,} iterations (times exclude the first, which compiles)\n")
    print(f"{'game':<16}{'trainer':<28}{'nodes reached':>16}{'reduction':>11}"
          f"{'NashConv':>12}{'time':>9}{'per iteration':>15}")
    for name in [g.strip() for g in args.games.split(",") if g.strip()]:
        game = load(name)
        baseline = None
        for label, make in rows:
            trainer = make(game)
            per_iteration, nash_conv = run(trainer, args.iterations)
            baseline = baseline or trainer.nodes_touched
            reduction = 1 - trainer.nodes_touched / baseline
            note = "" if label != "zero-reach + regret-based" or trainer.regret_pruning_active else " *"
            print(f"{name:<16}{label + note:<28}{trainer.nodes_touched:>16,}{reduction:>10.1%}"
                  f"{nash_conv:>12.3g}{per_iteration * (args.iterations - 1):>8.2f}s"
                  f"{per_iteration * 1e3:>12.3f} ms")
        print()
    print("* regret-based pruning runs in two-player games only; with three players the row is "
          "zero-reach pruning alone (see cfrkit.PrunedCFR).")


if __name__ == "__main__":
    main()
