"""Queued passes: visit only the nodes worth visiting, for pruned and chance-sampled CFR.

The forward loop builds a queue of internal nodes (breadth-first, parents first) and their
others' reach; the backward loop walks the queue in reverse and makes the same sums, in the
same order, as the full pass (so pruning only zero-reach subtrees gives the same regrets).

* pruning -- children the others and chance reach with probability zero are skipped; so are
  children whose reach by the other *players* (chance left out) is below a threshold, and the
  player's own actions that regret-based pruning holds in a window;
* chance sampling -- at a chance node only the sampled outcome is followed, its probability
  left out of the reach (it cancels against the sampling probability: Lanctot, Waugh, Zinkevich
  and Bowling 2009, "Monte Carlo Sampling for Regret Minimization in Extensive Games"), and
  every history consistent with the sample is visited, zero reach included, so that the average
  weights do not depend on the others' zeros.

The switches ``pruning_windows`` and ``sampling`` are constants in each driver, so each driver
compiles only its own branch.
"""

from __future__ import annotations

from numba import njit

from ..tree import CHANCE
from .chance import chance_choice
from .regret_pruning import OPEN
from .update import list_visited, visit_sampled


@njit(cache=True, _nrt=False, inline="always")
def visit_forward(
    tree, statics, state, scratch, player: int, threshold: float, pruning_windows, sampling,
) -> tuple:
    """Forward loop of a queued pass: fill ``scratch.queue`` and ``scratch.reach``.

    Returns ``(count, touched)``: the internal nodes queued, and the nodes read or written.
    Lists the visited infosets of ``player`` (and, when sampling, takes their own reach and
    counts their visited histories).
    """
    node_kind = tree.node_kind
    node_player = tree.node_player
    node_infoset = tree.node_infoset
    node_slot = tree.node_slot
    first_child = tree.node_first_child
    num_children = tree.node_num_children
    probs = state.probs
    reach = scratch.reach
    queue = scratch.queue
    sample_id = scratch.sample_id[0]
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
        if sampling and node_kind[n] == CHANCE:
            child = c + chance_choice(tree, statics, state, scratch, n, sample_id)
            reach[child] = r
            touched += 1
            if num_children[child] > 0:
                queue[tail] = child
                tail += 1
        elif node_player[n] == player:
            if sampling:
                visit_sampled(tree, state, scratch, node_infoset[n])
            else:
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
                rc = r * probs[s + j]
                reach[c + j] = rc
                # zero reach: neither the child nor its subtree is read -- except when sampling
                if rc > 0.0 or sampling:
                    touched += 1
                    if num_children[c + j] > 0 and (
                        threshold == 0.0 or rc >= threshold * statics.chance_reach[c + j]
                    ):
                        queue[tail] = c + j
                        tail += 1
    return tail, touched


@njit(cache=True, _nrt=False, inline="always")
def queued_backward(
    tree, statics, state, scratch, count: int, player: int, pruning_windows, sampling,
) -> None:
    """Backward loop over the queued nodes ``queue[count-1] .. queue[0]``.

    Node by node, with the same sums in the same order as the full pass. Children with
    probability zero were not visited: their stale (finite) values are multiplied by zero,
    cheaper than a branch; children skipped by the threshold keep the value of the last pass
    that visited them; a sampled chance node takes its sampled child's value. An action in a
    regret-pruning window gets the bound ``pi_{-p}(h) U_p(h a)`` in place of
    ``pi_{-p}(h) v_p(h a)``, also added to ``state.bound_extra`` to be replaced when the window
    closes. Writes ``scratch.value[player]``, ``scratch.instant``, ``scratch.baseline`` (and
    ``state.bound_extra``) in place.
    """
    node_kind = tree.node_kind
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
        if sampling and node_kind[n] == CHANCE:
            value[n] = value[c + scratch.sampled_child[n]]
            continue
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
