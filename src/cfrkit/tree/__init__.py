"""Compile a :class:`~cfrkit.game.Game` once into flat numpy arrays, validating it on the way.

:mod:`~cfrkit.tree.walk` walks the game and checks every answer of the user's code,
:mod:`~cfrkit.tree.memory` keeps the walk within the memory there is, and
:mod:`~cfrkit.tree.layout` lays the result out as the :class:`GameTree` arrays the kernels
read. :mod:`~cfrkit.tree.store` writes a compiled game to disk and reads it back, and keeps
the opt-in cache of :func:`compile_game`'s ``cache_dir``.
"""

from __future__ import annotations

import gc
import os

from .._numbers import integer_value
from ..game import COMPILED_ATTRIBUTE, Game, GameError
from .layout import CHANCE, DECISION, TERMINAL, CompiledGame, GameTree, flatten
from . import store
from .walk import Walk, WalkProgress, short_repr

__all__ = [
    "CHANCE",
    "DECISION",
    "DEFAULT_MAX_NODES",
    "TERMINAL",
    "CompiledGame",
    "GameTree",
    "compile_game",
    "load_compiled",
]

DEFAULT_MAX_NODES = 20_000_000

# A game's compiled tree is kept in the game object's own __dict__. A module-level table keyed
# weakly by games would keep every game ever compiled alive, with its tree: the tree refers to
# its game, so the table's value holds its own key. As an attribute it forms a cycle the
# garbage collector frees with the game (Game.__getstate__ leaves it out of copies and pickles).


def _cached(game: Game) -> CompiledGame | None:
    """``game``'s compiled tree, if it has been compiled (read from ``__dict__`` itself, so a
    game's own ``__getattr__`` is never asked). A tree of another game object -- a copy made by
    a class's own ``__getstate__`` or ``__reduce__``, which may have been changed since -- is
    not this game's."""
    state = getattr(game, "__dict__", None)
    cached = state.get(COMPILED_ATTRIBUTE) if isinstance(state, dict) else None
    return cached if cached is not None and cached.game is game else None


def _remember(game: Game, compiled: CompiledGame) -> None:
    try:
        object.__setattr__(game, COMPILED_ATTRIBUTE, compiled)  # past a frozen dataclass's too
    except (AttributeError, TypeError):  # the class claims the name (a property): no cache
        pass


def compile_game(
    game: Game | CompiledGame,
    *,
    max_nodes: int = DEFAULT_MAX_NODES,
    max_memory: int | None = None,
    progress: bool | None = None,
    cache_dir: str | os.PathLike[str] | None = None,
) -> CompiledGame:
    """Walk ``game`` once, validate it, and flatten it into a :class:`CompiledGame`.

    The result is cached per game object, so every trainer and evaluation call on the same game
    shares one tree, which is freed with the game (so a game must not change once compiled:
    make a new object for other rules); a :class:`CompiledGame` passed in is returned as it
    is. With
    ``cache_dir``, it is also kept on disk for the next process. The limits bound a walk: a
    game compiled already (this object, or its file in ``cache_dir``) comes back whatever
    its size, with the arguments checked all the same.

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
        4 bytes per node plus the utilities and chance outcomes, and only the histories still to
        visit beside the current path (the unvisited siblings of its nodes: about depth times
        branching, each one of the game's history objects); with flattening, compiling poker
        games peaks at about 65-90 bytes per node above the compiled tree's own arrays
        (``python benchmarks/compile.py`` measures it). Deep games with wide branching and
        large history objects (OpenSpiel's board games) hold far more per node while walking.
    progress : bool or None, optional
        Report the nodes walked on stderr (a tqdm bar). ``None`` (default): once the walk
        passes 100,000 nodes, if tqdm is installed and ``CFRKIT_QUIET`` is not set; ``True``:
        from the start; ``False``: never.
    cache_dir : str or os.PathLike, optional
        A directory (created if missing) where compiled games are kept between processes. The
        game must have an :attr:`~cfrkit.Game.identity`. If the directory holds this game's
        file, it is loaded (and checked: format, arrays, fingerprint) instead of walking the
        game (a tree in memory is used only if the game's identity is the one it was compiled
        under); otherwise the game is compiled and the file written atomically (a temporary file,
        then a rename), so processes sharing the directory never read half a file. The file name
        is a hash of the game's identity and class, the file format version, the cfrkit
        version and the source files of cfrkit's compiler and of the game's class, so editing
        the rules' module or upgrading cfrkit never loads a stale tree. A damaged or unreadable
        file warns (``RuntimeWarning``) and is replaced; so does a failure to write one.
        Default: no disk cache.

    Returns
    -------
    CompiledGame

    Raises
    ------
    TypeError
        If ``game`` is not a :class:`~cfrkit.Game` object (the class itself, say).
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
    ValueError
        If ``cache_dir`` is given and the game has no :attr:`~cfrkit.Game.identity`, or
        ``cache_dir`` is not a path (or is the empty string: pass ``"."`` for the current
        directory).
    """
    if not isinstance(game, (Game, CompiledGame)):
        if isinstance(game, type) and issubclass(game, Game):  # KuhnPoker for KuhnPoker()
            raise TypeError(f"game must be a cfrkit.Game object, got the class {game.__name__} "
                            f"(make one: {game.__name__}(...))")
        raise TypeError(f"game must be a cfrkit.Game, got {type(game).__name__}")
    given_nodes, given_memory = max_nodes, max_memory
    max_nodes = integer_value(max_nodes)
    if max_nodes is None or max_nodes < 1:
        raise ValueError(f"max_nodes must be a positive integer, got {given_nodes!r}")
    if max_memory is not None:
        max_memory = integer_value(max_memory)
        if max_memory is None or max_memory < 1:
            raise ValueError(
                f"max_memory must be a positive number of bytes or None, got {given_memory!r}"
            )
    if progress is not None and not isinstance(progress, bool):
        raise ValueError(f"progress must be a bool or None, got {progress!r}")
    if cache_dir is not None:
        store.check_cache_dir(cache_dir)
    if isinstance(game, CompiledGame):
        return game
    if cache_dir is not None:
        store.cache_key(game)  # a game without identity: ValueError before any work

    def compile() -> CompiledGame:
        identity = _identity_or_none(game)  # the rules the walk is about to see
        compiled = _compile(game, max_nodes, max_memory, progress)
        compiled._cache["identity"] = identity
        return compiled

    cached = _cached(game)
    if cache_dir is not None:
        identity = store.game_identity(game, required=True)
        if cached is not None and cached._cache.get("identity") != identity:
            # the game has changed since its tree was made: that tree is not this identity's
            cached = None
        # in memory already: only make sure the file exists
        cached = store.load_or_compile(game, cache_dir, compile, cached)
        cached._cache.setdefault("identity", identity)  # a tree loaded from the file
    elif cached is None:
        cached = compile()
    _remember(game, cached)
    return cached


def _identity_or_none(game: Game) -> str | None:
    """``game``'s identity, or ``None`` if it has none or reading it fails (compiling without
    ``cache_dir`` does not need it; with one, the same failure is reported)."""
    try:
        return store.game_identity(game, required=False)
    except (GameError, ValueError):
        return None


def load_compiled(path: str | os.PathLike[str]) -> CompiledGame:
    """Read a compiled game written by :meth:`CompiledGame.save`.

    Parameters
    ----------
    path : str or os.PathLike
        The file.

    Returns
    -------
    CompiledGame
        The same arrays, infoset keys, action labels (same values and types), zero-sum flag
        and fingerprint as the saved game. Its ``game`` is a :class:`~cfrkit.tree.store.StoredGame`,
        which names the file and the original game but has no rules (walking it raises
        :class:`GameError`). Every trainer and evaluation function accepts the
        :class:`CompiledGame` directly (or that game: ``compile_game`` returns this
        :class:`CompiledGame` for it), and a checkpoint or policy file made on the original
        game loads on it, since the fingerprints agree.

    Raises
    ------
    OSError
        If the file cannot be read (``FileNotFoundError`` if it does not exist).
    CompiledFileError
        A ``ValueError``: the file is not a compiled game, is truncated or damaged, has another
        format version, has arrays of the wrong names, dtypes, shapes or index ranges, or its
        content does not match its fingerprint (a damaged or edited file). The message names
        the file and the reason.

    Examples
    --------
    >>> import cfrkit
    >>> from cfrkit.games import KuhnPoker
    >>> import tempfile, os
    >>> path = os.path.join(tempfile.mkdtemp(), "kuhn.npz")
    >>> _ = cfrkit.compile_game(KuhnPoker()).save(path)
    >>> loaded = cfrkit.load_compiled(path)
    >>> loaded.fingerprint == cfrkit.compile_game(KuhnPoker()).fingerprint
    True
    >>> trainer = cfrkit.VanillaCFR(loaded).iterate(100)
    >>> cfrkit.nash_conv(loaded, trainer.average_policy()) < 0.05
    True
    """
    compiled, _ = store._read(os.fspath(path), None)
    # the identity the tree was filed under: compile_game(compiled.game, cache_dir=...) keeps it
    compiled._cache["identity"] = compiled.game.identity
    _remember(compiled.game, compiled)
    return compiled


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

