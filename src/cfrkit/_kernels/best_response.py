"""Exact evaluation kernels: expected values and best responses on the compiled tree."""

from __future__ import annotations

import numpy as np
from numba import njit, uint64

from .full_pass import full_forward


@njit(cache=True, _nrt=False, inline="always")
def expected_value_node(tree, probs, value, n) -> None:
    """``value[p, n] = sum_j probs[slot + j] * value[p, child + j]`` for every player ``p``
    (children first to last): one internal node's step of :func:`expected_values`."""
    node = uint64(n)
    c = uint64(tree.node_first_child[node])
    s = uint64(tree.node_slot[node])
    for p in range(value.shape[0]):
        v = 0.0
        for j in range(uint64(tree.node_num_children[node])):
            v += probs[s + j] * value[p, c + j]
        value[p, node] = v


@njit(cache=True, nogil=True, _nrt=False)
def expected_values(tree, probs: np.ndarray, value: np.ndarray) -> None:
    """Every player's expected utility at every node under the profile ``probs``.

    ``value`` (float64[P, N]) must hold the utilities at the terminal nodes; the internal
    nodes' entries are overwritten, children before parents. ``value[:, 0]`` is the game value.
    """
    internal = tree.internal_nodes
    for k in range(internal.shape[0] - 1, -1, -1):
        expected_value_node(tree, probs, value, internal[k])


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


@njit(cache=True, _nrt=False, inline="always")
def best_response_node(tree, probs, value, node) -> None:
    """A node unit of :func:`best_response_value` (not ``player``'s): ``value[n] = sum_j
    probs[slot + j] * value[child + j]``.

    Callers test the unit's kind in their own loop and call this or
    :func:`best_infoset_action`: one function doing both, inlined into the loop, measured 25x
    slower on liar's dice (numba 0.68).
    """
    u = uint64(node)
    c = uint64(tree.node_first_child[u])
    s = uint64(tree.node_slot[u])
    v = 0.0
    for j in range(uint64(tree.node_num_children[u])):
        v += probs[s + j] * value[c + j]
    value[u] = v


@njit(cache=True, _nrt=False, inline="always")
def best_infoset_action(tree, infoset, reach, value, choice) -> None:
    """An infoset unit of :func:`best_response_value`: the action maximising
    ``sum_{h in I} reach[h] * value[h a]`` (the first on ties) into ``choice``, and its
    histories' values."""
    first_child = tree.node_first_child
    first = uint64(tree.infoset_node_start[infoset])
    last = uint64(tree.infoset_node_start[infoset + uint64(1)])
    best = 0
    best_q = -np.inf
    for a in range(tree.infoset_num_actions[infoset]):
        q = 0.0
        for i in range(first, last):
            h = uint64(tree.infoset_nodes[i])
            q += reach[h] * value[uint64(first_child[h]) + uint64(a)]
        if q > best_q:
            best_q = q
            best = a
    choice[infoset] = best
    for i in range(first, last):
        h = uint64(tree.infoset_nodes[i])
        value[h] = value[uint64(first_child[h]) + uint64(best)]


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
    full_forward(tree.node_parent, tree.edge_slot, tree.edge_player, probs, reach, player)
    num_nodes = uint64(tree.node_kind.shape[0])
    for k in range(used):
        unit = uint64(order[k])
        if unit < num_nodes:
            best_response_node(tree, probs, value, unit)
        else:
            best_infoset_action(tree, unit - num_nodes, reach, value, choice)
    return value[0]


@njit(cache=True, nogil=True, _nrt=False)
def best_response_waves(
    tree, player: int, order: np.ndarray, used: int, unit_wave: np.ndarray, wave: np.ndarray
) -> None:
    """``wave[k]`` for each unit ``order[k]`` of a best response (see
    :func:`best_response_order`): one more than the latest wave of the units it reads (0 when
    it reads terminals only). The units of one wave read only earlier waves, so they can be
    computed in any order, in parallel (``parallel.best_response_value_parallel``).
    ``unit_wave`` (int64[N + S], workspace) must come filled with -1.
    """
    num_nodes = tree.node_kind.shape[0]
    node_player = tree.node_player
    node_infoset = tree.node_infoset
    first_child = tree.node_first_child
    num_children = tree.node_num_children
    for k in range(used):
        unit = order[k]
        latest = -1
        if unit < num_nodes:
            first, last, single = 0, 1, unit
        else:
            infoset = unit - num_nodes
            first = tree.infoset_node_start[infoset]
            last = tree.infoset_node_start[infoset + 1]
            single = -1
        for i in range(first, last):
            h = single if single >= 0 else tree.infoset_nodes[i]
            for c in range(first_child[h], first_child[h] + num_children[h]):
                if num_children[c] == 0:
                    continue
                below = num_nodes + node_infoset[c] if node_player[c] == player else c
                latest = max(latest, unit_wave[below])
        unit_wave[unit] = latest + 1
        wave[k] = latest + 1
