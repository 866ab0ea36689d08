"""Throughput of VanillaCFR on the built-in games, and the time of one exact NashConv.

Prints iterations/s and ns per node-visit, where one alternating iteration visits every node
once per player (node-visits = nodes x players). Measures; never asserts.

    python benchmarks/vanilla_throughput.py [--seconds 2]
"""

from __future__ import annotations

import argparse
import time

import cfrkit
from cfrkit import games


def builtin_games():
    found = [games.RockPaperScissors(), games.RPSLS(), games.KuhnPoker(), games.KuhnPoker(players=3)]
    if hasattr(games, "LeducPoker"):
        found.append(games.LeducPoker())
    return found


def measure(game, seconds: float) -> tuple[int, int, float, float, float]:
    compiled = cfrkit.compile_game(game)
    trainer = cfrkit.VanillaCFR(compiled).iterate(1)  # compile the kernels first
    batch = 1
    while True:  # grow the batch until one call takes a measurable time
        start = time.perf_counter()
        trainer.iterate(batch)
        elapsed = time.perf_counter() - start
        if elapsed > 0.05:
            break
        batch *= 4
    repeats = max(1, int(seconds / elapsed))
    start = time.perf_counter()
    trainer.iterate(batch * repeats)
    elapsed = time.perf_counter() - start
    iterations = batch * repeats
    visits = compiled.num_nodes * compiled.num_players * iterations
    policy = trainer.average_policy()
    cfrkit.nash_conv(compiled, policy)  # warm the evaluation kernels
    runs = 20
    start = time.perf_counter()
    for _ in range(runs):
        cfrkit.nash_conv(compiled, policy)
    nash_conv_time = (time.perf_counter() - start) / runs
    return compiled.num_nodes, iterations, iterations / elapsed, elapsed / visits * 1e9, nash_conv_time


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=2.0, help="time per game (default 2)")
    args = parser.parse_args()
    print(f"{'game':<22}{'nodes':>8}{'iterations':>12}{'iter/s':>14}{'ns/node-visit':>15}"
          f"{'NashConv time':>15}")
    for game in builtin_games():
        nodes, iterations, rate, ns, nc = measure(game, args.seconds)
        print(f"{game.name:<22}{nodes:>8}{iterations:>12}{rate:>14,.0f}{ns:>15.2f}"
              f"{nc * 1e6:>12.1f} µs")


if __name__ == "__main__":
    main()
