"""Monte Carlo CFR that samples players' actions too (external and outcome sampling), and the
streams of every Monte Carlo trainer.

Lanctot, Waugh, Zinkevich and Bowling 2009, "Monte Carlo Sampling for Regret Minimization in
Extensive Games" (and Lanctot's 2013 thesis, chapter 4). Each pass belongs to one *traverser*
``p`` and draws from the trainer's own xoshiro256** stream, in depth-first pre-order (a node's
draw happens when it is first reached, before anything below it), so that a recursive oracle
replays the same draws:

* external sampling -- chance and the other players' actions are sampled (from the chance
  probabilities and the current strategy), every action of ``p`` is walked. The sampled-away
  reach cancels against its sampling probability, so ``v(h a) - v(h)`` at each visited history
  ``h`` of ``p`` is an unbiased estimate of the counterfactual regret.
* outcome sampling -- one terminal history per pass. At ``p``'s nodes the action is drawn from
  ``s(a) = e / |A| + (1 - e) sigma(a)`` (``e``: exploration), elsewhere from the strategy or
  the chance probabilities; the importance weights ``1 / q(z)`` make the regret estimates
  unbiased.

Chance sampling's passes are the layout kernels of :mod:`.sampled_pass`; with streams they
run here, in :func:`_chance_stream_task`.

Passes leave, like every pass, the slot sums ``instant`` and the baselines of ``p``'s visited
infosets (their difference is the regret estimate) and list those infosets; :mod:`.update`
folds them in with the regret rule. The average strategy is added during the pass, through
:func:`.update.add_to_average`:

* external sampling: at the sampled nodes of the player after ``p`` (``(p + 1) mod P``),
  ``sigma(I)`` with weight ``w_t / pi_o(h)``, where ``pi_o`` is the sampled reach of the
  players other than those two. In two-player games that is ``w_t``, OpenSpiel's "simple"
  averaging; the ``1 / pi_o`` importance weight keeps it unbiased with more players (each
  visit happens with probability ``pi_c pi_q pi_o``; the target is ``pi_q``, up to a factor
  constant per infoset, which normalisation removes). A one-player game has no one else: its
  player's own nodes get ``w_t pi_p(h)``, as in chance sampling.
* outcome sampling: "stochastically weighted averaging" -- at ``p``'s sampled nodes,
  ``sigma(I)`` with weight ``w_t pi_p(h) / q(h)``, ``q(h)`` the probability of sampling ``h``.
* chance sampling: at each of ``p``'s histories, ``sigma(I)`` with weight ``w_t pi_p(h)``
  (with streams, counted per infoset during the passes and weighted after them).

*Streams* (``streams=k, samples=b``; a :class:`~cfrkit.state.StreamPool`): a player's pass
becomes a *round* of ``k * b`` passes under the same strategy, ``b`` on each of ``k`` random
streams (the seed's stream jumped ``2**128`` draws per stream); chance sampling's one sample per
iteration replays the streams from the iteration's start in each player's round. The round runs
in two phases, and every round of a call in one parallel loop of one worker per thread
(:mod:`.phases`: starting a loop wakes the threads, tens of microseconds each time):

1. the passes -- workers take streams one at a time and run the stream's ``b`` passes on their
   own node buffers, into the stream's own sums; the average weights are deferred into those
   sums too (``deferred``: a pass must not write the shared average);
2. the merge -- the infosets of every ``w``-th block of ids make one task (``w`` of the pool's
   owners), which reads the streams' lists in stream order, and adds each stream's regret
   estimates (``instant - baseline``) and average weights, times ``1 / (k b)``, for its
   infosets; then, alternating, it updates them.

Every number is made in the same order whatever worker made it, so a run is bit-identical on
any thread count (it depends on ``k`` and ``b``). Small rows that two threads write often (a
stream's visited count, a worker's random state) are a cache line long, so no line passes
between the cores at every write.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit, prange, uint64

from ..state import Scratch
from ..statics import SamplingLayout
from ..tree import CHANCE
from .chance import draw_outcomes, sample_outcome
from .phases import (
    finish_task,
    open_phase,
    start_phases,
    take_phase_task,
    wait_for_phase_after,
)
from .random import next_double
from .sampled_pass import cut_segments, sampled_pass
from .update import (
    add_to_average,
    advance_discounts,
    clear_visited,
    list_visited,
    take_own_reach,
    update_infoset,
    update_visited,
)


@njit(cache=True, _nrt=False, inline="always")
def sample_action(rng, probs, s: int, m: int, exploration: float) -> int:
    """Draw an action index in ``[0, m)`` from ``e / m + (1 - e) probs[s + j]`` (one uniform
    draw, inverse CDF in action order). Never returns an action of probability 0, whatever
    the rounding of the running sum."""
    u = next_double(rng)
    uniform = exploration / m
    keep = 1.0 - exploration
    total = 0.0
    last = 0
    for j in range(m):
        p = uniform + keep * probs[s + j]
        if p > 0.0:
            last = j
            total += p
            if u < total:
                return j
    return last


@njit(cache=True, _nrt=False, inline="never")
def external_pass(
    tree, statics, state, scratch, stack, rng, player: int, weight: float, deferred,
) -> int:
    """One external-sampling pass of ``player``; returns the nodes touched.

    Forward: a depth-first walk (``stack``) in pre-order, drawing chance outcomes and the other
    players' actions as nodes are reached, listing the visited internal nodes in
    ``scratch.queue`` and ``player``'s infosets; it adds the average of the next player's
    sampled nodes. Backward: the list in reverse (children before parents) for the values:
    the sampled child's value at a sampled node, ``sum_a sigma(a) v(h a)`` at ``player``'s,
    where ``v(h a)`` goes to the slot sums and ``v(h)`` to the baseline. Writes
    ``scratch.value[player]``, ``scratch.reach`` (``pi_o``), ``scratch.sampled_child``,
    ``scratch.queue``, ``scratch.instant``, ``scratch.baseline`` and ``state.strategy_sum``
    (with ``deferred``, the average weights go to ``scratch.visits`` instead: see
    :func:`_average`).
    """
    node_kind = tree.node_kind
    node_player = tree.node_player
    node_infoset = tree.node_infoset
    node_slot = tree.node_slot
    first_child = tree.node_first_child
    num_children = tree.node_num_children
    probs = state.probs
    others = scratch.reach  # pi_o: sampled reach of the players other than p and the averaged
    chosen = scratch.sampled_child
    order = scratch.queue
    value = scratch.value[player]
    averaged = (player + 1) % tree.num_players
    solo = tree.num_players == 1
    chance_offset = tree.num_action_slots
    if num_children[0] == 0:  # a terminal root: nothing to draw or update
        return 1
    stack[0] = 0
    others[0] = 1.0
    top = 1
    count = 0
    touched = 1
    while top > 0:
        top -= 1
        n = stack[top]
        order[count] = n
        count += 1
        c = first_child[n]
        m = num_children[n]
        s = node_slot[n]
        reach = others[n]
        if node_kind[n] == CHANCE:
            k = sample_outcome(rng, statics.alias_prob, statics.alias_index, s - chance_offset, m)
        elif node_player[n] == player:
            infoset = node_infoset[n]
            list_visited(scratch, infoset)
            if solo:  # no one else to average it: its own reach, as chance sampling does
                take_own_reach(tree, state, scratch, infoset)
                _average(tree, state, scratch, infoset, weight * scratch.own_reach[infoset],
                         deferred)
            touched += m
            for j in range(m - 1, -1, -1):  # pushed last first: the first child pops first
                if num_children[c + j] > 0:
                    others[c + j] = reach
                    stack[top] = c + j
                    top += 1
            continue
        else:
            k = sample_action(rng, probs, s, m, 0.0)
            if node_player[n] == averaged:
                _average(tree, state, scratch, node_infoset[n], weight / reach, deferred)
            else:
                reach *= probs[s + k]
        chosen[n] = k
        touched += 1
        if num_children[c + k] > 0:
            others[c + k] = reach
            stack[top] = c + k
            top += 1
    instant = scratch.instant
    baseline = scratch.baseline
    for i in range(count - 1, -1, -1):
        n = order[i]
        c = first_child[n]
        if node_kind[n] == CHANCE or node_player[n] != player:
            value[n] = value[c + chosen[n]]
            continue
        s = node_slot[n]
        m = num_children[n]
        v = 0.0
        for j in range(m - 1, -1, -1):  # last child first, as the other passes sum
            v += probs[s + j] * value[c + j]
        value[n] = v
        baseline[node_infoset[n]] += v
        for j in range(m):
            instant[s + j] += value[c + j]
    return touched


@njit(cache=True, _nrt=False, inline="never")
def outcome_pass(
    tree, statics, state, scratch, stack, rng, player: int, weight: float, exploration: float,
    deferred,
) -> int:
    """One outcome-sampling pass of ``player``: one sampled path; returns the nodes touched.

    Forward, root to terminal: draw each node's child, keep the path in ``stack`` and, at
    ``player``'s nodes, ``q_p(h)`` (the product of ``player``'s sampling probabilities above
    ``h``) in ``scratch.reach``, and add the average with weight ``w_t pi_p(h) / q(h)``.
    Backward, terminal to root, with ``v`` the sampled utility times the tail's
    ``sigma / s`` ratios: at ``player``'s node with sampled action ``k``, the sampled action's
    value is ``v / s(k)`` and the node's ``sigma(k) v / s(k)``; both, divided by ``q_p(h)``
    (chance's and the others' probabilities cancel against their sampling), go to the slot
    sum of ``k`` and to the baseline. Writes ``scratch.reach``, ``scratch.sampled_child``,
    ``scratch.instant``, ``scratch.baseline`` and ``state.strategy_sum`` (``scratch.visits``
    with ``deferred``).
    """
    node_kind = tree.node_kind
    node_player = tree.node_player
    node_infoset = tree.node_infoset
    node_slot = tree.node_slot
    first_child = tree.node_first_child
    num_children = tree.node_num_children
    probs = state.probs
    chosen = scratch.sampled_child
    chance_offset = tree.num_action_slots
    own = 1.0  # pi_p(h)
    own_sampling = 1.0  # q_p(h)
    sampling = 1.0  # q(h): every sampling probability on the path, chance included
    depth = 0
    n = 0
    while num_children[n] > 0:
        stack[depth] = n
        depth += 1
        m = num_children[n]
        s = node_slot[n]
        if node_kind[n] == CHANCE:
            k = sample_outcome(rng, statics.alias_prob, statics.alias_index, s - chance_offset, m)
            sampling *= probs[s + k]
        elif node_player[n] == player:
            infoset = node_infoset[n]
            list_visited(scratch, infoset)
            _average(tree, state, scratch, infoset, weight * own / sampling, deferred)
            k = sample_action(rng, probs, s, m, exploration)
            scratch.reach[n] = own_sampling
            explored = exploration / m + (1.0 - exploration) * probs[s + k]
            own *= probs[s + k]
            own_sampling *= explored
            sampling *= explored
        else:
            k = sample_action(rng, probs, s, m, 0.0)
            sampling *= probs[s + k]
        chosen[n] = k
        n = first_child[n] + k
    v = scratch.value[player, n]  # a terminal: its utility
    for i in range(depth - 1, -1, -1):
        n = stack[i]
        if node_kind[n] == CHANCE or node_player[n] != player:
            continue  # sampled with its own probability: sigma / s = 1
        s = node_slot[n]
        k = chosen[n]
        explored = exploration / num_children[n] + (1.0 - exploration) * probs[s + k]
        sampled_value = v / explored
        v = probs[s + k] * sampled_value
        scale = 1.0 / scratch.reach[n]
        scratch.instant[s + k] += sampled_value * scale
        scratch.baseline[node_infoset[n]] += v * scale
    return depth + 1


#: A round's merge hands out infosets to workers in blocks of this many consecutive ids
#: (interleaved: both players' infosets spread over every worker).
_MERGE_BLOCK = 64


class AliasTables(NamedTuple):
    """The part of :class:`~cfrkit.statics.Statics` the passes read."""

    alias_prob: np.ndarray
    alias_index: np.ndarray


class SampledTables(NamedTuple):
    """The part of :class:`~cfrkit.statics.Statics` the chance-sampled layout passes read,
    built inside a worker (a parallel loop cannot be handed the statics whole)."""

    alias_prob: np.ndarray
    alias_index: np.ndarray
    layout: object


@njit(cache=True, _nrt=False, inline="always")
def _average(tree, state, scratch, infoset: int, weight: float, deferred) -> None:
    """Add ``weight * sigma(I)`` to the average -- or, ``deferred`` (a stream's pass, which must
    not write the shared sums), list ``I`` and add ``weight`` to ``scratch.visits[I]``, for
    :func:`_merge_streams` to add in stream order."""
    if deferred:
        list_visited(scratch, infoset)
        scratch.visits[uint64(infoset)] += weight
    else:
        add_to_average(tree, state, infoset, weight)


@njit(cache=True, _nrt=False, inline="always")
def _one_pass(
    tree, statics, state, scratch, stack, rng, player, weight, outcome, exploration, deferred,
) -> int:
    if outcome:
        return outcome_pass(
            tree, statics, state, scratch, stack, rng, player, weight, exploration, deferred
        )
    return external_pass(tree, statics, state, scratch, stack, rng, player, weight, deferred)


@njit(cache=True, _nrt=False, inline="never")
def _stream_task(
    tree, statics, state, scratch, pool, worker: int, stream: int, samples: int, player: int,
    weight: float, outcome, exploration: float,
) -> None:
    """Stream ``stream``'s ``samples`` passes into its own sums, on worker ``worker``'s node
    buffers (a :class:`Scratch` assembled from both; the fields passes do not read are the
    trainer's own, empty ones)."""
    w = uint64(worker)
    s = uint64(stream)
    rng = _load_stream(pool, w, s)
    view = _stream_view(scratch, pool, w, s, pool.own_reach[w])
    touched = 0
    for _ in range(samples):
        touched += _one_pass(tree, statics, state, view, pool.stack[w], rng, player, weight,
                             outcome, exploration, True)
    _end_stream(pool, rng, s, touched)


@njit(cache=True, _nrt=False, inline="always")
def _load_stream(pool, w, s):
    """Stream ``s``'s random state, loaded into worker ``w``'s row (two streams' rows share a
    cache line, which two threads drawing would pass back and forth)."""
    rng = pool.worker_rng[w]
    for b in range(4):
        rng[b] = pool.rng[s, b]
    return rng


@njit(cache=True, _nrt=False, inline="always")
def _end_stream(pool, rng, s, touched: int) -> None:
    """Keep stream ``s``'s random state and the nodes its passes touched."""
    for b in range(4):
        pool.rng[s, b] = rng[b]
    pool.touched[s] = touched


@njit(cache=True, _nrt=False, inline="always")
def _stream_view(scratch, pool, w, s, own_reach) -> Scratch:
    """A :class:`Scratch` for stream ``s``'s passes on worker ``w``: the stream's sums, the
    worker's buffers (those of the kind of pass the pool was made for; the others are empty),
    and the trainer's own, unread fields."""
    return Scratch(
        reach=pool.reach[w], value=pool.value[w], own_reach=own_reach,
        instant=pool.instant[s], baseline=pool.baseline[s], visits=pool.average[s],
        queue=pool.queue[w], visited=pool.visited[s], visited_stamp=pool.visited_stamp[s],
        visited_count=pool.visited_count[s], joint_reach=scratch.joint_reach,
        sampled_child=pool.sampled_child[w], sample_stamp=scratch.sample_stamp,
        sample_id=scratch.sample_id, work=scratch.work, subtree_queue=scratch.subtree_queue,
        position_value=pool.position_value[w], position_own=pool.position_own[w],
        chance_pick=pool.chance_pick[w], chance_heap=pool.chance_heap[w],
        chance_stack=pool.chance_stack[w], segments=pool.segments[w],
    )


@njit(cache=True, _nrt=False, inline="always")
def _layout_for_prange(layout) -> SamplingLayout:
    """``layout`` rebuilt field by field: numba's parallel loops take a bundle made by a call,
    not one read from another bundle."""
    return SamplingLayout(
        layout.position_node, layout.position_utility, layout.position_edge,
        layout.region_start, layout.region_inner, layout.inner, layout.region_values,
        layout.region_decisions, layout.decisions, layout.infoset_once, layout.next_chance,
        layout.chance_position, layout.chance_slot_start, layout.chance_child_region,
        layout.chance_below_start, layout.chance_below,
    )


@njit(cache=True, _nrt=False, inline="never")
def _chance_stream_task(
    tree, tables, layout, state, scratch, pool, worker: int, stream: int, samples: int,
    player: int, weight: float, lower: float,
) -> None:
    """:func:`_stream_task` for chance sampling: the stream's ``samples`` passes are the
    layout kernels' (``draw_outcomes``, ``cut_segments``, ``sampled_pass`` without fused
    updates), on the worker's position buffers, into the stream's sums; then the stream's visit
    counts become average weights, ``w_t pi_p(I)`` per visit (``pi_p`` is the same for every
    pass of a round: the strategy does not change within it)."""
    w = uint64(worker)
    s = uint64(stream)
    rng = _load_stream(pool, w, s)
    statics = SampledTables(tables.alias_prob, tables.alias_index, layout)
    view = _stream_view(scratch, pool, w, s, pool.stream_own[s])
    touched = 0
    for _ in range(samples):
        draw_outcomes(statics, rng, view)
        count, skipped = cut_segments(statics, view)
        touched += skipped + sampled_pass(tree, statics, state, view, count, player, False, weight,
                                          lower)
    for k in range(pool.visited_count[s, 0]):
        i = uint64(pool.visited[s, uint64(k)])
        pool.average[s, i] *= weight * pool.stream_own[s, i]
    _end_stream(pool, rng, s, touched)


@njit(cache=True, _nrt=False, inline="never")
def _merge_worker(
    tree, state, scratch, pool, worker: int, samples: int, player: int, alternating,
    dpos: float, dneg: float, lower: float, lazy,
) -> None:
    """Worker ``worker``'s share of a round's merge: the infosets of the blocks of
    ``_MERGE_BLOCK`` ids it owns. It reads the streams' lists in stream order and, for its
    infosets, adds each stream's sums scaled by ``1 / (k * samples)`` (the mean of the
    round's independent estimates): the average weight into the average, the player's regret
    estimates into ``scratch.instant``; it empties the streams' sums, then, with
    ``alternating``, updates the player's infosets it merged."""
    w = uint64(worker)
    workers = pool.merged_count.shape[0]
    streams = pool.rng.shape[0]
    share = 1.0 / (streams * samples)
    this_round = pool.round[0]
    merged = 0  # counted here, stored once: the workers' counts share a cache line
    for j in range(streams):
        s = uint64(j)
        for k in range(pool.visited_count[s, 0]):
            i = uint64(pool.visited[s, uint64(k)])
            if (i // _MERGE_BLOCK) % workers != w:
                continue
            average = pool.average[s, i]
            if average != 0.0:
                add_to_average(tree, state, i, share * average)
                pool.average[s, i] = 0.0
            if pool.merged_stamp[i] != this_round:
                pool.merged_stamp[i] = this_round
                pool.merged[w, uint64(merged)] = i
                merged += 1
            if tree.infoset_player[i] != player:
                continue  # only averaged in this round
            # the stream's regret estimates, instant - baseline, are what is averaged (the
            # baseline of the merged sums stays 0): a stream whose estimate is exactly 0
            # adds exactly 0, so regret matching sees the zeros the plain kernel would
            baseline = pool.baseline[s, i]
            pool.baseline[s, i] = 0.0
            start = tree.infoset_first_slot[i]
            for a in range(start, start + tree.infoset_num_actions[i]):
                slot = uint64(a)
                scratch.instant[slot] += share * (pool.instant[s, slot] - baseline)
                pool.instant[s, slot] = 0.0
    pool.merged_count[w] = merged
    if alternating:
        for k in range(merged):
            i = uint64(pool.merged[w, uint64(k)])
            if tree.infoset_player[i] == player:
                update_infoset(tree, state, scratch, i, dpos, dneg, lower, False, lazy)


@njit(cache=True, _nrt=False, inline="always")
def _after_merge(tree, scratch, pool, player: int, alternating) -> int:
    """After a round's merge: empty the streams' lists; without ``alternating``, list the
    player's merged infosets in ``scratch`` for the update at the end of the iteration; start
    the next round. Returns the nodes the round touched."""
    touched = 0
    for j in range(pool.rng.shape[0]):
        touched += pool.touched[j]
        pool.visited_count[j, 0] = 0
        pool.visited_count[j, 1] += 1
    if not alternating:
        for w in range(pool.merged_count.shape[0]):
            for k in range(pool.merged_count[w]):
                i = pool.merged[w, k]
                if tree.infoset_player[i] == player:
                    list_visited(scratch, i)
    pool.round[0] += 1
    return touched


@njit(cache=True, _nrt=False, inline="always")
def _rewind_streams(pool, first) -> None:
    """At an iteration's first round keep the streams' random states; at the later rounds
    start them there again."""
    for j in range(pool.rng.shape[0]):
        for b in range(4):
            if first:
                pool.rng_start[j, b] = pool.rng[j, b]
            else:
                pool.rng[j, b] = pool.rng_start[j, b]


@njit(cache=True, _nrt=False, inline="always")
def _mccfr_block(
    tree, statics, state, scratch, stack, pool, counter, samples, schedule, alternating, lower,
    lazy, outcome, chance, exploration: float, streams, shared,
) -> int:
    """``schedule.shape[1]`` iterations: each player's pass in turn (and its update at once
    when ``alternating``; else every update after the last pass, all on the same profile).

    With streams (``pool`` has rows), a player's pass is a *round*: ``samples`` passes per
    stream, then the merge (and, alternating, the update) infoset by infoset, run by
    ``counter[1]`` workers in one parallel loop for the whole call (in turn when this is
    inlined in a serial kernel: ``prange`` is ``range`` there), phase by phase (:mod:`.phases`:
    the rounds' passes, then their merges). ``chance``: the rounds' passes are chance
    sampling's (:func:`_chance_stream_task`). With ``shared`` (chance sampling's one sample
    per iteration), every player's round starts from the streams' states at the iteration's
    start, so it draws the same chance outcomes (a chance sample's draws depend on neither the
    player nor the strategy).
    """
    if streams:
        start_phases(counter)
        # numba cannot hand a parallel loop a bundle holding a bundle (statics.layout)
        tables = AliasTables(statics.alias_prob, statics.alias_index)
        # the workers take uint64(worker): a parallel loop's index is unsigned and a serial
        # loop's signed, and one type lets a worker compile once for both the serial and the
        # parallel kernels (it compiled twice, 15-20 s more)
        if chance:
            layout = _layout_for_prange(statics.layout)
            for worker in prange(counter[1]):
                _rounds_worker(tree, tables, layout, state, scratch, pool, counter,
                               uint64(worker), samples, schedule, alternating, lower, lazy,
                               outcome, exploration, shared)
        else:
            for worker in prange(counter[1]):
                _rounds_worker(tree, tables, None, state, scratch, pool, counter,
                               uint64(worker), samples, schedule, alternating, lower, lazy,
                               outcome, exploration, shared)
        return counter[4]
    num_players = tree.num_players
    touched = 0
    for k in range(schedule.shape[1]):
        if lazy:
            advance_discounts(state, schedule[0, k], schedule[1, k])
        weight = schedule[2, k]
        for player in range(num_players):
            touched += _one_pass(tree, statics, state, scratch, stack, state.rng, player,
                                 weight, outcome, exploration, False)
            if alternating or player == num_players - 1:
                update_visited(
                    tree, state, scratch, player if alternating else 0, player + 1,
                    schedule[0, k], schedule[1, k], weight, lower, False, lazy, False,
                )
                clear_visited(scratch)
    return touched


@njit(cache=True, _nrt=False, inline="always")
def _round_phase(phase, num_players):
    """Phase ``phase`` of a call with streams: ``(k, player, merge)``, the iteration of the
    schedule, the player whose round it is, and whether it is the round's merge (else its
    passes)."""
    return phase // (2 * num_players), (phase // 2) % num_players, phase % 2 == 1


@njit(cache=True, _nrt=False, inline="never")
def _rounds_open_next(tree, state, scratch, pool, counter, schedule, alternating, lower, lazy,
                      shared, finished) -> None:
    """After phase ``finished`` (-1: before the first), the serial work up to the next phase,
    which it then opens (or ends the call): after a merge, the round's end
    (:func:`_after_merge`, its nodes counted in ``counter[4]``) and, simultaneous, the
    iteration's update after its last round; before a round's passes, the discounts at an
    iteration's start and, ``shared``, the streams rewound."""
    num_players = tree.num_players
    if finished < 0:
        counter[4] = 0
    else:
        k, player, merge = _round_phase(finished, num_players)
        if merge:
            counter[4] += _after_merge(tree, scratch, pool, player, alternating)
            if not alternating and player == num_players - 1:
                update_visited(tree, state, scratch, 0, num_players, schedule[0, k],
                               schedule[1, k], schedule[2, k], lower, False, lazy, False)
                clear_visited(scratch)
    phase = finished + 1
    if phase < schedule.shape[1] * 2 * num_players:
        k, player, merge = _round_phase(phase, num_players)
        if not merge:
            if lazy and player == 0:
                advance_discounts(state, schedule[0, k], schedule[1, k])
            if shared:
                _rewind_streams(pool, player == 0)
    open_phase(counter, phase)


@njit(cache=True, _nrt=False, inline="never")
def _rounds_worker(tree, tables, layout, state, scratch, pool, counter, worker, samples,
                   schedule, alternating, lower, lazy, outcome, exploration: float,
                   shared) -> None:
    """One worker's share of a call's rounds: streams and merge owners taken one at a time,
    phase by phase (see :mod:`.phases`). ``layout`` None: external or outcome sampling's
    passes (:func:`_stream_task`, numba drops the other branch); else chance sampling's
    (:func:`_chance_stream_task`)."""
    num_players = tree.num_players
    while True:
        phase, task = take_phase_task(counter)
        if phase >= schedule.shape[1] * 2 * num_players:
            return
        k, player, merge = _round_phase(phase, num_players)
        tasks = 1 if phase < 0 else pool.merged_count.shape[0] if merge else pool.rng.shape[0]
        if task < tasks:
            if phase < 0:
                pass  # the start
            elif merge:
                _merge_worker(tree, state, scratch, pool, uint64(task), samples, player,
                              alternating, schedule[0, k], schedule[1, k], lower, lazy)
            elif layout is None:
                _stream_task(tree, tables, state, scratch, pool, worker, task, samples, player,
                             schedule[2, k], outcome, exploration)
            else:
                _chance_stream_task(tree, tables, layout, state, scratch, pool, worker, task,
                                    samples, player, schedule[2, k], lower)
            if finish_task(counter, tasks):
                _rounds_open_next(tree, state, scratch, pool, counter, schedule, alternating,
                                  lower, lazy, shared, phase)
        elif not wait_for_phase_after(counter, phase):
            return  # waited too long: another thread holds a task and carries on without us


# One entry point per scheme and kind of kernel: the scheme, and whether there are streams, are
# constants in each, so numba compiles only what that kernel runs (the plain kernels, the ones
# most runs use, compile in half the time of the stream kernels).


@njit(cache=True, nogil=True, _nrt=False)
def run_external(tree, statics, state, scratch, stack, pool, counter, samples, schedule,
                 alternating, lower, lazy) -> int:
    """External-sampling MCCFR, one pass per player and iteration: a block of iterations in
    one call (see :func:`external_pass` and :func:`_mccfr_block`)."""
    return _mccfr_block(tree, statics, state, scratch, stack, pool, counter, samples, schedule,
                        alternating, lower, lazy, False, False, 0.0, False, False)


@njit(cache=True, nogil=True, _nrt=False)
def run_external_streams(tree, statics, state, scratch, stack, pool, counter, samples,
                         schedule, alternating, lower, lazy) -> int:
    """:func:`run_external` with the pool's streams, on one thread."""
    return _mccfr_block(tree, statics, state, scratch, stack, pool, counter, samples, schedule,
                        alternating, lower, lazy, False, False, 0.0, True, False)


@njit(cache=True, nogil=True, parallel=True, _nrt=False)
def run_external_parallel(tree, statics, state, scratch, stack, pool, counter, samples,
                          schedule, alternating, lower, lazy) -> int:
    """:func:`run_external_streams` with each round's streams, and its merge, on
    ``counter[1]`` threads: the same numbers, bit for bit, on any count."""
    return _mccfr_block(tree, statics, state, scratch, stack, pool, counter, samples, schedule,
                        alternating, lower, lazy, False, False, 0.0, True, False)


@njit(cache=True, nogil=True, _nrt=False)
def run_outcome(tree, statics, state, scratch, stack, pool, counter, samples, schedule,
                alternating, lower, lazy, exploration: float) -> int:
    """Outcome-sampling MCCFR, one pass per player and iteration: a block of iterations in
    one call (see :func:`outcome_pass` and :func:`_mccfr_block`)."""
    return _mccfr_block(tree, statics, state, scratch, stack, pool, counter, samples, schedule,
                        alternating, lower, lazy, True, False, exploration, False, False)


@njit(cache=True, nogil=True, _nrt=False)
def run_outcome_streams(tree, statics, state, scratch, stack, pool, counter, samples,
                        schedule, alternating, lower, lazy, exploration: float) -> int:
    """:func:`run_outcome` with the pool's streams, on one thread."""
    return _mccfr_block(tree, statics, state, scratch, stack, pool, counter, samples, schedule,
                        alternating, lower, lazy, True, False, exploration, True, False)


@njit(cache=True, nogil=True, parallel=True, _nrt=False)
def run_outcome_parallel(tree, statics, state, scratch, stack, pool, counter, samples,
                         schedule, alternating, lower, lazy, exploration: float) -> int:
    """:func:`run_outcome_streams` on ``counter[1]`` threads (see
    :func:`run_external_parallel`)."""
    return _mccfr_block(tree, statics, state, scratch, stack, pool, counter, samples, schedule,
                        alternating, lower, lazy, True, False, exploration, True, False)


@njit(cache=True, nogil=True, _nrt=False)
def run_chance_streams(tree, statics, state, scratch, stack, pool, counter, samples, schedule,
                       alternating, lower, lazy, per_player) -> int:
    """Chance-sampled CFR with the pool's streams (:func:`_chance_stream_task`), on one
    thread: one set of samples per iteration shared by the players' rounds, or a fresh one per
    round (``per_player``). Without streams, ``ChanceSampledCFR`` runs the drivers of
    :mod:`.drivers`."""
    return _mccfr_block(tree, statics, state, scratch, stack, pool, counter, samples, schedule,
                        alternating, lower, lazy, False, True, 0.0, True, not per_player)


@njit(cache=True, nogil=True, parallel=True, _nrt=False)
def run_chance_parallel(tree, statics, state, scratch, stack, pool, counter, samples,
                        schedule, alternating, lower, lazy, per_player) -> int:
    """:func:`run_chance_streams` on ``counter[1]`` threads (see
    :func:`run_external_parallel`)."""
    return _mccfr_block(tree, statics, state, scratch, stack, pool, counter, samples, schedule,
                        alternating, lower, lazy, False, True, 0.0, True, not per_player)
