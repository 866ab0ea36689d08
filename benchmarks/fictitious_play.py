"""cfrkit's FictitiousPlay next to OpenSpiel's XFPSolver: NashConv per iteration, and speed.

Both run extensive-form fictitious play (Heinrich, Lanctot and Silver 2015, Algorithm 1) from
the uniform profile with step size 1/(t+1). At every iteration up to ``--iterations`` it
compares the two average policies (OpenSpiel's read back with
``cfrkit.openspiel.from_openspiel_policy``) and reports the first iteration at which they differ
at all; then NashConv at a few iterations (cfrkit's average measured by ``cfrkit.nash_conv``,
OpenSpiel's by OpenSpiel's python ``exploitability.nash_conv``) and the training time per
iteration of each, measured in the same process, one after the other, evaluation left out.

    python benchmarks/fictitious_play.py                       # Kuhn 2p and 3p, 100 iterations
    python benchmarks/fictitious_play.py --iterations 300 --games "kuhn_poker;leduc_poker"
"""

from __future__ import annotations

import argparse
import time

import numpy as np

import cfrkit
from cfrkit.openspiel import from_openspiel, from_openspiel_policy

try:
    from open_spiel.python.algorithms import exploitability
    from open_spiel.python.algorithms.fictitious_play import XFPSolver
except ImportError:  # pragma: no cover
    raise SystemExit("this benchmark needs OpenSpiel: pip install open_spiel") from None

REPORTED = (1, 10, 50, 100, 200, 300, 500, 1000)


def compare(name: str, iterations: int, block_iterations: int) -> None:
    game = from_openspiel(name)
    osg = game.openspiel_game
    ours = cfrkit.FictitiousPlay(game)
    cfrkit.nash_conv(game, ours.average_policy())  # compile (or load) the kernels first
    cfrkit.FictitiousPlay(game).iterate(1)
    theirs = XFPSolver(osg)
    first_difference = None
    largest = 0.0
    rows = []
    our_seconds = their_seconds = 0.0
    for t in range(1, iterations + 1):
        start = time.perf_counter()
        ours.iterate(1)
        our_seconds += time.perf_counter() - start
        start = time.perf_counter()
        theirs.iteration()
        their_seconds += time.perf_counter() - start
        tabular = theirs.average_policy().to_tabular()
        difference = float(np.max(np.abs(
            ours.average_policy().table - from_openspiel_policy(game, tabular).table
        )))
        largest = max(largest, difference)
        if difference > 0.0 and first_difference is None:
            first_difference = (t, difference)
        if t in REPORTED or t == iterations:
            rows.append((t, cfrkit.nash_conv(game, ours.average_policy()),
                         exploitability.nash_conv(osg, tabular)))
    # cfrkit's time per iteration in blocks, as it is normally run (one kernel call per block)
    block = cfrkit.FictitiousPlay(game)
    block.iterate(1)
    start = time.perf_counter()
    block.iterate(block_iterations)
    block_seconds = time.perf_counter() - start
    compiled = cfrkit.compile_game(game)
    print(f"\n{name}: {compiled.num_nodes} nodes, {compiled.num_infosets} infosets, "
          f"{iterations} iterations")
    if first_difference is None:
        print("  average policies identical (bit for bit) at every iteration")
    else:
        print(f"  first difference at iteration {first_difference[0]} "
              f"({first_difference[1]:.3g}); largest {largest:.3g}")
    print(f"  {'iteration':>9}  {'cfrkit NashConv':>16}  {'OpenSpiel NashConv':>18}")
    for t, mine, other in rows:
        print(f"  {t:>9}  {mine:>16.12f}  {other:>18.12f}")
    print(f"  time per iteration: cfrkit {our_seconds / iterations * 1e6:.1f} us "
          f"(iterate(1) each), {block_seconds / block_iterations * 1e6:.1f} us "
          f"(iterate({block_iterations})); "
          f"OpenSpiel XFPSolver {their_seconds / iterations * 1e3:.1f} ms")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--iterations", type=int, default=100)
    parser.add_argument("--block-iterations", type=int, default=10_000,
                        help="iterations of cfrkit's blocked timing run")
    parser.add_argument("--games", default="kuhn_poker;kuhn_poker(players=3)",
                        help="OpenSpiel game strings, separated by ';'")
    args = parser.parse_args()
    for name in filter(None, (g.strip() for g in args.games.split(";"))):
        compare(name, args.iterations, args.block_iterations)


if __name__ == "__main__":
    main()
