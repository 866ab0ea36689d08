"""Result-table learning (Dave Computes, 2019) against CFR+ at the same wall time.

For each game, one ResultTableLearner plays 10^5, 10^6, ... self-play games (cumulative, one
learner); after each milestone this prints the NashConv of its recommended strategy
(``average_policy()``: the choice frequencies), its training seconds and games per second,
two diagnostics -- "no-explore": the same frequencies with the expected exploring choices
taken out; "greedy NC": the pure policy of the current greedy choices -- and then CFR+
(cfrkit.CFRPlus) trained for the same number of seconds: its iterations and the NashConv of its
average policy. Training time only (evaluation is outside the clocks; both
compiled before timing). Measures; never asserts.

    python benchmarks/result_table.py [--games kuhn leduc] [--max-games 100000000]
                                      [--explore 0.01] [--seeds 1 2]
"""

from __future__ import annotations

import argparse
import time

import numpy as np

import cfrkit
from cfrkit.games import KuhnPoker, LeducPoker
from cfrkit.trainers.base import normalise_rows

GAMES = {"kuhn": KuhnPoker, "leduc": LeducPoker}


def cfr_plus_for(game, seconds: float, trainer=None, spent: float = 0.0):
    """CFR+ trained (cumulatively) until ``seconds`` of training: (trainer, seconds spent)."""
    if trainer is None:
        trainer = cfrkit.CFRPlus(game)
        trainer._warm_up()  # compile outside the clock (runs no iteration)
    while spent < seconds:
        per = spent / trainer.iteration if trainer.iteration else None
        # half the time left per chunk: the chunks shrink as the target nears, so the
        # overshoot is about one small chunk
        n = 1 if per is None else max(1, int(0.5 * (seconds - spent) / max(per, 1e-9)))
        start = time.perf_counter()
        trainer.iterate(n)
        spent += time.perf_counter() - start
    return trainer, spent


def without_exploration(learner) -> cfrkit.Policy:
    """A diagnostic, not the learner's output: the choice frequencies with the expected
    exploring choices taken out (``n(I, a) - explore N(I) / |A(I)|``, floored at 0,
    renormalised; uniform where nothing is left), an estimate of how often the greedy rule
    itself chose each action."""
    tree = learner.game.tree
    games = learner.table_arrays()[0].astype(float)
    totals = np.repeat(np.add.reduceat(games, tree.infoset_first_slot), tree.infoset_num_actions)
    counts = np.repeat(tree.infoset_num_actions, tree.infoset_num_actions)
    greedy = np.maximum(games - learner.explore * totals / counts, 0.0)
    return cfrkit.Policy(learner.game, normalise_rows(learner.game, greedy))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", nargs="+", default=list(GAMES), choices=list(GAMES))
    parser.add_argument("--max-games", type=int, default=10**8)
    parser.add_argument("--explore", type=float, default=0.01)
    parser.add_argument("--seeds", type=int, nargs="+", default=[1])
    args = parser.parse_args()
    milestones = [10**k for k in range(5, 20) if 10**k <= args.max_games]
    for name in args.games:
        game = GAMES[name]()
        print(f"\n{game!r}, explore={args.explore}")
        print(f"{'seed':>5}{'games':>13}{'seconds':>9}{'games/s':>13}{'NashConv':>11}"
              f"{'no-explore':>11}{'greedy NC':>11}   {'CFR+ iters':>11}{'seconds':>9}{'NashConv':>11}")
        for seed in args.seeds:
            learner = cfrkit.ResultTableLearner(game, explore=args.explore, seed=seed)
            learner._run(0)  # compile outside the clock (plays no game)
            learner._warm = True
            cfr, cfr_spent = None, 0.0
            played, spent = 0, 0.0
            for target in milestones:
                start = time.perf_counter()
                learner.iterate(target - played)
                spent += time.perf_counter() - start
                played = target
                nash_conv = cfrkit.nash_conv(game, learner.average_policy())
                greedy = cfrkit.nash_conv(game, learner.greedy_policy())
                explored_out = cfrkit.nash_conv(game, without_exploration(learner))
                cfr, cfr_spent = cfr_plus_for(game, spent, cfr, cfr_spent)
                cfr_nc = cfrkit.nash_conv(game, cfr.average_policy())
                print(f"{seed:>5}{target:>13,}{spent:>9.2f}{target / spent:>13,.0f}"
                      f"{nash_conv:>11.2e}{explored_out:>11.2e}{greedy:>11.2e}   {cfr.iteration:>11,}{cfr_spent:>9.2f}"
                      f"{cfr_nc:>11.2e}", flush=True)


if __name__ == "__main__":
    main()
