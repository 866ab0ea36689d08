"""Thread counts for the parallel kernels (``_kernels/parallel.py``): validation, the choice
between the serial and the parallel kernel, the smallest best-response wave worth sharing, how
long a waiting thread spins, and numba's per-thread setting around a call.

The parallel kernels give the serial kernels' results bit for bit, so the choices are about
speed alone: a game below :data:`PARALLEL_MIN_NODES` nodes (:data:`EVALUATION_MIN_NODES` for
the evaluation kernels), or one thread, runs the serial kernel (the parallel one pays from a
microsecond to tens of them per parallel loop, which a small game's whole pass does not cover;
OpenMP made small games slower in the 2018 C++ report too), and a best-response wave too small
to share runs on one thread (:func:`parallel_wave_size`).
"""

from __future__ import annotations

import contextlib
import os
import threading
import time
from collections.abc import Iterator

import numba
import numpy as np

from ._kernels.parallel import start_workers
from ._kernels.phases import spin_rounds
from ._numbers import integer_value
from ._text import short_repr

__all__ = [
    "EVALUATION_MIN_NODES", "MIN_PARALLEL_WAVE", "PARALLEL_MIN_NODES", "check_threads",
    "parallel_loop_seconds", "parallel_threads", "parallel_wave_size", "running", "workers",
]

#: Games with fewer nodes than this run the serial full passes whatever ``threads`` says
#: (benchmarks/threads.py, 2 cores: two threads gain 1.1x at 51,181 nodes, lose 2x at 9,457).
PARALLEL_MIN_NODES = 50_000
#: The same for the evaluation kernels, whose parallel loops are shorter (two threads: 0.92x at
#: 51,181 nodes, 1.5x at 116,437).
EVALUATION_MIN_NODES = 100_000
#: Best-response waves of fewer units run on one thread, even in the parallel kernel: sharing a
#: wave out costs more than a small wave's work, and a deep, narrow game has a wave per level
#: (``benchmarks/threads.py --games chain``, 120,000 levels: NashConv 3.8-4.6 s on two threads
#: when every wave started a parallel loop; 3.8 ms with small waves on one thread, against
#: 3.2 ms on one). ``None``: the size :func:`parallel_wave_size` measures; an int fixes it (the
#: tests force waves either way).
MIN_PARALLEL_WAVE: int | None = None
#: The measured size's bounds: the floor is the size fixed before it was measured.
WAVE_SIZE_BOUNDS = (512, 65_536)
#: About what a best-response unit costs on one thread: 7-20 ns in the big waves of liar's dice
#: and five-player Kuhn poker. A wave goes parallel when its serial work is about twice what
#: starting the loop costs, so that the second thread saves more than it costs.
UNIT_SECONDS = 5e-9
_LAUNCHES = 9  # parallel loops timed for the measurement (the median counts)
#: How long a thread of the full passes' parallel loop spins for the next phase before it
#: leaves the rest of the call to the other threads. Waits on a machine of one's own are the
#: serial parts and the last task of a phase, tens of microseconds; a longer one means a thread
#: holding a task lost its core to another process, and a thread that keeps spinning then
#: holds a core that one needs. With another process busy on a 2-core machine, two threads
#: leaving so ran 0.65-0.84x of one on liar's dice, against 0.37-0.47x with idle threads that
#: spin (``benchmarks/wait_policy.py --busy 1``, two runs, commit e8a7ecf).
WAIT_SECONDS = 1e-3
_CALIBRATION_ROUNDS = 20_000
_wait_rounds: int | None = None
_loop_seconds: dict[int, float] = {}  # parallel_loop_seconds, by thread count


def check_threads(threads: object, name: str = "threads") -> int | None:
    """``threads`` as an int in ``[1, numba.config.NUMBA_NUM_THREADS]``, or ``None`` (all of
    them); else a ValueError naming the argument."""
    if threads is None:
        return None
    limit = numba.config.NUMBA_NUM_THREADS
    count = integer_value(threads)
    if count is None or not 1 <= count <= limit:
        raise ValueError(
            f"{name} must be an integer from 1 to {limit} (numba's NUMBA_NUM_THREADS) or None "
            f"for all of them, got {short_repr(threads)}"
        )
    return count


def parallel_threads(num_nodes: int, threads: int | None, evaluation: bool = False) -> int:
    """How many threads the kernels for a game of ``num_nodes`` nodes should run on (the full
    passes, or with ``evaluation`` the evaluation kernels): 1 means the serial kernel (also in a
    process forked from one whose GNU OpenMP pool was running, where a parallel kernel would be
    killed: the results are the same)."""
    count = numba.config.NUMBA_NUM_THREADS if threads is None else threads
    minimum = EVALUATION_MIN_NODES if evaluation else PARALLEL_MIN_NODES
    if count < 2 or num_nodes < minimum or _forked_openmp():
        return 1
    return count


_pool_pid: int | None = None  # the process that started numba's thread pool through running()


def _forked_openmp() -> bool:
    """Whether this process was forked from one whose GNU OpenMP thread pool was started: that
    runtime does not survive a fork, and numba terminates a child that uses it."""
    if _pool_pid is None or _pool_pid == os.getpid():
        return False
    try:
        from numba.np.ufunc import omppool
    except ImportError:  # numba built without OpenMP
        return False
    return numba.threading_layer() == "omp" and omppool.openmp_vendor == "GNU"


def workers(count: int) -> np.ndarray:
    """The parallel kernels' ``counter`` argument: a task counter (or the phased loops' shared
    word), the thread count, the phased loops' count of finished tasks, how many rounds a
    waiting thread of theirs spins (:func:`wait_rounds`), and a total their serial parts keep
    (the nodes a call with streams touched)."""
    return np.array([0, count, 0, wait_rounds(), 0], dtype=np.int64)


def wait_rounds() -> int:
    """Spin rounds (an atomic read and a pause instruction each) that last about
    :data:`WAIT_SECONDS` here: timed once per process (a few milliseconds), since a pause
    takes from a few cycles to a hundred and more, by processor."""
    global _wait_rounds
    if _wait_rounds is None:
        counter = np.zeros(4, dtype=np.int64)
        spin_rounds(counter, 1)  # loads the kernel
        runs = []
        for _ in range(3):
            start = time.perf_counter()
            spin_rounds(counter, _CALIBRATION_ROUNDS)
            runs.append(time.perf_counter() - start)
        per_round = max(sorted(runs)[1] / _CALIBRATION_ROUNDS, 1e-10)
        _wait_rounds = max(int(WAIT_SECONDS / per_round), 1000)
    return _wait_rounds


# numba's workqueue threading layer (what numba falls back to without OpenMP or TBB) aborts the
# process when two Python threads run parallel kernels at once: serialise them there
_WORKQUEUE_LOCK = threading.Lock()


@contextlib.contextmanager
def running(count: int) -> Iterator[None]:
    """Run the body's parallel kernels on ``count`` threads (numba's setting is per calling
    thread; restored afterwards)."""
    global _pool_pid
    if _pool_pid is None:
        # GNU OpenMP's idle threads spin by default, and a spinning thread holds a core that a
        # thread with work may need: with another process busy on a 2-core machine, two
        # threads measured 6-7x slower than one on liar's dice; with passive waiting, 1.28x
        # faster (benchmarks/threads.py --busy 1). libgomp reads this when numba first loads
        # it, just below; a value the user set is kept.
        os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    previous = numba.get_num_threads()  # starts numba's thread pool on first use
    if _pool_pid is None:
        _pool_pid = os.getpid()
    guard = (_WORKQUEUE_LOCK if numba.threading_layer() == "workqueue"
             else contextlib.nullcontext())
    with guard:
        numba.set_num_threads(count)
        try:
            yield
        finally:
            numba.set_num_threads(previous)


def parallel_wave_size(count: int) -> int:
    """The fewest units a best-response wave needs to run on ``count`` threads
    (:data:`MIN_PARALLEL_WAVE` if set).

    What a parallel loop costs to start and join depends on the machine far more than the
    units do: 1.5 us with spinning idle threads, 9-60 us with sleeping ones (``OMP_WAIT_POLICY``
    ``PASSIVE``, which cfrkit sets) on one 2-core virtual machine, where a fixed 512 units made
    five-player Kuhn poker's NashConv slower on two threads than on one (0.89x) when each wave
    started a loop. So the cost (:func:`parallel_loop_seconds`) is converted into units of
    :data:`UNIT_SECONDS`, within :data:`WAVE_SIZE_BOUNDS`. Since a best response runs in one
    parallel loop (its waves are phases), a wave no longer pays that cost itself, and fixed
    sizes from 512 to 8,192 gave the same NashConv speed there, within the machine's noise; the
    measured size stays as a bound on how small a shared wave may be. A unit is computed the
    same way on any thread, so the size changes the speed only, never a result.
    """
    if MIN_PARALLEL_WAVE is not None:
        return MIN_PARALLEL_WAVE
    low, high = WAVE_SIZE_BOUNDS
    return int(min(max(parallel_loop_seconds(count) / UNIT_SECONDS, low), high))


def parallel_loop_seconds(count: int) -> float:
    """What starting and joining a parallel loop on ``count`` threads costs here: the median
    of :data:`_LAUNCHES` runs of an empty one, after a first that starts the threads; timed
    once per process and thread count (under a millisecond)."""
    seconds = _loop_seconds.get(count)
    if seconds is None:
        counter = workers(count)
        runs = []
        with running(count):
            start_workers(counter)  # the first call starts the threads (and loads the kernel)
            for _ in range(_LAUNCHES):
                start = time.perf_counter()
                start_workers(counter)
                runs.append(time.perf_counter() - start)
        seconds = _loop_seconds[count] = sorted(runs)[_LAUNCHES // 2]
    return seconds
