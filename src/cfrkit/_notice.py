"""Say so when numba's first compilation makes a call slow.

The first call of a kernel family in a fresh environment compiles it (1.5 to 8 seconds; later
processes load it from numba's cache in a fraction of a second). Silence would look like a
hang, so a call that takes longer than a second prints one line to stderr while it waits, and
how long it took when it is done. ``CFRKIT_QUIET=1`` in the environment turns this off.

:func:`first_call` makes a kernel's first call of the process under that notice, once: a
trainer's first ``iterate()`` calls it with an empty block, and later trainers of the same
kernel skip both the call and the notice's timer thread (about 0.1 ms to start, more than a
small game's whole run to a loose target).
"""

from __future__ import annotations

import contextlib
import os
import sys
import threading
import time
from collections.abc import Callable, Iterator

from ._interrupt import critical, interruptible

__all__ = ["compile_notice", "first_call"]

_AFTER_SECONDS = 1.0

# the kernels (numba dispatchers) first_call() has called in this process
_called: set = set()


def first_call(kernel: object, what: str, call: Callable[[], object]) -> None:
    """``call()``, an empty first call of the numba function ``kernel``, under
    :func:`compile_notice` -- unless this process has made it already, when numba holds the
    compiled kernel and nothing needs announcing (numba compiles once per argument types, and
    cfrkit calls each kernel with one set of types: read-only tree arrays, writable state)."""
    if kernel in _called:
        return
    with compile_notice(what):
        call()
    _called.add(kernel)


# a KeyboardInterrupt raised inside numba's compiler can be lost in one of its callbacks or
# leave the kernel half made ("no compiled object yet"), so a Ctrl-C waits for the end
_STOPPING = ("cfrkit: Ctrl-C: stopping once the kernels are compiled (press it again to stop "
             "at once)")


@contextlib.contextmanager
def compile_notice(what: str) -> Iterator[None]:
    """Print ``cfrkit: compiling <what> ...`` to stderr if the body runs longer than a second.

    A Ctrl-C (in the main thread) during the body is delivered when it ends, with a line
    saying so; a second one at once.
    """
    with interruptible(), critical(_STOPPING), _announced(what):
        yield


@contextlib.contextmanager
def _announced(what: str) -> Iterator[None]:
    if os.environ.get("CFRKIT_QUIET"):
        yield
        return
    start = time.perf_counter()
    spoke = threading.Event()

    def speak() -> None:
        from . import _numba_cache

        spoke.set()
        kept = ("kept for this process only: no writable cache directory"
                if _numba_cache._directory is not None else "numba caches them for later runs")
        print(f"cfrkit: compiling {what} for first use (a few seconds; {kept}) ...",
              file=sys.stderr, flush=True)

    timer = threading.Timer(_AFTER_SECONDS, speak)
    timer.daemon = True
    timer.start()
    try:
        yield
    finally:
        timer.cancel()
        if spoke.is_set():
            print(f"cfrkit: compiled in {time.perf_counter() - start:.1f} s", file=sys.stderr,
                  flush=True)
