"""Exact evaluation kernels: expected values and best responses on the compiled tree."""

from __future__ import annotations

import numpy as np
from numba import njit

from .full_pass import full_forward


@njit(cache=True, nogil=True)
def expected_values(tree, probs: np.ndarray, value: np.ndarray) -> None:
    """Every player's expected utility at every node under the profile ``probs``.

    ``value`` (float64[P, N]) must hold the utilities at the terminal nodes; the internal
    nodes' entries are overwritten, children before parents. ``value[:, 0]`` is the game value.
    """
    internal = tree.internal_nodes
    node_slot = tree.node_slot
    first_child = tree.node_first_child
    num_children = tree.node_num_children
    num_players = value.shape[0]
    for k in range(internal.shape[0] - 1, -1, -1):
        n = internal[k]
        c = first_child[n]
        s = node_slot[n]
        for p in range(num_players):
            v = 0.0
            for j in range(num_children[n]):
                v += probs[s + j] * value[p, c + j]
            value[p, n] = v


@njit(cache=True, nogil=True)
def best_response_order(tree, player: int, pending: np.ndarray, order: np.ndarray) -> int:
    """An order in which a best response for ``player`` can be computed bottom-up.

    The units are the internal nodes not owned by ``player`` (id ``n``) and ``player``'s
    infosets (id ``N + I``); a unit is ready once every child of every node in it is done
    (Kahn's topological sort). Perfect recall makes this acyclic: an infoset never lies below
    itself. Writes ``pending`` (int64[N + S], workspace) and ``order`` (int64[N + S]); returns
    how many entries of ``order`` are used (terminal nodes are left out: their values are
    known).
    """
    num_nodes = tree.node_kind.shape[0]
    node_player = tree.node_player
    node_infoset = tree.node_infoset
    parent = tree.node_parent
    for n in range(num_nodes):
        pending[n] = 0
    for infoset in range(tree.infoset_player.shape[0]):
        pending[num_nodes + infoset] = 0
    for n in range(num_nodes):
        if node_player[n] == player:
            pending[num_nodes + node_infoset[n]] += tree.node_num_children[n]
        else:
            pending[n] = tree.node_num_children[n]
    # order[] doubles as the queue: units are appended when ready and read back in turn
    head = 0
    tail = 0
    for n in range(num_nodes):
        if tree.node_num_children[n] == 0:
            order[tail] = n
            tail += 1
    used = 0
    while head < tail:
        unit = order[head]
        head += 1
        if unit < num_nodes:
            first, last, single = 0, 0, unit
            if tree.node_num_children[unit] > 0:
                order[used] = unit
                used += 1
        else:
            infoset = unit - num_nodes
            first = tree.infoset_node_start[infoset]
            last = tree.infoset_node_start[infoset + 1]
            single = -1
            order[used] = unit
            used += 1
        count = last - first if single < 0 else 1
        for k in range(count):
            h = single if single >= 0 else tree.infoset_nodes[first + k]
            up = parent[h]
            if up < 0:
                continue
            up_unit = num_nodes + node_infoset[up] if node_player[up] == player else up
            pending[up_unit] -= 1
            if pending[up_unit] == 0:
                order[tail] = up_unit
                tail += 1
    return used


@njit(cache=True, nogil=True)
def best_response_value(
    tree,
    probs: np.ndarray,
    player: int,
    order: np.ndarray,
    used: int,
    reach: np.ndarray,
    value: np.ndarray,
    choice: np.ndarray,
) -> float:
    """The value of ``player``'s best response to the others' strategies in ``probs``.

    At each of ``player``'s infosets ``I`` the response plays
    ``argmax_a sum_{h in I} pi_{-player}(h) v(h a)`` (first maximal action on ties), where
    ``v`` already assumes the best response below. Writes ``reach`` (float64[N]), ``value``
    (float64[N], terminal entries preset to ``player``'s utilities) and ``choice`` (int64[S],
    the chosen action index of each of ``player``'s infosets) in place.
    """
    num_nodes = tree.node_kind.shape[0]
    node_slot = tree.node_slot
    first_child = tree.node_first_child
    num_children = tree.node_num_children
    full_forward(tree.node_parent, tree.edge_slot, tree.edge_player, probs, reach, player)
    for k in range(used):
        unit = order[k]
        if unit < num_nodes:
            c = first_child[unit]
            s = node_slot[unit]
            v = 0.0
            for j in range(num_children[unit]):
                v += probs[s + j] * value[c + j]
            value[unit] = v
        else:
            infoset = unit - num_nodes
            first = tree.infoset_node_start[infoset]
            last = tree.infoset_node_start[infoset + 1]
            best = 0
            best_q = -np.inf
            for a in range(tree.infoset_num_actions[infoset]):
                q = 0.0
                for i in range(first, last):
                    h = tree.infoset_nodes[i]
                    q += reach[h] * value[first_child[h] + a]
                if q > best_q:
                    best_q = q
                    best = a
            choice[infoset] = best
            for i in range(first, last):
                h = tree.infoset_nodes[i]
                value[h] = value[first_child[h] + best]
    return value[0]
