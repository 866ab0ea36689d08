"""Where a VanillaCFR iteration's time goes, loop by loop.

Times each piece of one player's pass many times in a numba loop, in ns per node-visit (the
unit of the other benchmarks): the forward loop, the backward loop (as the pass minus the
forward loop) and the
per-infoset update (average strategy, folding the instantaneous regrets in, regret matching),
next to the whole pass as ``iterate()`` runs it. Per node-visit the forward loop makes 5 loads and a store, the backward
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
from cfrkit._kernels.full_pass import full_backward, full_forward
from cfrkit._kernels.update import update_player
from cfrkit.games import KuhnPoker, LeducPoker

GAMES = {"leduc": LeducPoker, "kuhn3": lambda: KuhnPoker(players=3), "kuhn2": KuhnPoker}


@njit(cache=True, _nrt=False)
def _forward(repeats, tree, state, scratch):
    for k in range(repeats):
        full_forward(tree.node_parent, tree.edge_slot, tree.edge_player, state.probs,
                     scratch.reach, k % 2)


@njit(cache=True, _nrt=False)
def _pass(repeats, tree, state, scratch):
    for k in range(repeats):
        full_forward(tree.node_parent, tree.edge_slot, tree.edge_player, state.probs,
                     scratch.reach, k % 2)
        full_backward(tree, state, scratch, k % 2)


@njit(cache=True, _nrt=False)
def _per_infoset(repeats, tree, state, scratch):
    for k in range(repeats):
        update_player(tree, state, scratch, k % 2, 1.0, 1.0, 1.0, -np.inf, False)


def _iterate(repeats, trainer):
    trainer.iterate(repeats)


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
    tree = trainer.game.tree
    nodes = tree.node_kind.shape[0]
    # the pieces run on copies, so the trainer's own run below is not disturbed
    state = trainer._state._replace(**{f: a.copy() for f, a in trainer._state._asdict().items()})
    scratch = trainer._scratch._replace(
        **{f: a.copy() for f, a in trainer._scratch._asdict().items()})
    forward = timed(_forward, tree, state, scratch)
    # the backward loop is timed after its forward loop, as it runs: timed alone it measured
    # 60-80% slower than inside the pass (the cause was not found)
    rows = [
        ("forward loop (reach)", forward),
        ("backward loop (values, slot sums)", timed(_pass, tree, state, scratch) - forward),
        ("update (average, fold, regret matching)", timed(_per_infoset, tree, state, scratch)),
    ]
    # timed like the pieces (one call of 200 iterations was 0.3 ms on Kuhn: call overhead)
    whole = timed(_iterate, trainer) / tree.num_players
    print(f"{trainer.game.game.name}: {nodes} nodes, one player pass\n")
    print(f"{'piece':<42}{'ns/node-visit':>14}")
    for label, seconds in rows:
        print(f"{label:<42}{seconds / nodes * 1e9:>14.2f}")
    print(f"{'sum of the pieces':<42}{sum(s for _, s in rows) / nodes * 1e9:>14.2f}")
    print(f"{'whole pass inside iterate()':<42}{whole / nodes * 1e9:>14.2f}")


if __name__ == "__main__":
    main()
