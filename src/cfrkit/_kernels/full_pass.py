"""The full pass: every node once, edge by edge over flat arrays, for one updating player.

Counterfactual regret minimisation (Zinkevich, Johanson, Bowling and Piccione 2007). For the
updating player ``p`` and each history ``h`` of ``p`` in infoset ``I``, the instantaneous regret
is ``r(I, a) = sum_{h in I} pi_{-p}(h) (v_p(h a) - v_p(h))``, where ``pi_{-p}(h)`` is the product
of the other players' and chance's probabilities on the path and ``v_p`` is ``p``'s expected
utility under the current profile. On the breadth-first tree that is two loops: forward
(parents before children) for ``pi_{-p}``, backward (children before parents) for ``v_p``,
adding on the way the slot sums ``sum_h pi_{-p}(h) v_p(h a)`` and the infoset baseline
``sum_h pi_{-p}(h) v_p(h)`` whose difference is ``r``; :mod:`.update` folds them in.
"""

from __future__ import annotations

from numba import njit


@njit(cache=True, _nrt=False, inline="always")
def full_forward(parent, edge_slot, edge_player, probs, reach, player: int) -> None:
    """Forward loop of an unpruned pass, edge by edge (node ``c``'s edge comes from its parent).

    ``reach[c] = reach[parent] * (1 if the parent is player's, else the edge's probability)``,
    which is ``pi_{-player}`` at every node. Writes ``reach`` in place. (Arrays, not bundles:
    best response runs it on its own buffers.)
    """
    reach[0] = 1.0
    for c in range(1, parent.shape[0]):
        r = reach[parent[c]]
        reach[c] = r if edge_player[c] == player else r * probs[edge_slot[c]]


@njit(cache=True, _nrt=False, inline="always")
def full_backward(tree, state, scratch, player: int) -> None:
    """Backward loop of an unpruned pass, over the nodes from the last.

    Node ``c``'s value is final (its children come after it), so it goes to its infoset's
    baseline (if ``c`` is ``player``'s), to its edge's slot sum (if the parent is ``player``'s)
    and into its parent's value. Writes ``scratch.value[player]``, ``scratch.instant`` and
    ``scratch.baseline`` in place (terminal values are preset to the utilities).
    """
    parent = tree.node_parent
    edge_slot = tree.edge_slot
    edge_player = tree.edge_player
    edge_last = tree.edge_last
    node_player = tree.node_player
    node_infoset = tree.node_infoset
    probs = state.probs
    reach = scratch.reach
    value = scratch.value[player]
    instant = scratch.instant
    baseline = scratch.baseline
    # a parent's value is summed in a register while its children go by (they are
    # contiguous), and stored when the next family starts: no round trip through memory
    total = 0.0
    family = 0
    for c in range(parent.shape[0] - 1, 0, -1):
        if edge_last[c]:  # the first child seen of a new family: the last one is complete
            value[family] = total
            family = parent[c]
            total = 0.0
        v = value[c]
        if node_player[c] == player:
            baseline[node_infoset[c]] += reach[c] * v
        s = edge_slot[c]
        if edge_player[c] == player:
            instant[s] += reach[family] * v
        total += probs[s] * v  # last child first: the same order as the queued pass
    value[family] = total
    if node_player[0] == player:
        baseline[node_infoset[0]] += value[0]


@njit(cache=True, _nrt=False, inline="always")
def full_pass(tree, state, scratch, player: int) -> None:
    """One full pass for ``player``: ``scratch.reach``, values, slot sums and baselines."""
    full_forward(tree.node_parent, tree.edge_slot, tree.edge_player, state.probs, scratch.reach, player)
    full_backward(tree, state, scratch, player)
