"""Thread counts for the parallel kernels (``_kernels/parallel.py``): validation, the choice
between the serial and the parallel kernel, and numba's per-thread setting around a call.

The parallel kernels give the serial kernels' results bit for bit, so the choice is about speed
alone: a game below :data:`PARALLEL_MIN_NODES` nodes (:data:`EVALUATION_MIN_NODES` for the
evaluation kernels), or one thread, runs the serial kernel
(the parallel one pays a few microseconds per parallel loop and per thread, which a small game's
whole pass does not cover; OpenMP made small games slower in the 2018 C++ report too).
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Iterator

import numba
import numpy as np

from ._numbers import integer_value
from ._text import short_repr

__all__ = [
    "EVALUATION_MIN_NODES", "MIN_PARALLEL_WAVE", "PARALLEL_MIN_NODES", "check_threads",
    "parallel_threads", "running", "workers",
]

#: Games with fewer nodes than this run the serial full passes whatever ``threads`` says
#: (benchmarks/threads.py, 2 cores: two threads gain 1.1x at 51,181 nodes, lose 2x at 9,457).
PARALLEL_MIN_NODES = 50_000
#: The same for the evaluation kernels, whose parallel loops are shorter (two threads: 0.92x at
#: 51,181 nodes, 1.5x at 116,437).
EVALUATION_MIN_NODES = 100_000
#: Best-response waves of fewer units run on the calling thread, even in the parallel kernel: a
#: parallel loop costs microseconds to start, and a deep, narrow game has a wave per level
#: (``benchmarks/threads.py --games chain``, 120,000 levels: NashConv 3.8-4.6 s on two threads
#: when every wave ran in parallel; 8.4 ms now, against 6.6 ms on one).
MIN_PARALLEL_WAVE = 512


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
    """The parallel kernels' ``counter`` argument: a task counter (0) and the thread count."""
    return np.array([0, count], dtype=np.int64)


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
