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
tasks (or chunks, or pieces of a wave) one at a time from an atomic counter (``take_task``,
or the phases' shared word):
numba's ``prange`` hands each thread a fixed block of iterations, so a thread that lost its core to
another process would hold the whole loop back by its block; this way it holds it back by one
task. The counter is the caller's (``_threads.workers``), as is the thread count: numba's own
count cannot be read from a cached kernel.

The full passes and the best responses run a whole call in *one* parallel loop, as a sequence
of phases (:mod:`.phases`): starting a loop wakes the threads, which costs more than a phase
hand-over. A full pass's phases: the pass's tasks (the top forward before, the top backward
after, run by the worker that closes the phase before), then the player's chunks (the own
reaches before); a best response's: the reach's tasks, then its big waves.

Best responses go by *waves* of the serial kernel's units (a unit's wave is one more than the
latest wave of the units it reads), the units of a wave in parallel, in pieces; expected values
by the tasks, then the top.

Two numba rules every parallel loop body here follows: loop indices are cast to ``uint64`` (numba
wraps negative signed indices, a test on every access: measured 60% slower on the forward loop),
and nothing is written through a NamedTuple's field (numba loses those writes inside a
``prange``, numba issues #5872 and #7135): the bodies call non-inlined functions, which write
through the bundles they are given, or write plain arrays.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange, uint64

from .best_response import best_infoset_action, best_response_node, expected_value_node
from .drivers import step_order
from .phases import (
    finish_task,
    open_phase,
    start_phases,
    take_phase_task,
    take_task,
    wait_for_phase_after,
)
from .update import full_update_infoset, take_own_reach


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
def _full_phase(phase, num_players, alternating):
    """Phase ``phase`` of the full passes: ``(k, player, kind)``, the iteration of the
    schedule, the player and the kind: 0 the pass, 1 the slot sums (simultaneous passes),
    2 the update (after the slot sums under alternating ones: neither reads what the other
    writes for another infoset), -1 no work (a step has two phase
    numbers, one a pass or sums, the other sums or an update, and some steps use one)."""
    steps = 2 * num_players
    k = phase // (2 * steps)
    step = (phase // 2) % steps
    second = phase % 2 == 1
    player, is_pass = step_order(step, num_players, alternating)
    if not second:
        return k, player, 0 if is_pass else -1
    if is_pass:
        return k, player, -1 if alternating else 1
    return k, player, 2


@njit(cache=True, _nrt=False, inline="always")
def _full_phase_tasks(layout, kind) -> int:
    """How many tasks a phase of this kind has (-1: a phase without work)."""
    if kind < 0:
        return -1
    if kind == 0:
        return layout.task_bound.shape[1] - 1
    return layout.infoset_chunks.shape[1] - 1


@njit(cache=True, _nrt=False, inline="never")
def _full_serial(tree, layout, state, scratch, phase, alternating, opening) -> None:
    """A phase's serial part, before its tasks (``opening``) or after them: the top forward
    or backward around a pass, the own reaches before an update."""
    k, player, kind = _full_phase(phase, tree.num_players, alternating)
    if kind == 0:
        if opening:
            scratch.reach[0] = 1.0
            _forward_range(tree.node_parent, tree.edge_slot, tree.edge_player, state.probs,
                           scratch.reach, player, 1, layout.top_forward_end)
        else:
            _values_range(tree.node_parent, tree.edge_slot, tree.edge_last, state.probs,
                          scratch.value[player], 1, layout.top_backward_end)
    elif kind == 2 and opening:
        for infoset in range(tree.player_infoset_start[player],
                             tree.player_infoset_start[player + 1]):
            take_own_reach(tree, state, scratch, infoset)


@njit(cache=True, _nrt=False, inline="never")
def _full_task(tree, layout, state, scratch, schedule, alternating, lower, predictive, phase,
               task) -> None:
    """Task ``task`` of phase ``phase``: a pass's subtrees, or a chunk of infosets."""
    k, player, kind = _full_phase(phase, tree.num_players, alternating)
    if kind == 0:
        _task_pass(tree.node_parent, tree.edge_slot, tree.edge_player, tree.edge_last,
                   layout.task_bound, state.probs, scratch.reach, scratch.value[player], player,
                   task, True)
    else:
        chunks = layout.infoset_chunks
        p = uint64(player)
        t = uint64(task)
        _infoset_chunk(tree, state, scratch, player, chunks[p, t], chunks[p, t + uint64(1)],
                       kind == 1 or alternating, kind == 2, schedule[0, k], schedule[1, k],
                       schedule[2, k], lower, predictive)


@njit(cache=True, _nrt=False, inline="never")
def _full_open_next(tree, layout, counter, state, scratch, schedule, alternating,
                    finished) -> None:
    """After phase ``finished`` (-1: before the first): its closing serial part, then the next
    phases' opening parts until one has tasks, which is then opened to the workers (or the
    end, past the last phase). Run by one thread, the one that finished the last task."""
    total = schedule.shape[1] * 4 * tree.num_players
    if finished >= 0:
        _full_serial(tree, layout, state, scratch, finished, alternating, False)
    phase = finished + 1
    while phase < total:
        k, player, kind = _full_phase(phase, tree.num_players, alternating)
        tasks = _full_phase_tasks(layout, kind)
        if tasks >= 0:
            _full_serial(tree, layout, state, scratch, phase, alternating, True)
            if tasks > 0:
                break
            _full_serial(tree, layout, state, scratch, phase, alternating, False)
        phase += 1
    open_phase(counter, phase)


@njit(cache=True, _nrt=False, inline="never")
def _full_worker(tree, layout, counter, state, scratch, schedule, alternating, lower,
                 predictive) -> None:
    """One thread's share of :func:`run_full_parallel`: tasks of the open phase, taken one at
    a time; the thread finishing a phase's last task runs the serial parts up to the next
    phase and opens it; a thread finding no task left waits, spinning, for the next phase, and
    leaves the call if that takes too long (``counter[3]`` rounds)."""
    total = schedule.shape[1] * 4 * tree.num_players
    while True:
        phase, task = take_phase_task(counter)
        if phase >= total:
            return
        k, player, kind = _full_phase(phase, tree.num_players, alternating)
        tasks = 1 if phase < 0 else _full_phase_tasks(layout, kind)
        if task < tasks:
            if phase >= 0:
                _full_task(tree, layout, state, scratch, schedule, alternating, lower,
                           predictive, phase, task)
            if finish_task(counter, tasks):
                _full_open_next(tree, layout, counter, state, scratch, schedule, alternating,
                                phase)
        elif not wait_for_phase_after(counter, phase):
            return  # waited too long: another thread holds a task and carries on without us


@njit(cache=True, nogil=True, parallel=True)
def run_full_parallel(tree, layout, counter, state, scratch, schedule, alternating, lower,
                      predictive) -> int:
    """:func:`.drivers.run_full` on the cores ``numba.set_num_threads`` allows: the same
    arrays, bit for bit, in one parallel loop for the whole call. ``counter``
    (``_threads.workers``, workspace): the shared word (phase, next task), the number of
    threads (numba's own count cannot be read in a cached kernel), the tasks finished in the
    open phase, and how many rounds a waiting thread spins before it leaves."""
    start_phases(counter)
    for _ in prange(counter[1]):  # one worker per thread
        _full_worker(tree, layout, counter, state, scratch, schedule, alternating, lower,
                     predictive)
    return schedule.shape[1] * tree.num_players * tree.node_kind.shape[0]


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
    One parallel loop: phase 0 is the reach's tasks, phase ``1 + w`` wave ``w``'s pieces.

    A wave of fewer than ``min_wave`` units runs on one thread, the one that opens the next
    phase, with the small waves after it: handing a phase over costs more than such a wave's
    work, and a deep, narrow game has a wave per level. Each unit is computed the same either
    way.
    """
    start_phases(counter)
    for _ in prange(counter[1]):  # one worker per thread
        _response_worker(tree, layout, counter, probs, player, units, wave_start, min_wave,
                         reach, value, choice)
    return value[0]


@njit(cache=True, _nrt=False, inline="always")
def _response_tasks(layout, wave_start, phase) -> int:
    """The tasks of a best response's phase: the reach's, or a wave's pieces."""
    if phase == 0:
        return layout.task_bound.shape[1] - 1
    return min(wave_start[phase] - wave_start[phase - 1], _PIECES)


@njit(cache=True, _nrt=False, inline="never")
def _response_open_next(tree, layout, counter, probs, player, units, wave_start, min_wave,
                        reach, value, choice, finished) -> None:
    """After phase ``finished`` (-1: before the first), the serial work up to the next phase
    with tasks (the top of the reach, the small waves), then that phase opened (or the end)."""
    waves = wave_start.shape[0] - 1
    phase = finished + 1
    while phase <= waves:
        if phase == 0:
            reach[0] = 1.0
            _forward_range(tree.node_parent, tree.edge_slot, tree.edge_player, probs, reach,
                           player, 1, layout.top_forward_end)
        elif wave_start[phase] - wave_start[phase - 1] < min_wave:
            _wave_units(tree, probs, units, wave_start[phase - 1], wave_start[phase], reach,
                        value, choice)
            phase += 1
            continue
        if _response_tasks(layout, wave_start, phase) > 0:
            break
        phase += 1
    open_phase(counter, phase)


@njit(cache=True, _nrt=False, inline="never")
def _response_worker(tree, layout, counter, probs, player, units, wave_start, min_wave, reach,
                     value, choice) -> None:
    """One thread's share of :func:`best_response_value_parallel` (see :mod:`.phases`)."""
    waves = wave_start.shape[0] - 1
    while True:
        phase, task = take_phase_task(counter)
        if phase > waves:
            return
        tasks = 1 if phase < 0 else _response_tasks(layout, wave_start, phase)
        if task < tasks:
            if phase < 0:
                pass  # the start
            elif phase == 0:
                _task_pass(tree.node_parent, tree.edge_slot, tree.edge_player, tree.edge_last,
                           layout.task_bound, probs, reach, value, player, task, False)
            else:
                first = wave_start[phase - 1]
                size = wave_start[phase] - first
                _wave_units(tree, probs, units, first + size * task // tasks,
                            first + size * (task + 1) // tasks, reach, value, choice)
            if finish_task(counter, tasks):
                _response_open_next(tree, layout, counter, probs, player, units, wave_start,
                                    min_wave, reach, value, choice, phase)
        elif not wait_for_phase_after(counter, phase):
            return  # waited too long: another thread holds a task and carries on without us


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
