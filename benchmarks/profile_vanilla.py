"""Where a VanillaCFR iteration's time goes, loop by loop.

Times each piece of one player's pass on its own, many times in a numba loop, in ns per
node-visit (the unit of the other benchmarks): the forward loop, the backward loop and the
per-infoset work (average strategy and regret matching), next to the whole pass as
``iterate()`` runs it. Per node-visit the forward loop makes 5 loads and a store, the backward
loop 6 to 10 loads and 1 to 3 stores (more at the updating player's nodes): about 15 memory
operations, which at two to three loads a cycle bound a pass from below at roughly 5 to 7
cycles per node-visit. Measures; never asserts.

    python benchmarks/profile_vanilla.py [--game leduc|kuhn3|kuhn2]
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from numba import njit

import cfrkit
from cfrkit._kernels.regret import regret_matching
from cfrkit._kernels.traverse import accumulate_average, full_backward, full_forward
from cfrkit.games import KuhnPoker, LeducPoker

GAMES = {"leduc": LeducPoker, "kuhn3": lambda: KuhnPoker(players=3), "kuhn2": KuhnPoker}


@njit(cache=True)
def _forward(repeats, parent, edge_slot, edge_player, probs, reach):
    for k in range(repeats):
        full_forward(parent, edge_slot, edge_player, probs, reach, k % 2)


@njit(cache=True)
def _backward(repeats, parent, edge_slot, edge_player, edge_last, node_player, node_infoset,
              probs, reach, value, regret, baseline):
    for k in range(repeats):
        full_backward(parent, edge_slot, edge_player, edge_last, node_player, node_infoset,
                      probs, reach, value[k % 2], regret, baseline, k % 2)


@njit(cache=True)
def _per_infoset(repeats, start, parent_i, parent_slot, first_slot, num_actions, probs,
                 strategy_sum, own_reach, regret, locked):
    for k in range(repeats):
        p = k % 2
        accumulate_average(start[p], start[p + 1], parent_i, parent_slot, first_slot,
                           num_actions, probs, strategy_sum, own_reach, 1.0)
        regret_matching(regret, probs, first_slot, num_actions, locked, start[p], start[p + 1])


def timed(function, *args) -> float:
    function(1, *args)  # compile
    best = np.inf
    repeats = 1
    while True:
        start = time.perf_counter()
        function(repeats, *args)
        elapsed = time.perf_counter() - start
        if elapsed > 0.2:
            break
        repeats *= 2
    for _ in range(3):
        start = time.perf_counter()
        function(repeats, *args)
        best = min(best, time.perf_counter() - start)
    return best / repeats


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--game", choices=sorted(GAMES), default="leduc")
    args = parser.parse_args()
    trainer = cfrkit.VanillaCFR(GAMES[args.game]()).iterate(50)  # a realistic profile
    tree, ws = trainer.game.tree, trainer._ws
    nodes = tree.node_kind.shape[0]
    rows = [
        ("forward loop (reach)", timed(_forward, tree.node_parent, tree.edge_slot,
                                       tree.edge_player, ws.probs, ws.reach)),
        ("backward loop (values, regrets)", timed(
            _backward, tree.node_parent, tree.edge_slot, tree.edge_player, tree.edge_last,
            tree.node_player, tree.node_infoset, ws.probs, ws.reach, ws.value, ws.regret.copy(),
            ws.baseline)),
        ("average + regret matching", timed(
            _per_infoset, tree.player_infoset_start, tree.infoset_parent,
            tree.infoset_parent_slot, tree.infoset_first_slot, tree.infoset_num_actions,
            ws.probs.copy(), ws.strategy_sum.copy(), ws.own_reach, ws.regret.copy(), ws.locked)),
    ]
    start = time.perf_counter()
    trainer.iterate(200)
    whole = (time.perf_counter() - start) / 200 / tree.num_players
    print(f"{trainer.game.game.name}: {nodes} nodes, one player pass\n")
    print(f"{'piece':<34}{'ns/node-visit':>14}")
    for label, seconds in rows:
        print(f"{label:<34}{seconds / nodes * 1e9:>14.2f}")
    print(f"{'sum of the pieces':<34}{sum(s for _, s in rows) / nodes * 1e9:>14.2f}")
    print(f"{'whole pass inside iterate()':<34}{whole / nodes * 1e9:>14.2f}")


if __name__ == "__main__":
    main()
