"""Full passes and exact evaluation on several cores, with the serial kernels' bits.

The tree is breadth-first: a node's children are contiguous and in the next level, so the
descendants of a contiguous range of nodes of one level are a contiguous range of every deeper
level. The *parallel layout* (:func:`cfrkit.statics.parallel_layout`) cuts the first level with
enough nodes (the *split level*) into *tasks* of about equal subtree size and records each
task's range in every level below. A pass is then:

* the *top* (the levels above the split, a few dozen nodes): serial;
* the tasks, in parallel: each walks its subtrees forward (``pi_{-p}``, level by level) and
  backward (values, a family summed from its last child), exactly the serial loops restricted
  to its ranges -- a node's value and reach read only nodes of its own task or of the top;
* the slot sums and baselines, in parallel by *chunks* of the player's infosets: each infoset
  walks its histories from the last to the first, the order in which the serial backward loop
  meets them, so every sum has the same terms in the same order;
* the update, by the same chunks (the own reaches are taken first, serially: each needs its
  previous infoset's strategy as played). With alternating updates the sums and the update of
  an infoset go together: neither reads what the other writes for another infoset.

No task or chunk writes what another reads, and every number is made by the operations of the
serial kernel in its order: the results are bit-identical to the serial kernels, whatever the
number of threads and whichever thread does which task. (A numba reduction, or per-thread
buffers summed at the end, would round by the thread count.)

Each parallel loop runs one *worker* per thread (``prange(counter[1])``), and the workers take
tasks (or chunks, or pieces of a wave) one at a time from an atomic counter (``take_task``):
numba's ``prange`` hands each thread a fixed block of iterations, so a thread that lost its core to
another process would hold the whole loop back by its block; this way it holds it back by one
task. The counter is the caller's (``_threads.workers``), as is the thread count: numba's own
count cannot be read from a cached kernel.

Best responses go by *waves* of the serial kernel's units (a unit's wave is one more than the
latest wave of the units it reads), the units of a wave in parallel; expected values by the
tasks, then the top.

Two numba rules every parallel loop body here follows: loop indices are cast to ``uint64`` (numba
wraps negative signed indices, a test on every access: measured 60% slower on the forward loop),
and nothing is written through a NamedTuple's field (numba loses those writes inside a
``prange``, numba issues #5872 and #7135): the bodies call non-inlined functions, which write
through the bundles they are given, or write plain arrays.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange, types, uint64
from numba.core import cgutils
from numba.extending import intrinsic

from .best_response import best_infoset_action, best_response_node, expected_value_node
from .drivers import step_order
from .update import full_update_infoset, take_own_reach


@intrinsic
def take_task(typingctx, counter):
    """``counter[0] += 1`` atomically, returning the value before (an LLVM ``atomicrmw``;
    numba has no atomic operations on the CPU)."""
    if not (isinstance(counter, types.Array) and counter.dtype == types.int64):
        return None

    def codegen(context, builder, signature, args):
        array = context.make_array(signature.args[0])(context, builder, args[0])
        zero = context.get_constant(types.intp, 0)
        pointer = cgutils.get_item_pointer(context, builder, signature.args[0], array, [zero])
        one = context.get_constant(types.int64, 1)
        return builder.atomic_rmw("add", pointer, one, "seq_cst")

    return types.int64(counter), codegen


@njit(cache=True, _nrt=False, inline="always")
def _forward_range(parent, edge_slot, edge_player, probs, reach, player: int, lo, hi) -> None:
    """``reach[c]`` for the nodes ``c`` in ``[lo, hi)``, as :func:`.full_pass.full_forward`."""
    for c in range(uint64(lo), uint64(hi)):
        r = reach[uint64(parent[c])]
        reach[c] = r if edge_player[c] == player else r * probs[uint64(edge_slot[c])]


@njit(cache=True, _nrt=False, inline="always")
def _values_range(parent, edge_slot, edge_last, probs, value, lo, hi) -> None:
    """The values of the parents of the nodes ``[lo, hi)`` (whole families), each summed from
    its last child as in :func:`.full_pass.full_backward`."""
    total = 0.0
    family = uint64(0)
    for k in range(uint64(hi) - uint64(lo)):
        c = uint64(hi) - uint64(1) - k
        if edge_last[c]:
            if k != uint64(0):
                value[family] = total
            family = uint64(parent[c])
            total = 0.0
        total += probs[uint64(edge_slot[c])] * value[c]
    if hi > lo:
        value[family] = total


@njit(cache=True, _nrt=False, inline="never")
def _task_pass(parent, edge_slot, edge_player, edge_last, bound, probs, reach, value,
               player: int, task: int, values) -> None:
    """Task ``task``'s subtrees: reach forward from the split level, then (``values``) values
    backward to it (``bound[r, task]`` .. ``bound[r, task + 1]``: the task's nodes in row
    ``r``)."""
    t = uint64(task)
    for r in range(bound.shape[0]):
        _forward_range(parent, edge_slot, edge_player, probs, reach, player,
                       bound[r, t], bound[r, t + uint64(1)])
    if not values:
        return
    for r in range(bound.shape[0] - 1, 0, -1):
        _values_range(parent, edge_slot, edge_last, probs, value, bound[r, t],
                      bound[r, t + uint64(1)])


@njit(cache=True, _nrt=False, inline="always")
def _slot_sums(tree, reach, value, instant, baseline, infoset) -> None:
    """``baseline[I] += pi(h) v(h)``, ``instant[I, a] += pi(h) v(h a)`` over the histories
    ``h`` of ``infoset``, from the last: the serial backward loop's order.

    Each sum runs in a register over all the histories, then is stored once: infosets of
    neighbouring chunks share cache lines, and a store per history made two threads slower than
    one on five-player Kuhn poker (480 infosets, ~240 histories each).
    """
    i = uint64(infoset)
    first = uint64(tree.infoset_first_slot[i])
    actions = uint64(tree.infoset_num_actions[i])
    first_child = tree.node_first_child
    nodes = tree.infoset_nodes
    start = uint64(tree.infoset_node_start[i])
    stop = uint64(tree.infoset_node_start[i + uint64(1)])
    total = baseline[i]
    for k in range(stop - start):
        h = uint64(nodes[stop - uint64(1) - k])
        total += reach[h] * value[h]
    baseline[i] = total
    for a in range(actions):
        total = instant[first + a]
        for k in range(stop - start):
            h = uint64(nodes[stop - uint64(1) - k])
            total += reach[h] * value[uint64(first_child[h]) + a]
        instant[first + a] = total


@njit(cache=True, _nrt=False, inline="never")
def _infoset_chunk(tree, state, scratch, player: int, lo, hi, sums, update, dpos, dneg,
                   weight, lower, predictive) -> None:
    """Infosets ``[lo, hi)`` of ``player``: their slot sums (``sums``), then their update
    (``update``: :func:`.update.update_player`'s step, the own reaches already taken)."""
    value = scratch.value[player]
    for infoset in range(uint64(lo), uint64(hi)):
        if sums:
            _slot_sums(tree, scratch.reach, value, scratch.instant, scratch.baseline, infoset)
        if update:
            full_update_infoset(tree, state, scratch, infoset, dpos, dneg, weight, lower, predictive)


@njit(cache=True, _nrt=False, inline="always")
def parallel_reach(tree, layout, counter, probs, reach, value, player: int, values) -> None:
    """``reach`` (``pi_{-player}``) everywhere and, with ``values``, ``player``'s values
    (``value``, terminals preset) everywhere: the top forward, the tasks, the top backward."""
    parent = tree.node_parent
    edge_slot = tree.edge_slot
    edge_player = tree.edge_player
    edge_last = tree.edge_last
    bound = layout.task_bound
    tasks = bound.shape[1] - 1
    reach[0] = 1.0
    _forward_range(parent, edge_slot, edge_player, probs, reach, player, 1, layout.top_forward_end)
    counter[0] = 0
    for _ in prange(counter[1]):  # one worker per thread, taking tasks in turn
        while True:
            task = take_task(counter)
            if task >= tasks:
                break
            _task_pass(parent, edge_slot, edge_player, edge_last, bound, probs, reach, value,
                       player, task, values)
    if values:
        _values_range(parent, edge_slot, edge_last, probs, value, 1, layout.top_backward_end)


@njit(cache=True, _nrt=False, inline="always")
def parallel_infosets(tree, layout, counter, state, scratch, player: int, sums, update, dpos,
                      dneg, weight, lower, predictive) -> None:
    """Slot sums and/or the update of ``player``'s infosets, chunk by chunk in parallel."""
    if update:
        for infoset in range(tree.player_infoset_start[player],
                             tree.player_infoset_start[player + 1]):
            take_own_reach(tree, state, scratch, infoset)
    chunks = layout.infoset_chunks[player]
    count = chunks.shape[0] - 1
    counter[0] = 0
    for _ in prange(counter[1]):
        while True:
            k = take_task(counter)
            if k >= count:
                break
            _infoset_chunk(tree, state, scratch, player, chunks[k], chunks[k + 1], sums, update,
                           dpos, dneg, weight, lower, predictive)


@njit(cache=True, nogil=True, parallel=True)
def run_full_parallel(tree, layout, counter, state, scratch, schedule, alternating, lower,
                      predictive) -> int:
    """:func:`.drivers.run_full` on the cores ``numba.set_num_threads`` allows: the same
    arrays, bit for bit. ``counter`` (int64[2]): the call's own task counter (workspace), then
    the number of threads (numba's own count cannot be read in a cached kernel)."""
    num_players = tree.num_players
    for k in range(schedule.shape[1]):
        for step in range(2 * num_players):
            player, is_pass = step_order(step, num_players, alternating)
            dpos, dneg, weight = schedule[0, k], schedule[1, k], schedule[2, k]
            if is_pass:
                parallel_reach(tree, layout, counter, state.probs, scratch.reach,
                               scratch.value[player], player, True)
            # the slot sums right after a simultaneous pass (the next pass overwrites the
            # reach), with the update under alternating ones: one call site, so one parallel
            # loop to compile
            sums = is_pass != alternating
            if sums or not is_pass:
                parallel_infosets(tree, layout, counter, state, scratch, player, sums, not is_pass,
                                  dpos, dneg, weight, lower, predictive)
    return schedule.shape[1] * num_players * tree.node_kind.shape[0]


@njit(cache=True, nogil=True, parallel=True)
def expected_values_parallel(tree, layout, counter, probs: np.ndarray, value: np.ndarray) -> None:
    """:func:`.best_response.expected_values` by tasks, then the top: the same bits."""
    bound = layout.task_bound
    tasks = bound.shape[1] - 1
    counter[0] = 0
    for _ in prange(counter[1]):
        while True:
            task = take_task(counter)
            if task >= tasks:
                break
            _task_values(tree, bound, probs, value, task)
    for k in range(layout.top_forward_end):
        n = uint64(layout.top_forward_end - 1 - k)
        if tree.node_num_children[n] > 0:
            expected_value_node(tree, probs, value, n)


@njit(cache=True, _nrt=False, inline="never")
def _task_values(tree, bound, probs, value, task: int) -> None:
    """Every player's value at the internal nodes of task ``task``, deepest row first."""
    t = uint64(task)
    for r in range(bound.shape[0] - 1, -1, -1):
        lo = uint64(bound[r, t])
        hi = uint64(bound[r, t + uint64(1)])
        for k in range(hi - lo):
            n = hi - uint64(1) - k
            if tree.node_num_children[n] > 0:
                expected_value_node(tree, probs, value, n)


@njit(cache=True, nogil=True, parallel=True)
def best_response_value_parallel(
    tree, layout, counter, probs: np.ndarray, player: int, units: np.ndarray,
    wave_start: np.ndarray, min_wave: int, reach: np.ndarray, value: np.ndarray,
    choice: np.ndarray,
) -> float:
    """:func:`.best_response.best_response_value` with the reach by tasks and the units wave
    by wave (``units[wave_start[w]:wave_start[w + 1]]``, see
    :func:`.best_response.best_response_waves`), each wave's units in parallel: the same bits.

    A wave of fewer than ``min_wave`` units runs on the calling thread, in one call with the
    small waves after it: starting a parallel loop costs microseconds, more than such a wave's
    work, and a deep, narrow game has a wave per level. Each unit is computed the same either
    way.
    """
    parallel_reach(tree, layout, counter, probs, reach, value, player, False)
    waves = wave_start.shape[0] - 1
    w = 0
    while w < waves:
        first = wave_start[w]
        size = wave_start[w + 1] - first
        w += 1
        if size < min_wave:  # with the small waves after it, in order, on this thread
            while w < waves and wave_start[w + 1] - wave_start[w] < min_wave:
                w += 1
            _wave_units(tree, probs, units, first, wave_start[w], reach, value, choice)
            continue
        pieces = min(size, _PIECES)
        counter[0] = 0
        for _ in prange(counter[1]):
            while True:
                k = take_task(counter)
                if k >= pieces:
                    break
                _wave_units(tree, probs, units, first + size * k // pieces,
                            first + size * (k + 1) // pieces, reach, value, choice)
    return value[0]


@njit(cache=True, nogil=True)
def _wave_units(tree, probs, units, lo, hi, reach, value, choice) -> None:
    """The best-response units ``units[lo:hi]`` of one wave, in order."""
    num_nodes = uint64(tree.node_kind.shape[0])
    for i in range(lo, hi):
        unit = uint64(units[i])
        if unit < num_nodes:
            best_response_node(tree, probs, value, unit)
        else:
            best_infoset_action(tree, unit - num_nodes, reach, value, choice)


_PIECES = 64  # a best-response wave is shared out in up to this many pieces


@njit(cache=True, nogil=True, parallel=True)
def start_workers(counter: np.ndarray) -> None:
    """A parallel loop with no work (each worker takes one task): what starting and joining the
    workers costs, which ``_threads.parallel_wave_size`` times."""
    for _ in prange(counter[1]):
        take_task(counter)
