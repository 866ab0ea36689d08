"""Phases: a sequence of parallel steps run in one parallel loop, and the atomics it needs.

Starting a numba parallel loop wakes the pool's threads: 40-50 us with sleeping idle threads
(cfrkit's default, see ``_threads.running``) on a 2-core virtual machine, where a two-player
full pass had four loops per iteration (0.2 ms of liar's dice's 1.3 ms). A *phased* kernel
starts one loop per call instead, and its workers (one per thread) go through the call's
*phases* -- a set of independent *tasks* each, a pass's subtrees, a wave's pieces or a round's
streams -- together (``parallel.py``, ``mccfr.py``):

* the workers share the word ``counter[0] = (phase + 1) << PHASE_SHIFT | next task`` (phase -1
  is the start, :func:`start_phases`) and take a task
  by an atomic increment of it (:func:`take_phase_task`); the phase comes back with the task,
  so no worker takes a task of a phase that has closed;
* the worker that finishes a phase's last task (:func:`finish_task`, counting in ``counter[2]``)
  runs the serial work up to the next phase, then opens it (:func:`open_phase`);
* a worker that finds no task left spins until the phase moves (:func:`wait_for_phase_after`),
  for at most ``counter[3]`` rounds, then leaves the call to the others.

No worker ever waits for one that holds no task, so the loop finishes however the workers are
run: several in turn by one thread (OpenMP within another parallel region, TBB), or some
leaving early. Leaving matters on a busy machine: a wait longer than about a millisecond
(``_threads.WAIT_SECONDS``) means the thread holding the last task lost its core to another
process, and a thread spinning on would hold a core that one needs.

numba has no atomic operations on the CPU: the intrinsics here emit LLVM's (``atomicrmw``,
atomic loads and stores, all sequentially consistent), which order every plain write of a task
before the increment that reports it, and the serial work before the write that opens the next
phase.
"""

from __future__ import annotations

import platform

from llvmlite import ir
from numba import njit, types
from numba.core import cgutils
from numba.extending import intrinsic

#: The phase's place in the shared word. A phase is taken from at most its tasks plus once per
#: worker (a worker finding none left waits for the next phase), so the task bits never carry
#: into the phase's.
PHASE_SHIFT = 24
_TASK_MASK = (1 << PHASE_SHIFT) - 1


def _slot_pointer(context, builder, signature, args):
    """A pointer to ``counter[index]`` (``args``: the array, the index)."""
    array = context.make_array(signature.args[0])(context, builder, args[0])
    return cgutils.get_item_pointer(context, builder, signature.args[0], array, [args[1]])


def _int64_array(counter) -> bool:
    return isinstance(counter, types.Array) and counter.dtype == types.int64


@intrinsic
def atomic_increment(typingctx, counter, index):
    """``counter[index] += 1`` atomically, returning the value before."""
    if not (_int64_array(counter) and isinstance(index, types.Integer)):
        return None

    def codegen(context, builder, signature, args):
        one = context.get_constant(types.int64, 1)
        return builder.atomic_rmw("add", _slot_pointer(context, builder, signature, args), one,
                                  "seq_cst")

    return types.int64(counter, index), codegen


@intrinsic
def atomic_read(typingctx, counter, index):
    """``counter[index]``, read atomically: a load the compiler cannot hoist out of a loop."""
    if not (_int64_array(counter) and isinstance(index, types.Integer)):
        return None

    def codegen(context, builder, signature, args):
        return builder.load_atomic(_slot_pointer(context, builder, signature, args), "seq_cst", 8)

    return types.int64(counter, index), codegen


@intrinsic
def atomic_write(typingctx, counter, index, value):
    """``counter[index] = value``, atomically and after every write before it."""
    if not (_int64_array(counter) and isinstance(index, types.Integer)
            and isinstance(value, types.Integer)):
        return None

    def codegen(context, builder, signature, args):
        number = context.cast(builder, args[2], signature.args[2], types.int64)
        builder.store_atomic(number, _slot_pointer(context, builder, signature, args), "seq_cst",
                             8)
        return context.get_dummy_value()

    return types.void(counter, index, value), codegen


_X86 = platform.machine().lower() in ("x86_64", "amd64", "i386", "i686", "x86")


@intrinsic
def spin_pause(typingctx):
    """The processor's spin-wait hint (x86 ``pause``: it yields the core's pipeline to a
    sibling hyperthread and saves power); nothing elsewhere."""

    def codegen(context, builder, signature, args):
        if _X86:
            hint = cgutils.get_or_insert_function(
                builder.module, ir.FunctionType(ir.VoidType(), []), "llvm.x86.sse2.pause")
            builder.call(hint, [])
        return context.get_dummy_value()

    return types.void(), codegen


@njit(cache=True, _nrt=False, inline="always")
def take_task(counter) -> int:
    """``counter[0] += 1`` atomically, returning the value before: the next task of a plain
    (one-phase) parallel loop."""
    return atomic_increment(counter, 0)


@njit(cache=True, _nrt=False, inline="always")
def start_phases(counter) -> None:
    """Before the parallel loop: open the *start*, phase -1, whose one task does nothing; the
    worker that finishes it runs the serial work before phase 0 and opens it. So every serial
    part runs inside a worker, called with the same argument types, and numba compiles it once
    (called also from the kernel itself, where the bundles' types differ, it compiled twice)."""
    counter[2] = 0
    counter[0] = 0


@njit(cache=True, _nrt=False, inline="always")
def take_phase_task(counter):
    """``(phase, task)``: the open phase (-1: the start) and the next of its tasks (possibly
    past its last)."""
    word = atomic_increment(counter, 0)
    return (word >> PHASE_SHIFT) - 1, word & _TASK_MASK


@njit(cache=True, _nrt=False, inline="always")
def finish_task(counter, tasks) -> bool:
    """Report a task of the open phase done; True for the last of its ``tasks``."""
    return atomic_increment(counter, 2) == tasks - 1


@njit(cache=True, _nrt=False, inline="always")
def open_phase(counter, phase) -> None:
    """Open ``phase`` (or, past the last phase, end the call) to the workers."""
    atomic_write(counter, 2, 0)
    atomic_write(counter, 0, (phase + 1) << PHASE_SHIFT)


@njit(cache=True, _nrt=False, inline="never")
def wait_for_phase_after(counter, phase) -> bool:
    """Spin until the open phase is past ``phase`` (True), or for at most ``counter[3]`` rounds
    of a read and a pause (False: the caller leaves the call)."""
    for _ in range(counter[3]):
        if (atomic_read(counter, 0) >> PHASE_SHIFT) - 1 != phase:
            return True
        spin_pause()
    return False


@njit(cache=True, nogil=True)
def spin_rounds(counter, rounds: int) -> int:
    """``rounds`` rounds of :func:`wait_for_phase_after`'s loop that never see a change
    (``counter[0]`` must stay 0): what ``_threads.wait_rounds`` times."""
    seen = 0
    for _ in range(rounds):
        seen += atomic_read(counter, 0)
        spin_pause()
    return seen
