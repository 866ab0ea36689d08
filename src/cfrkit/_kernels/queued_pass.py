"""Queued passes: visit only the nodes worth visiting, for pruned CFR.

The forward loop builds a queue of internal nodes (breadth-first, parents first) and their
others' reach; the backward loop walks the queue in reverse and makes the same sums, in the
same order, as the full pass (so pruning only zero-reach subtrees gives the same regrets).
Children the others and chance reach with probability zero are skipped (a zero factor, not a
product that underflowed: the parents read that subtree's values); so are children whose
reach by the other *players* (chance left out) is below a threshold, and the player's own
actions that regret-based pruning holds in a window (the switch ``pruning_windows``, a constant
in each call, so only its own branch is compiled).

(Chance-sampled passes, which these loops served too, run on a layout of their own:
``sampled_pass.py``.)
"""

from __future__ import annotations

from numba import njit

from .regret_pruning import OPEN
from .update import list_visited


@njit(cache=True, _nrt=False, inline="always")
def visit_forward(
    tree, statics, state, scratch, player: int, threshold: float, pruning_windows,
) -> tuple:
    """Forward loop of a queued pass: fill ``scratch.queue`` and ``scratch.reach``.

    Returns ``(count, touched)``: the internal nodes queued, and the nodes read or written.
    Lists the visited infosets of ``player``.
    """
    node_player = tree.node_player
    node_infoset = tree.node_infoset
    node_slot = tree.node_slot
    first_child = tree.node_first_child
    num_children = tree.node_num_children
    probs = state.probs
    reach = scratch.reach
    queue = scratch.queue
    queue[0] = 0
    reach[0] = 1.0
    head = 0
    tail = 1
    touched = 1
    while head < tail:
        n = queue[head]
        head += 1
        r = reach[n]
        c = first_child[n]
        m = num_children[n]
        s = node_slot[n]
        if node_player[n] == player:
            list_visited(scratch, node_infoset[n])
            for j in range(m):
                if pruning_windows and state.window[s + j] == OPEN:
                    continue  # regret-based pruning: an action in its window
                reach[c + j] = r
                touched += 1
                if num_children[c + j] > 0:
                    queue[tail] = c + j
                    tail += 1
        else:
            for j in range(m):
                p = probs[s + j]
                rc = r * p
                reach[c + j] = rc
                if p == 0.0:  # zero reach: neither the child nor its subtree is read
                    continue
                # (a queued node is reached, even when its reach underflowed to 0: so is a
                # child with p > 0, and the parents read its value, as the full pass does)
                touched += 1
                if num_children[c + j] > 0 and (
                    threshold == 0.0 or rc >= threshold * statics.chance_reach[c + j]
                ):
                    queue[tail] = c + j
                    tail += 1
    return tail, touched


@njit(cache=True, _nrt=False, inline="always")
def queued_backward(
    tree, statics, state, scratch, count: int, player: int, pruning_windows,
) -> None:
    """Backward loop over the queued nodes ``queue[count-1] .. queue[0]``.

    Node by node, with the same sums in the same order as the full pass. Children with
    probability zero were not visited: their stale (finite) values are multiplied by zero,
    cheaper than a branch; children skipped by the threshold keep the value of the last pass
    that visited them. An action in a
    regret-pruning window gets the bound ``pi_{-p}(h) U_p(h a)`` in place of
    ``pi_{-p}(h) v_p(h a)``, also added to ``state.bound_extra`` to be replaced when the window
    closes. Writes ``scratch.value[player]``, ``scratch.instant``, ``scratch.baseline`` (and
    ``state.bound_extra``) in place.
    """
    node_player = tree.node_player
    node_slot = tree.node_slot
    first_child = tree.node_first_child
    num_children = tree.node_num_children
    probs = state.probs
    queue = scratch.queue
    reach = scratch.reach
    value = scratch.value[player]
    instant = scratch.instant
    for k in range(count - 1, -1, -1):
        n = queue[k]
        c = first_child[n]
        m = num_children[n]
        s = node_slot[n]
        v = 0.0
        for j in range(m - 1, -1, -1):  # unvisited children have probability 0: no branch
            v += probs[s + j] * value[c + j]
        value[n] = v
        if node_player[n] == player:
            cf = reach[n]
            scratch.baseline[tree.node_infoset[n]] += cf * v
            for j in range(m):
                if pruning_windows and state.window[s + j] == OPEN:
                    bound = cf * statics.upper_bound[player, c + j]
                    instant[s + j] += bound
                    state.bound_extra[s + j] += bound
                else:
                    instant[s + j] += cf * value[c + j]
