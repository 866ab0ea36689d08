"""Chance sampling: drawing outcomes, and one sampled walk that updates every player at once.

Outcomes are drawn in O(1) from Walker alias tables with the trainer's own xoshiro256**
stream, once per chance node per sample (``scratch.sample_id``), so every pass that shares a
sample sees the same outcomes.
"""

from __future__ import annotations

from numba import njit

from ..tree import CHANCE
from .random import next_double
from .update import visit_sampled


@njit(cache=True, _nrt=False, inline="always")
def sample_outcome(rng, alias_prob, alias_index, s: int, m: int) -> int:
    """Draw an outcome index in ``[0, m)`` from the alias table at chance slots ``s..s+m``."""
    k = min(int(next_double(rng) * m), m - 1)
    if next_double(rng) < alias_prob[s + k]:
        return k
    return alias_index[s + k]


@njit(cache=True, _nrt=False, inline="always")
def chance_choice(tree, statics, state, scratch, n: int, sample_id: int) -> int:
    """The outcome index sampled at chance node ``n`` for ``sample_id`` (drawn on first use)."""
    if scratch.sample_stamp[n] != sample_id:
        scratch.sampled_child[n] = sample_outcome(
            state.rng, statics.alias_prob, statics.alias_index,
            tree.node_slot[n] - tree.num_action_slots, tree.node_num_children[n],
        )
        scratch.sample_stamp[n] = sample_id
    return scratch.sampled_child[n]


@njit(cache=True, _nrt=False, inline="always")
def joint_sampled_walk(tree, statics, state, scratch) -> int:
    """One sampled walk that computes every player's regrets at once (simultaneous updates).

    The semantics of the original chance-sampling papers: one sampled deal, walked once, each
    node carrying every player's own reach (``joint_reach[n, q]``, chance left out) forward and
    every player's value (``value[q, n]``) back. At a decision node of player ``a`` the regret
    weight is ``prod_{q != a} joint_reach[n, q]``; the sums are those of the per-player passes,
    so the result is the same as ``P`` passes over the same sample with the same profile.
    Lists and counts the visited infosets of every player. Returns the nodes touched.
    """
    node_kind = tree.node_kind
    node_player = tree.node_player
    node_infoset = tree.node_infoset
    node_slot = tree.node_slot
    first_child = tree.node_first_child
    num_children = tree.node_num_children
    probs = state.probs
    joint_reach = scratch.joint_reach
    value = scratch.value
    queue = scratch.queue
    sample_id = scratch.sample_id[0]
    num_players = joint_reach.shape[1]
    queue[0] = 0
    for q in range(num_players):
        joint_reach[0, q] = 1.0
    head = 0
    tail = 1
    touched = 1
    while head < tail:
        n = queue[head]
        head += 1
        c = first_child[n]
        m = num_children[n]
        s = node_slot[n]
        if node_kind[n] == CHANCE:
            first = c + chance_choice(tree, statics, state, scratch, n, sample_id)
            last = first + 1
        else:
            visit_sampled(tree, state, scratch, node_infoset[n])
            first = c
            last = c + m
        actor = node_player[n]  # -1 at a chance node
        for child in range(first, last):
            touched += 1
            if num_children[child] > 0:  # a terminal's reach is never read
                for q in range(num_players):
                    joint_reach[child, q] = joint_reach[n, q]
                if actor >= 0:
                    joint_reach[child, actor] *= probs[s + child - c]
                queue[tail] = child
                tail += 1
    for k in range(tail - 1, -1, -1):
        n = queue[k]
        c = first_child[n]
        m = num_children[n]
        if node_kind[n] == CHANCE:
            chosen = c + scratch.sampled_child[n]
            for q in range(num_players):
                value[q, n] = value[q, chosen]
            continue
        s = node_slot[n]
        for q in range(num_players):
            v = 0.0
            for j in range(m - 1, -1, -1):
                v += probs[s + j] * value[q, c + j]
            value[q, n] = v
        actor = node_player[n]
        cf = 1.0
        for q in range(num_players):
            if q != actor:
                cf *= joint_reach[n, q]
        scratch.baseline[node_infoset[n]] += cf * value[actor, n]
        for j in range(m):
            scratch.instant[s + j] += cf * value[actor, c + j]
    return touched
