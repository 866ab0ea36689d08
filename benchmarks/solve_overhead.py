"""What solve()'s NashConv checks cost: the share of a run's wall time spent evaluating.

``Trainer.solve`` checks the average policy's NashConv at iterations that depend on the run
alone (each at least 10 % after the last, and far enough apart that an evaluation costs about a
ninth of the training between checks). This runs ``solve`` on the built-in games with a few
trainers, to a target and to a budget, and prints the number of checks and the time they took
next to the training time. Measures; never asserts.

    python benchmarks/solve_overhead.py
"""

from __future__ import annotations

import argparse
import os

os.environ.setdefault("CFRKIT_QUIET", "1")

import cfrkit  # noqa: E402
from cfrkit.games import KuhnPoker, LeducPoker, RockPaperScissors  # noqa: E402

RUNS = (
    # (game, trainer, limits)
    (RockPaperScissors(), cfrkit.CFRPlus, dict(max_iterations=100_000)),
    (KuhnPoker(), cfrkit.CFRPlus, dict(target_nash_conv=1e-5, max_iterations=10**6)),
    (KuhnPoker(players=3), cfrkit.DCFRPlus, dict(max_iterations=20_000)),
    (LeducPoker(), cfrkit.DiscountedCFR, dict(target_nash_conv=1e-4, max_iterations=10**6)),
    (LeducPoker(), cfrkit.DCFRPlus, dict(target_nash_conv=2e-5, max_iterations=10**6)),
    (LeducPoker(), cfrkit.PDCFRPlus, dict(max_iterations=64_000)),
    (LeducPoker(), cfrkit.PrunedCFR, dict(max_iterations=5_000)),
)


def _label(game) -> str:
    return f"{type(game).__name__}({game.num_players} players)"


def main() -> None:
    argparse.ArgumentParser(description=__doc__.splitlines()[0]).parse_args()
    print(f"{'game':<28} {'trainer':<14} {'stopped':<15} {'iterations':>10} {'checks':>6} "
          f"{'training':>10} {'evaluating':>10} {'share':>6}")
    for game, trainer_class, limits in RUNS:
        trainer_class(game).solve(max_iterations=1)  # load or compile every kernel first
        record = trainer_class(game).solve(**limits)
        training = float(record.training_seconds[-1])
        evaluating = record.evaluation_seconds
        share = evaluating / (training + evaluating)
        print(f"{_label(game):<28} {trainer_class.__name__:<14} {record.stopped:<15} "
              f"{int(record.iterations[-1]):>10,} {len(record.iterations):>6} "
              f"{training:>9.3f}s {evaluating:>9.3f}s {share:>6.1%}")


if __name__ == "__main__":
    main()
