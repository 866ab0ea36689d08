"""The CFR traversal: one breadth-first array pass per updating player.

Counterfactual regret minimisation (Zinkevich, Johanson, Bowling and Piccione 2007, "Regret
Minimization in Games with Incomplete Information"). For the updating player ``p`` and every
history ``h`` of ``p`` in infoset ``I``::

    R(I, a) += pi_{-p}(h) * (v_p(h a) - v_p(h))

where ``pi_{-p}(h)`` is the product of the other players' and chance's probabilities on the
path to ``h`` and ``v_p`` is ``p``'s expected utility under the current profile. On the
breadth-first tree this is two loops: a forward loop computes ``pi_{-p}`` at every node
(parents come first), a backward loop computes ``v_p`` (children come first) and adds the
regrets on the way. No recursion, no stack.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from .regret import regret_matching


@njit(cache=True)
def counterfactual_reach(tree, probs: np.ndarray, player: int, reach: np.ndarray) -> None:
    """Fill ``reach[n] = pi_{-player}(n)`` for every node ``n`` (chance included).

    ``player``'s own edges count as probability 1. Writes ``reach`` in place.
    """
    node_player = tree.node_player
    node_slot = tree.node_slot
    first_child = tree.node_first_child
    num_children = tree.node_num_children
    reach[0] = 1.0
    for n in tree.internal_nodes:
        r = reach[n]
        c = first_child[n]
        if node_player[n] == player:
            for j in range(num_children[n]):
                reach[c + j] = r
        else:
            s = node_slot[n]
            for j in range(num_children[n]):
                reach[c + j] = r * probs[s + j]


@njit(cache=True)
def _regret_pass(tree, probs, regret, reach, value, player) -> None:
    """Backward loop of one CFR pass: ``value`` (player's row) and ``player``'s regrets.

    ``value`` must already hold ``player``'s utility at the terminal nodes; the internal
    nodes' entries are overwritten. Writes ``value`` and ``regret`` in place.
    """
    internal = tree.internal_nodes
    node_player = tree.node_player
    node_slot = tree.node_slot
    first_child = tree.node_first_child
    num_children = tree.node_num_children
    for k in range(internal.shape[0] - 1, -1, -1):
        n = internal[k]
        c = first_child[n]
        m = num_children[n]
        s = node_slot[n]
        v = 0.0
        for j in range(m):
            v += probs[s + j] * value[c + j]
        value[n] = v
        if node_player[n] == player:
            cf = reach[n]
            for j in range(m):
                regret[s + j] += cf * (value[c + j] - v)


@njit(cache=True)
def _accumulate_average(tree, probs, strategy_sum, own_reach, player, weight) -> None:
    """Add ``weight * pi_p(I) * sigma(I, a)`` to ``strategy_sum`` for each infoset of ``player``.

    ``pi_p(I)`` is the player's own reach of ``I``: one number per infoset under perfect
    recall, the reach of the player's previous infoset times the probability of the action
    taken there. Infosets are numbered so that this previous infoset comes first. Writes
    ``own_reach`` and ``strategy_sum`` in place.
    """
    parent = tree.infoset_parent
    parent_slot = tree.infoset_parent_slot
    first_slot = tree.infoset_first_slot
    num_actions = tree.infoset_num_actions
    for infoset in range(tree.player_infoset_start[player], tree.player_infoset_start[player + 1]):
        ps = parent_slot[infoset]
        w = 1.0 if ps < 0 else own_reach[parent[infoset]] * probs[ps]
        own_reach[infoset] = w
        s = first_slot[infoset]
        w *= weight
        for a in range(num_actions[infoset]):
            strategy_sum[s + a] += w * probs[s + a]


@njit(cache=True)
def cfr_iterations(
    tree,
    probs: np.ndarray,
    regret: np.ndarray,
    strategy_sum: np.ndarray,
    reach: np.ndarray,
    value: np.ndarray,
    own_reach: np.ndarray,
    iterations: int,
    alternating: bool,
) -> int:
    """Run ``iterations`` CFR iterations in one call; return the number of nodes visited.

    With ``alternating`` the players update in order ``0..P-1``, each player's strategy
    refreshed by regret matching right after its own pass (OpenSpiel's CFRSolver convention);
    otherwise every player's pass sees the same profile and all refresh at the end.

    Buffers written in place: ``probs[:num_action_slots]`` (the current strategy; the chance
    slots after it are constant), ``regret`` and ``strategy_sum`` (float64[A]), and the
    workspaces ``reach`` (float64[N]), ``value`` (float64[P, N], terminal entries preset to
    the utilities) and ``own_reach`` (float64[S]).
    """
    num_players = tree.num_players
    start = tree.player_infoset_start
    num_nodes = tree.node_kind.shape[0]
    visited = 0
    for _ in range(iterations):
        for player in range(num_players):
            counterfactual_reach(tree, probs, player, reach)
            _regret_pass(tree, probs, regret, reach, value[player], player)
            _accumulate_average(tree, probs, strategy_sum, own_reach, player, 1.0)
            visited += num_nodes
            if alternating:
                regret_matching(
                    regret, probs, tree.infoset_first_slot, tree.infoset_num_actions,
                    start[player], start[player + 1],
                )
        if not alternating:
            regret_matching(
                regret, probs, tree.infoset_first_slot, tree.infoset_num_actions,
                0, start[num_players],
            )
    return visited
