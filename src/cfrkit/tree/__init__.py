"""Compile a :class:`~cfrkit.game.Game` once into flat numpy arrays, validating it on the way.

:mod:`~cfrkit.tree.walk` walks the game and checks every answer of the user's code,
:mod:`~cfrkit.tree.memory` keeps the walk within the memory there is, and
:mod:`~cfrkit.tree.layout` lays the result out as the :class:`GameTree` arrays the kernels
read.
"""

from __future__ import annotations

import gc
import weakref

from ..game import Game, GameError
from .layout import CHANCE, DECISION, TERMINAL, CompiledGame, GameTree, flatten
from .walk import Walk, WalkProgress, short_repr

__all__ = [
    "CHANCE",
    "DECISION",
    "DEFAULT_MAX_NODES",
    "TERMINAL",
    "CompiledGame",
    "GameTree",
    "compile_game",
]

DEFAULT_MAX_NODES = 20_000_000

_compiled: "weakref.WeakKeyDictionary[Game, CompiledGame]" = weakref.WeakKeyDictionary()


def compile_game(
    game: Game | CompiledGame,
    *,
    max_nodes: int = DEFAULT_MAX_NODES,
    max_memory: int | None = None,
    progress: bool | None = None,
) -> CompiledGame:
    """Walk ``game`` once, validate it, and flatten it into a :class:`CompiledGame`.

    The result is cached per game object, so every trainer and evaluation call on the same game
    shares one tree; a :class:`CompiledGame` passed in is returned as it is.

    Parameters
    ----------
    game : Game or CompiledGame
        The game to compile.
    max_nodes : int, optional
        Stop with :class:`GameError` once the tree has more nodes than this (default 20
        million).
    max_memory : int, optional
        Stop with :class:`GameError` once the memory the compilation adds, plus what flattening
        the nodes walked so far will need, would pass this many bytes. Default: 80% of the
        memory available when the walk starts (system memory, a container's limit, or the
        address-space limit ``ulimit -v``, whichever is smallest), so that a game too large for
        the machine stops early with a message instead of a ``MemoryError``. The walk keeps
        8 bytes per node plus the utilities and chance outcomes, and only the histories of the
        current path; with flattening, compiling peaks at about 60-100 bytes per node above the
        compiled tree's own arrays (``python benchmarks/compile.py`` measures it).
    progress : bool or None, optional
        Report the nodes walked on stderr (a tqdm bar). ``None`` (default): once the walk
        passes 100,000 nodes, if tqdm is installed and ``CFRKIT_QUIET`` is not set; ``True``:
        from the start; ``False``: never.

    Returns
    -------
    CompiledGame

    Raises
    ------
    GameError
        If the game breaks a rule or the limits; the message names the offending method and
        history (its action path from the root, trimmed, and its ``repr``) and stays short.
        The rules are listed in the documentation's *Writing a game* page: every method's
        answer has the right type (bools, an int player in range, sequences of hashable,
        distinct labels, real numbers), an exception raised by the game's code is reported
        with the method and history (and chained), chance probabilities are non-negative and
        sum to 1 (within 1e-9), an infoset key always has the same player and actions, recall
        is perfect, and utilities are finite and at most ``cfrkit.limits.MAX_ABS_UTILITY``
        (1e200) in absolute value.
    """
    if isinstance(game, CompiledGame):
        return game
    if not isinstance(game, Game):
        raise TypeError(f"expected a cfrkit.Game, got {type(game).__name__}")
    if isinstance(max_nodes, bool) or not isinstance(max_nodes, int) or max_nodes < 1:
        raise ValueError(f"max_nodes must be a positive integer, got {max_nodes!r}")
    if max_memory is not None and (
        isinstance(max_memory, bool) or not isinstance(max_memory, int) or max_memory < 1
    ):
        raise ValueError(f"max_memory must be a positive number of bytes or None, got {max_memory!r}")
    if progress is not None and not isinstance(progress, bool):
        raise ValueError(f"progress must be a bool or None, got {progress!r}")
    try:
        cached = _compiled.get(game)
    except TypeError:  # an unhashable game object: compile without caching
        return _compile(game, max_nodes, max_memory, progress)
    if cached is None:
        cached = _compile(game, max_nodes, max_memory, progress)
        _compiled[game] = cached
    return cached


def _compile(game: Game, max_nodes: int, max_memory: int | None, progress: bool | None
             ) -> CompiledGame:
    """Walk and flatten with the cyclic garbage collector paused.

    The walk makes a few objects per node that die young; the collector would only rescan the
    survivors (the infoset tables, the game's own objects) again and again. With the
    depth-first walk few objects are alive at a time and the pause measures no different
    (liars_dice, Kuhn poker with 5 players); it stays for games whose own objects are many.
    Running out of memory anyway (an allocation the guard could not foresee) becomes a
    :class:`GameError` too, raised once the walk's memory is released.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    reporter = WalkProgress(game, progress)
    walk = None
    nodes = -1
    try:
        walk = Walk(game, max_nodes, max_memory, reporter)
        return flatten(walk.run())
    except MemoryError:
        nodes = walk.num_nodes if walk is not None else 0
    finally:
        reporter.close()
        if was_enabled:
            gc.enable()
    # outside the except block, so the traceback holding the walk's frames is gone
    walk = None
    raise GameError(
        f"{short_repr(game, 60)}: ran out of memory after {nodes:,} nodes; pass a smaller "
        "max_memory= or max_nodes= to compile_game() to stop earlier with a clear message, "
        "or compile on a machine with more memory"
    )

