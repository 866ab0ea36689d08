"""Chance sampling: drawing outcomes.

Outcomes are drawn in O(1) from Walker alias tables with the trainer's own xoshiro256**
stream, once per chance node per sample, so every pass that shares a sample sees the same
outcomes: chance-sampled CFR draws a whole sample before its passes (:func:`draw_sample`); a
walk can also draw at a chance node on first use (:func:`chance_choice`).
"""

from __future__ import annotations

from numba import njit

from .random import next_double


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
def draw_sample(tree, statics, state, scratch) -> None:
    """Draw one sample: an outcome at every chance node it reaches, in breadth-first order.

    A chance node is reached when every chance node above it drew the outcome it lies under;
    the nodes waiting for their draw are kept in a min-heap of chance indices
    (``scratch.chance_heap``), which are breadth-first ranks, so the draws come in the order
    a breadth-first walk of the sample would make them (the order of earlier versions, and of
    the tests' replay). Writes the region of the drawn outcome of each reached chance node to
    ``scratch.chance_pick``; advances ``state.rng`` by two doubles per reached chance node.
    """
    draw_outcomes(statics, state.rng, scratch)


@njit(cache=True, _nrt=False, inline="always")
def draw_outcomes(statics, rng, scratch) -> None:
    """:func:`draw_sample` from the random state ``rng`` (a stream's)."""
    below = statics.layout.chance_below
    below_start = statics.layout.chance_below_start
    slot_start = statics.layout.chance_slot_start
    heap = scratch.chance_heap
    top = statics.layout.chance_child_region.shape[0]  # group C: no chance node above
    size = 0
    for t in range(below_start[top], below_start[top + 1]):
        heap[size] = below[t]  # in increasing order: already a heap
        size += 1
    while size > 0:
        k = heap[0]
        size -= 1
        _sift_down(heap, heap[size], size)
        s = slot_start[k]
        j = s + sample_outcome(rng, statics.alias_prob, statics.alias_index, s, slot_start[k + 1] - s)
        scratch.chance_pick[k] = statics.layout.chance_child_region[j]
        for t in range(below_start[j], below_start[j + 1]):
            _push(heap, below[t], size)
            size += 1


@njit(cache=True, _nrt=False, inline="always")
def _sift_down(heap, x: int, size: int) -> None:
    """Put ``x`` at the root of the heap ``heap[:size]`` and sift it down."""
    i = 0
    while True:
        c = 2 * i + 1
        if c >= size:
            break
        if c + 1 < size and heap[c + 1] < heap[c]:
            c += 1
        if heap[c] >= x:
            break
        heap[i] = heap[c]
        i = c
    heap[i] = x


@njit(cache=True, _nrt=False, inline="always")
def _push(heap, x: int, size: int) -> None:
    """Add ``x`` to the heap ``heap[:size]`` (which then has ``size + 1`` entries)."""
    i = size
    while i > 0:
        up = (i - 1) // 2
        if heap[up] <= x:
            break
        heap[i] = heap[up]
        i = up
    heap[i] = x
