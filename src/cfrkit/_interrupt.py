"""Ctrl-C that never tears a trainer's state from its counters.

A kernel call runs a block of iterations (about 10 ms) without the GIL; Python's SIGINT handler
only runs between bytecodes, so a KeyboardInterrupt raised the moment a block returns would
land between the arrays' update and the counters'. While a trainer runs, :func:`interruptible`
installs a handler that raises at once outside the *critical* stretches (a kernel call and the
counter update after it) and inside one only records the signal; :func:`critical` delivers it
as soon as the stretch ends. Blocks are short, so Ctrl-C is honoured well within a second.

Only the main thread can install signal handlers; elsewhere, or when SIGINT is ignored, the
context managers do nothing. (A trainer iterated in another thread while the main thread runs
one of its own must not defer, and so steal, the main thread's Ctrl-C.)

Other Python threads run on while a kernel holds no GIL. Each :class:`Blocks` call holds the
object's lock, and its readers (decorated with :func:`between_blocks`) take it too, so no
thread sees a block half applied, and two threads iterating one object take turns by blocks.
"""

from __future__ import annotations

import _signal  # signal's own functions without the enum conversion: see interruptible()
import contextlib
import functools
import math
import signal
import sys
import threading
import time
from collections.abc import Iterator
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .tree import CompiledGame

__all__ = ["Blocks", "between_blocks", "critical", "interruptible"]


class _Guard:
    """The state shared by nested :func:`interruptible` scopes of the main thread."""

    def __init__(self) -> None:
        self.depth = 0  # nested interruptible() scopes
        self.in_critical = False
        self.pending = False  # a SIGINT arrived inside a critical stretch
        self.notice: str | None = None  # a long stretch's: said at the first SIGINT
        self.previous = None  # the handler to hand the signal to

    def handler(self, signum, frame) -> None:
        if not self.in_critical:
            self.deliver(signum, frame)
        elif self.pending and self.notice is not None:  # again, in a long stretch: at once
            self.pending = False
            self.deliver(signum, frame)
        else:
            self.pending = True
            if self.notice is not None:
                print(self.notice, file=sys.stderr, flush=True)

    def deliver(self, signum=signal.SIGINT, frame=None) -> None:
        previous = self.previous
        if callable(previous) and previous is not signal.default_int_handler:
            previous(signum, frame)  # somebody else's handler (a notebook kernel, ...)
        else:
            raise KeyboardInterrupt


_GUARD = _Guard()


@contextlib.contextmanager
def interruptible() -> Iterator[None]:
    """Run the body with the deferring SIGINT handler installed (main thread only).

    The handlers are read and set through ``_signal``, the C module under :mod:`signal`:
    ``signal.getsignal`` and ``signal.signal`` turn the handler they return into an enum
    member, which raises and catches a ValueError for any Python handler (5 µs each in
    Python 3.11, three of them per ``iterate()`` call; the C calls take 0.1 µs).
    """
    usable = threading.current_thread() is threading.main_thread()
    if usable and _GUARD.depth == 0:
        previous = _signal.getsignal(signal.SIGINT)
        if previous in (signal.SIG_IGN, None):
            usable = False  # SIGINT is ignored here (or handled outside Python): leave it
        else:
            _GUARD.previous = previous
            _GUARD.pending = False
            _signal.signal(signal.SIGINT, _GUARD.handler)
    if not usable:
        yield
        return
    _GUARD.depth += 1
    try:
        yield
    finally:
        _GUARD.depth -= 1
        if _GUARD.depth == 0:
            _signal.signal(signal.SIGINT, _GUARD.previous)
            _GUARD.previous = None


@contextlib.contextmanager
def critical(notice: str | None = None) -> Iterator[None]:
    """A stretch that a SIGINT must not cut; the signal is delivered right after it (main
    thread only: the guard is the main thread's).

    With ``notice``, a stretch that may last seconds (compiling kernels): the first SIGINT
    prints ``notice`` on stderr, and a second one is delivered at once.
    """
    if _GUARD.depth == 0 or _GUARD.in_critical \
            or threading.current_thread() is not threading.main_thread():
        yield
        return
    _GUARD.in_critical = True
    _GUARD.notice = notice
    try:
        yield
    finally:
        _GUARD.in_critical = False
        _GUARD.notice = None
    if _GUARD.pending:
        _GUARD.pending = False
        _GUARD.deliver()


class Blocks:
    """Runs ``n`` iterations as kernel calls of about ``seconds`` each, each call and the counter
    update after it one :func:`critical` stretch (call inside :func:`interruptible`).

    A call that takes under half the target grows the block by the largest power of two that
    keeps the next call, estimated from this one, under half the target (at least doubling
    it); one that takes over twice the target halves it. So a Ctrl-C is honoured within a
    block whatever the game's size, and a fresh trainer reaches long blocks in two or three
    calls rather than one per doubling (each call costs 10-30 µs of its own, the iterations of
    a small game less). A call's own cost makes the estimate of the next call's time high,
    never low. Results do not depend on the blocks: every kernel gives the same arrays however
    a run is split.
    """

    def __init__(self, seconds: float = 0.01, largest: int = 1 << 17) -> None:
        self.seconds = seconds
        self.largest = largest
        self.size = 1
        self.lock = threading.RLock()  # held by each call, and by the readers (between_blocks)

    def run(self, n: int, step) -> None:
        """``step(count)`` for counts adding up to ``n``; ``step`` runs the kernel and moves the
        counters with it."""
        remaining = n
        while remaining:
            count = min(self.size, remaining)
            with self.lock, critical():  # the arrays and the counters move together
                start = time.perf_counter()
                step(count)
                elapsed = time.perf_counter() - start
            remaining -= count
            if count == self.size and elapsed < self.seconds / 2:
                steps = math.log2(self.seconds / 2 / elapsed) if elapsed > 0.0 else 64.0
                self.size = min(self.size << max(1, min(int(steps), 64)), self.largest)
            elif elapsed > 2 * self.seconds and self.size > 1:
                self.size //= 2


def between_blocks(method):
    """Decorate a reader of an object that runs :class:`Blocks` (as ``self._blocks``): it runs
    holding their lock, so a thread iterating the object meanwhile never shows it half a block
    (an average policy whose rows do not sum to 1, a checkpoint whose counters disagree with
    its arrays)."""

    @functools.wraps(method)
    def locked(self, *args, **kwargs):
        with self._blocks.lock:
            return method(self, *args, **kwargs)

    return locked


class NoCopies:
    """Refuse ``copy.copy``, ``copy.deepcopy`` and pickling with a message that says what to do
    instead, for the objects that run :class:`Blocks`: a shallow copy would share the arrays
    (iterating it would move the original's arrays and not its counters), and cfrkit keeps
    state in files it writes itself, never in pickles."""

    #: What the message suggests instead ("" if nothing).
    _copy_instead = ""
    #: The suggestion for the objects that save checkpoints.
    SAVE_AND_LOAD = "; save() it and cfrkit.load_trainer() it back for an independent copy"

    def _refuse_copy(self, *args) -> None:
        raise TypeError(
            f"a {type(self).__name__} cannot be copied or pickled{self._copy_instead}"
        )

    __copy__ = __deepcopy__ = __reduce_ex__ = __reduce__ = _refuse_copy


class FixedGame:
    """A read-only ``game`` for the objects whose arrays are laid out for one compiled game:
    another game assigned to it would have the kernels index those arrays with its own tree
    (numba checks no bounds: wrong numbers or a crash)."""

    _game: CompiledGame

    @property
    def game(self) -> CompiledGame:
        """The compiled game (``.game.game`` is the object passed in); read-only."""
        return self._game
