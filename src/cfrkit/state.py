"""A trainer's arrays, split by lifetime.

* :class:`TrainerState` -- what the run *is*: regrets, average weights, the current strategy,
  the discount bookkeeping, the random stream, regret-based pruning's windows. Everything a
  checkpoint must hold; nothing else is needed to continue a run bit for bit.
* :class:`Scratch` -- per-pass buffers (reach, values, instantaneous regrets, queues). Their
  contents do not survive from one iteration to the next in any way that matters, so they are
  rebuilt rather than saved.
* :class:`StreamPool` -- a sampled trainer's parallel streams (``streams > 1``): each stream's
  random state (persistent, like ``TrainerState.rng``) and sums, and each worker thread's
  per-pass buffers.
* :class:`~cfrkit.statics.Statics` -- per-game arrays, shared by every trainer on the game.

``N`` nodes, ``S`` infosets, ``A`` decision slots, ``C`` chance slots, ``P`` players. Arrays a
trainer does not use are empty (same numba types, so no second compilation).
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from .statics import SamplingLayout, Statics
from .tree import GameTree

__all__ = [
    "Scratch", "StreamPool", "TrainerState", "new_scratch", "new_state", "new_stream_pool",
    "sampling_scratch",
]


class TrainerState(NamedTuple):
    """The persistent arrays of a trainer; the kernels update them in place."""

    probs: np.ndarray  # float64[A + C]: current strategy, then the constant chance probabilities
    regret: np.ndarray  # float64[A]: cumulative regrets (as of each infoset's last update)
    strategy_sum: np.ndarray  # float64[A]: average-strategy weights
    prediction: np.ndarray  # float64[A]: last instantaneous regrets (predictive rules; else 0)
    locked: np.ndarray  # bool[S]: infosets whose strategy is held fixed
    # lazy discounting (queued passes under a discounting rule): the running products
    # G_+(t) = prod d_+(s), G_-(t) = prod d_-(s) as frexp pairs, row 0 through t-1, row 1
    # through t; each infoset keeps the row-1 pair of its last update
    discount_scale: np.ndarray  # float64[2, 2]: [before/after this iteration, positive/negative]
    discount_exponent: np.ndarray  # int64[2, 2]
    stamp_scale: np.ndarray  # float64[S, 2] (or [0, 2])
    stamp_exponent: np.ndarray  # int64[S, 2] (or [0, 2])
    # predictive rules on queued passes: each player's infosets whose prediction is nonzero
    predicted: np.ndarray  # int32[S]: player p's list at player_infoset_start[p] ...
    predicted_count: np.ndarray  # int64[P]
    rng: np.ndarray  # uint64[4]: xoshiro256** state (sampled traversals)
    # regret-based pruning (see _kernels/regret_pruning.py); empty when it is off
    accumulations: np.ndarray  # int64[P]: average-strategy updates made per player
    window: np.ndarray  # int8[A]: window state of each slot
    bound_extra: np.ndarray  # float64[A]: B(I, a), the bound of the window's unknown regret
    snapshot: np.ndarray  # float64[P, N]: leaves' summed others' reach at the window's start
    pending: np.ndarray  # int32[P, A]: slots marked to open or close, per player
    pending_count: np.ndarray  # int64[P]


class Scratch(NamedTuple):
    """Per-pass buffers; their contents are rewritten by every pass."""

    reach: np.ndarray  # float64[N]: pi_{-p} of the current pass
    value: np.ndarray  # float64[P, N]: v_p; terminal entries fixed to the utilities
    own_reach: np.ndarray  # float64[S]: pi_p(I) of the current pass
    instant: np.ndarray  # float64[A]: sum_h pi_{-p}(h) v_p(h a) of the current pass
    baseline: np.ndarray  # float64[S]: sum_h pi_{-p}(h) v_p(h) of the current pass
    visits: np.ndarray  # float64[S]: histories of each infoset a sampled pass visited
    queue: np.ndarray  # int32[N]: internal nodes visited by a queued pass, in order
    visited: np.ndarray  # int32[S]: infosets a queued pass visited, in order of first visit
    visited_stamp: np.ndarray  # int64[S]: the epoch in which each infoset was last listed
    visited_count: np.ndarray  # int64[2]: entries used in ``visited``, current epoch
    joint_reach: np.ndarray  # float64[N, P]: every player's own reach (joint sampled walks)
    # draws on first use (chance.chance_choice; chance-sampled passes draw a whole sample first)
    sampled_child: np.ndarray  # int32[N]: sampled outcome index at each chance node
    sample_stamp: np.ndarray  # int64[N]: the sample id each sampled_child belongs to
    sample_id: np.ndarray  # int64[1]: id of the current chance sample
    work: np.ndarray  # float64[N]: regret-based pruning's settling walk
    subtree_queue: np.ndarray  # int32[N]
    # chance-sampled passes on the sampling layout (``K`` chance nodes; see
    # _kernels/sampled_pass.py): ``reach`` and ``joint_reach`` are then by position (the joint
    # walk keeps each decision node's regret weight in ``reach``)
    position_value: np.ndarray  # float64[P, N]: v_q by position; terminals fixed to utilities
    position_own: np.ndarray  # float64[N]: pi_p by position (the pass's own reach)
    chance_pick: np.ndarray  # int32[K]: region of the outcome drawn at each reached chance node
    chance_heap: np.ndarray  # int32[K]: chance nodes waiting for their draw (a min-heap)
    chance_stack: np.ndarray  # int32[2, K + 1]: ranges to resume while cutting out segments
    segments: np.ndarray  # int32[2, K + 1]: region, and position of the chance node it hangs from


def _sized(used: bool, shape: tuple, dtype=np.float64, fill=0) -> np.ndarray:
    """An array of ``shape``, or an empty one of the same rank when it is not used."""
    return np.full(shape if used else (0,) * len(shape), fill, dtype=dtype)


def new_state(
    tree: GameTree,
    probs: np.ndarray,
    locked: np.ndarray,
    *,
    predictive: bool,
    lazy_discount: bool,
    queued: bool,
    regret_pruning: bool,
) -> TrainerState:
    """Fresh state: zero regrets and sums, ``probs`` (decision then chance slots) as the first
    strategy; products of discounts at 1 (``frexp(1) = (0.5, 1)``)."""
    num_nodes = tree.node_kind.shape[0]
    num_infosets = tree.infoset_player.shape[0]
    num_slots = tree.num_action_slots
    players = tree.num_players
    half, one = math.frexp(1.0)
    return TrainerState(
        probs=probs,
        regret=np.zeros(num_slots),
        strategy_sum=np.zeros(num_slots),
        prediction=np.zeros(num_slots),  # read by regret matching under every rule
        locked=locked,
        discount_scale=np.full((2, 2), half),
        discount_exponent=np.full((2, 2), one, dtype=np.int64),
        stamp_scale=np.full((num_infosets if lazy_discount else 0, 2), half),
        stamp_exponent=np.full((num_infosets if lazy_discount else 0, 2), one, dtype=np.int64),
        predicted=_sized(predictive and queued, (num_infosets,), np.int32),
        predicted_count=np.zeros(players, dtype=np.int64),
        rng=np.zeros(4, dtype=np.uint64),
        accumulations=np.zeros(players, dtype=np.int64),
        window=_sized(regret_pruning, (num_slots,), np.int8),
        bound_extra=_sized(regret_pruning, (num_slots,)),
        snapshot=_sized(regret_pruning, (players, num_nodes)),
        pending=_sized(regret_pruning, (players, num_slots), np.int32),
        pending_count=np.zeros(players, dtype=np.int64),
    )


def new_scratch(
    tree: GameTree, *, queued: bool, sampling: bool, joint: bool, regret_pruning: bool
) -> Scratch:
    """Buffers for one trainer's passes (``queued``: pruned or sampled passes; ``joint``: one
    sampled walk for every player)."""
    num_nodes = tree.node_kind.shape[0]
    num_infosets = tree.infoset_player.shape[0]
    return Scratch(
        reach=np.zeros(num_nodes),
        value=np.array(tree.utility, dtype=np.float64),  # terminal entries stay fixed
        own_reach=np.zeros(num_infosets),
        instant=np.zeros(tree.num_action_slots),
        baseline=np.zeros(num_infosets),
        visits=_sized(sampling, (num_infosets,)),
        queue=_sized(queued or regret_pruning, (num_nodes,), np.int32),
        visited=_sized(queued, (num_infosets,), np.int32),
        visited_stamp=_sized(queued, (num_infosets,), np.int64, -1),
        visited_count=np.zeros(2, dtype=np.int64),
        joint_reach=_sized(joint, (num_nodes, tree.num_players)),
        sampled_child=_sized(sampling, (num_nodes,), np.int32),
        sample_stamp=_sized(sampling, (num_nodes,), np.int64, -1),
        sample_id=np.zeros(1, dtype=np.int64),
        work=_sized(regret_pruning, (num_nodes,)),
        subtree_queue=_sized(regret_pruning, (num_nodes,), np.int32),
        position_value=np.zeros((0, 0)),
        position_own=np.zeros(0),
        chance_pick=np.zeros(0, dtype=np.int32),
        chance_heap=np.zeros(0, dtype=np.int32),
        chance_stack=np.zeros((0, 0), dtype=np.int32),
        segments=np.zeros((0, 0), dtype=np.int32),
    )


def sampling_scratch(scratch: Scratch, statics: Statics) -> Scratch:
    """``scratch`` for chance-sampled passes on the sampling layout (``statics`` built with
    ``sampling``): its buffers allocated, the breadth-first ones the queued and joint
    walks used (``value``, ``queue``, ``sampled_child``, ``sample_stamp``) emptied, since these
    passes never read them. ``reach`` and ``joint_reach`` keep their sizes, indexed by position.
    """
    num_chance = statics.layout.chance_slot_start.shape[0] - 1
    return scratch._replace(
        value=np.zeros((0, 0)),
        queue=np.zeros(0, dtype=np.int32),
        sampled_child=np.zeros(0, dtype=np.int32),
        sample_stamp=np.zeros(0, dtype=np.int64),
        position_value=statics.layout.position_utility.copy(),
        position_own=np.zeros(statics.layout.position_node.shape[0]),
        chance_pick=np.zeros(num_chance, dtype=np.int32),
        chance_heap=np.zeros(num_chance, dtype=np.int32),
        chance_stack=np.zeros((2, num_chance + 1), dtype=np.int32),
        segments=np.zeros((2, num_chance + 1), dtype=np.int32),
    )


class StreamPool(NamedTuple):
    """A sampled trainer's ``k`` streams (``k`` rows; none when it runs the plain kernel) and
    ``w`` workers (see ``_kernels/mccfr.py``).

    Each stream has its own random state and its own sums, into which its passes of a round
    add; a worker runs a stream's passes on its own node buffers. The merge then applies each
    infoset's sums stream by stream in order, so the numbers do not depend on which worker
    ran which stream or merged which infoset. ``TrainerState.rng`` is not used then.
    """

    rng: np.ndarray  # uint64[k, 4]: each stream's xoshiro256** state (persistent)
    rng_start: np.ndarray  # uint64[k, 4]: the states at the iteration's start (chance sampling:
    # every player's round draws the same outcomes)
    touched: np.ndarray  # int64[k]: nodes the stream's passes of the round touched
    instant: np.ndarray  # float64[k, A]: the stream's slot sums (as Scratch.instant)
    baseline: np.ndarray  # float64[k, S]
    average: np.ndarray  # float64[k, S]: average weight each infoset collected (times sigma)
    visited: np.ndarray  # int32[k, S]: infosets the stream's passes touched, in order
    visited_stamp: np.ndarray  # int64[k, S]
    visited_count: np.ndarray  # int64[k, 8]: as Scratch.visited_count, in columns 0 and 1
    # (rows a cache line apart: written at every visit)
    stream_own: np.ndarray  # float64[k, S]: chance sampling: pi_p(I) in the round
    merged_stamp: np.ndarray  # int64[S]: the round in which each infoset was last merged
    round: np.ndarray  # int64[1]: rounds merged so far
    # per worker
    worker_rng: np.ndarray  # uint64[w, 8]: the running stream's state in columns 0-3 (rows a
    # cache line apart: written at every draw)
    merged: np.ndarray  # int32[w, S]: the infosets the worker merged this round
    merged_count: np.ndarray  # int64[w]
    reach: np.ndarray  # float64[w, N]
    value: np.ndarray  # float64[w, P, N]: terminal entries fixed to the utilities
    own_reach: np.ndarray  # float64[w, S]
    queue: np.ndarray  # int32[w, N]
    sampled_child: np.ndarray  # int32[w, N]
    stack: np.ndarray  # int32[w, N]
    # per worker, chance sampling's layout buffers (as Scratch's; empty for the other trainers,
    # whose per-node buffers above are empty for chance sampling)
    position_value: np.ndarray  # float64[w, P, N]: terminal entries fixed to the utilities
    position_own: np.ndarray  # float64[w, N]
    chance_pick: np.ndarray  # int32[w, K]
    chance_heap: np.ndarray  # int32[w, K]
    chance_stack: np.ndarray  # int32[w, 2, K + 1]
    segments: np.ndarray  # int32[w, 2, K + 1]


def new_stream_pool(tree: GameTree, rng: np.ndarray, workers: int,
                    layout: SamplingLayout | None = None) -> StreamPool:
    """A pool for the streams whose random states are the rows of ``rng`` (copied; no rows
    for the plain kernel), with buffers for ``workers`` threads: those of the depth-first
    passes, or with the sampling ``layout``, chance sampling's."""
    streams = rng.shape[0]
    num_infosets = tree.infoset_player.shape[0] if streams else 0
    return StreamPool(
        rng=np.array(rng, dtype=np.uint64).reshape(streams, 4),
        rng_start=np.zeros((streams, 4), dtype=np.uint64),
        touched=np.zeros(streams, dtype=np.int64),
        instant=np.zeros((streams, tree.num_action_slots if streams else 0)),
        baseline=np.zeros((streams, num_infosets)),
        average=np.zeros((streams, num_infosets)),
        visited=np.zeros((streams, num_infosets), dtype=np.int32),
        visited_stamp=np.full((streams, num_infosets), -1, dtype=np.int64),
        visited_count=_padded(streams),
        stream_own=np.zeros((streams, num_infosets if layout is not None else 0)),
        merged_stamp=np.full(num_infosets, -1, dtype=np.int64),
        round=np.zeros(1, dtype=np.int64),
        **worker_buffers(tree, workers if streams else 0, layout),
    )


def _padded(rows: int, dtype=np.int64) -> np.ndarray:
    """``rows x 8`` zeros: rows a cache line (64 bytes) long, for small rows that two threads
    write (sharing a line, they would pass it back and forth at every write). Kept whole, not
    sliced, so the array's numba type does not change with the number of rows."""
    return np.zeros((rows, 8), dtype=dtype)


def worker_buffers(tree: GameTree, workers: int,
                   layout: SamplingLayout | None = None) -> dict[str, np.ndarray]:
    """The per-worker fields of a :class:`StreamPool` (for a new thread count): the depth-first
    passes' buffers, or with the sampling ``layout``, chance sampling's."""
    num_nodes = tree.node_kind.shape[0]
    num_infosets = tree.infoset_player.shape[0] if workers else 0
    chance = layout is not None
    walk = 0 if chance else num_nodes  # the depth-first passes' per-node buffers
    positions = num_nodes if chance else 0
    num_chance = layout.chance_slot_start.shape[0] - 1 if chance else 0
    utility = layout.position_utility if chance else np.asarray(tree.utility, dtype=np.float64)
    return dict(
        worker_rng=_padded(workers, np.uint64),
        merged=np.zeros((workers, num_infosets), dtype=np.int32),
        merged_count=np.zeros(workers, dtype=np.int64),
        reach=np.zeros((workers, num_nodes)),
        value=np.repeat(utility[:, :walk][None], workers, axis=0),
        own_reach=np.zeros((workers, 0 if chance else num_infosets)),
        queue=np.zeros((workers, walk), dtype=np.int32),
        sampled_child=np.zeros((workers, walk), dtype=np.int32),
        stack=np.zeros((workers, walk), dtype=np.int32),
        position_value=np.repeat(utility[:, :positions][None], workers, axis=0),
        position_own=np.zeros((workers, positions)),
        chance_pick=np.zeros((workers, num_chance), dtype=np.int32),
        chance_heap=np.zeros((workers, num_chance), dtype=np.int32),
        chance_stack=np.zeros((workers, 2, num_chance + 1 if chance else 0), dtype=np.int32),
        segments=np.zeros((workers, 2, num_chance + 1 if chance else 0), dtype=np.int32),
    )
