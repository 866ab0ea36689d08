"""OpenSpiel interop: solve OpenSpiel games with cfrkit and hand the policies back.

Needs OpenSpiel (``pip install cfrkit[openspiel]``); it is imported only when one of these
functions is called.

* :func:`from_openspiel` wraps a turn-based OpenSpiel game (chance allowed, perfect recall) as
  a :class:`cfrkit.Game`. Infoset keys are OpenSpiel's ``information_state_string(player)``
  and action labels OpenSpiel's integer action ids, chance outcomes included, so a cfrkit
  :class:`~cfrkit.Policy` over the game reads exactly like an OpenSpiel tabular policy. In
  games where two players can hold the same string (``phantom_ttt``, ``latent_ttt``: the
  strings do not name the player), every key is qualified with its player instead,
  ``"p0|..."`` and ``"p1|..."``.
* :func:`to_tabular_policy` turns a cfrkit policy into OpenSpiel's python
  ``TabularPolicy``; :func:`to_pyspiel_policy` into the C++ ``pyspiel.TabularPolicy`` (cheaper
  to build for large games). Either can be passed to OpenSpiel's ``nash_conv`` /
  ``exploitability``.
* :func:`from_openspiel_policy` reads an OpenSpiel tabular policy back into a cfrkit
  :class:`~cfrkit.Policy`.

Example
-------
>>> import cfrkit, pyspiel
>>> from cfrkit.openspiel import from_openspiel, to_pyspiel_policy
>>> game = from_openspiel("kuhn_poker")
>>> trainer = cfrkit.VanillaCFR(game).iterate(1000)
>>> policy = trainer.average_policy()
>>> ours = cfrkit.nash_conv(game, policy)
>>> theirs = pyspiel.nash_conv(game.openspiel_game, to_pyspiel_policy(game, policy))
>>> abs(ours - theirs) < 1e-9
True

:func:`from_openspiel` compiles the game at once, walking the whole OpenSpiel tree in Python
through OpenSpiel's C++ states, with a walk of its own that calls pyspiel directly (no History
object per state) and checks what cfrkit checks of any game: about 1.5 times a bare walk
calling the same pyspiel methods once per state. ``leduc_poker`` (9,457 histories) takes about
0.05 s, ``liars_dice`` (294,883 histories, 24,576 information sets) about 1 s,
``leduc_poker(players=3)`` (1,831,601 histories) about 6 s -- about 3 microseconds per
history -- peaking at 65-90 bytes per history above the compiled arrays (``python
benchmarks/compile.py --repeats 11`` on a shared 2-core machine).
"""

from __future__ import annotations

import functools
import hashlib
import math
import os
from collections.abc import Hashable, Mapping
from typing import TYPE_CHECKING, Any

import numpy as np

from .game import FixedAttributes, Game, GameError, History
from ._numbers import check_bool
from ._text import first_line, short_repr
from .policy import Policy, check_policy_game
from .tree import DEFAULT_MAX_NODES, CompiledGame, compile_game
from .tree.store import cache_path
from .tree.walk import CHANCE_CODE, PROB_TOLERANCE, TERMINAL_CODE

if TYPE_CHECKING:
    from .tree.walk import Walk

__all__ = [
    "OpenSpielGame",
    "from_openspiel",
    "from_openspiel_policy",
    "to_pyspiel_policy",
    "to_tabular_policy",
]

_INSTALL_HINT = (
    "cfrkit.openspiel needs OpenSpiel, which is not installed: "
    "pip install cfrkit[openspiel]  (or: pip install open_spiel)"
)


def _pyspiel():
    try:
        import pyspiel
    except ImportError as exc:  # pragma: no cover - exercised only without OpenSpiel
        raise ImportError(_INSTALL_HINT) from exc
    return pyspiel


def _python_policy_module():
    _pyspiel()
    from open_spiel.python import policy as policy_module

    return policy_module


@functools.lru_cache(maxsize=None)
def _openspiel_version() -> str:
    """The installed OpenSpiel's version (part of a game's identity: its rules may change)."""
    from importlib import metadata

    for distribution in ("open_spiel", "open-spiel"):
        try:
            return metadata.version(distribution)
        except metadata.PackageNotFoundError:
            continue
    # built from source, no package metadata: the extension module's size and time stand in
    try:
        stat = os.stat(_pyspiel().__file__)
        return f"pyspiel {stat.st_size}:{stat.st_mtime_ns}"
    except (OSError, TypeError):
        return "unknown"


# -- the game adapter ------------------------------------------------------------------------


class _SharedKey(Exception):
    """Two players hold the same information-state string: the game needs per-player keys."""


class OpenSpielGame(FixedAttributes, Game):
    """A cfrkit :class:`~cfrkit.Game` over an OpenSpiel game (build it with :func:`from_openspiel`).

    Parameters
    ----------
    openspiel_game : pyspiel.Game
        A loaded OpenSpiel game (``pyspiel.load_game(...)``); :func:`from_openspiel` also
        takes a name, checks the game's type and compiles it.
    keys_per_player : bool, optional
        Key infosets by ``"p{player}|{string}"`` (default False: by the information-state
        string itself).

    Attributes
    ----------
    openspiel_game : pyspiel.Game
        The wrapped OpenSpiel game.
    num_players : int
    name : str
        OpenSpiel's description of the game with its parameters, e.g.
        ``"kuhn_poker(players=3)"``.
    keys_per_player : bool
        Whether infoset keys are ``"p{player}|{information-state string}"`` (set by
        :func:`from_openspiel` for games whose strings do not name the player) rather than the
        strings themselves.
    """

    def __init__(self, openspiel_game: Any, *, keys_per_player: bool = False) -> None:
        if not isinstance(openspiel_game, _pyspiel().Game):
            hint = " (from_openspiel takes a name)" if isinstance(openspiel_game, str) else ""
            raise TypeError(
                f"openspiel_game must be a pyspiel.Game, got {type(openspiel_game).__name__}{hint}"
            )
        keys_per_player = check_bool("keys_per_player", keys_per_player)
        self.openspiel_game = openspiel_game
        self.num_players = int(openspiel_game.num_players())
        self.name = str(openspiel_game)
        self.keys_per_player = keys_per_player
        # the name it was loaded by, with its data files' digests (set by from_openspiel)
        self._source: str | None = None
        # string -> the player who holds it, while a walk with unqualified keys looks for a
        # string two players share
        self._holders: dict[str, int] | None = None

    def root(self) -> History:
        self._holders = None if self.keys_per_player else {}
        return _OpenSpielHistory(self.openspiel_game.new_initial_state(), self)

    @property
    def identity(self) -> str | None:
        """For a game :func:`from_openspiel` loaded by name: ``"openspiel:<that name>"``, the
        SHA-256 of each data file it names (``efg_game(filename=...)``), the key style and the
        OpenSpiel version (see :attr:`cfrkit.Game.identity`), e.g.
        ``"openspiel:leduc_poker(players=3); keys_per_player=False; open_spiel 1.6.1"``.

        ``None`` (no disk cache) for a game passed in as an object, and for its copies and
        pickles: a game's own string does not always name it (every game built by
        ``pyspiel.load_efg_game(text)`` prints ``efg_game()``; one from
        ``pyspiel.create_matrix_game("matrix_rps", ...)`` prints ``matrix_rps()`` whatever its
        payoffs), and a pickled game is loaded again from its string, reading its data files
        anew.
        """
        if self._source is None:
            return None
        return (
            f"openspiel:{self._source}; keys_per_player={self.keys_per_player}; "
            f"open_spiel {_openspiel_version()}"
        )

    #: Why a game without :attr:`identity` cannot use a disk cache (the store's message).
    _no_identity_reason = (
        "an OpenSpiel game is cached only when from_openspiel loads it by name (its string "
        "does not always name it); pass the name"
    )

    def __getstate__(self) -> object:
        state = super().__getstate__()
        if isinstance(state, dict):  # a copy or pickle: no identity (see identity)
            state = {**state, "_source": None}
        return state

    def _cfrkit_walk(self, walk: Walk) -> bool:
        """The compiler's walk over OpenSpiel's C++ states, without a History per node.

        Returns False (the compiler then walks the Histories) for a game written in Python,
        whose answers may be of any type. Otherwise it walks the states depth first like
        :meth:`cfrkit.tree.walk.Walk.walk_histories`, into the same records, with the
        cheapest pyspiel calls measured (``child`` rather than ``clone`` and
        ``apply_action``, but ``apply_action`` in place for the first child, whose parent is
        not needed after it; the information-state string, the cfrkit key): pyspiel's answers are
        typed already, so it checks only what typing does not promise -- an infoset's player
        and actions against its first history, distinct actions and outcomes, chance
        probabilities that sum to 1, the number of returns (their bounds once after the walk,
        perfect recall in the layout). Any answer it does not take as plainly right goes to
        :meth:`~cfrkit.tree.walk.Walk.visit` through a History, whose checks and messages are
        the only ones.
        """
        root = self.openspiel_game.new_initial_state()
        module = type(root).__module__
        if module != "pyspiel" and not module.startswith("pyspiel."):
            return False
        self._holders = None if self.keys_per_player else {}
        _walk_states(self, walk, root)
        return True

    def openspiel_key(self, key: str) -> str:
        """OpenSpiel's information-state string of the infoset ``key`` of this game.

        Parameters
        ----------
        key : str
            An infoset key of this game (``"p{player}|{string}"`` when
            :attr:`keys_per_player` is set, else the string itself).

        Returns
        -------
        str
            The key without its ``"p{player}|"`` prefix, or the key itself.

        Raises
        ------
        ValueError
            If ``key`` is not a string, or lacks the prefix :attr:`keys_per_player` asks for.
        """
        if not isinstance(key, str):
            raise ValueError(f"key must be an infoset key (a str), got {short_repr(key)}")
        if not self.keys_per_player:
            return key
        prefix, bar, string = key.partition("|")
        if not (bar and prefix[:1] == "p" and prefix[1:].isdigit()):
            raise ValueError(
                f"key {short_repr(key)} is not one of this game's: with keys_per_player its keys "
                "are 'p{player}|{information-state string}'"
            )
        return string

    def __repr__(self) -> str:
        return f"from_openspiel({self.name!r})"


class _OpenSpielHistory(History):
    """A History over one pyspiel state; every query is one call into OpenSpiel's C++."""

    __slots__ = ("_state", "_player", "_game")

    def __init__(self, state: Any, game: OpenSpielGame) -> None:
        self._state = state
        self._game = game
        # one C++ call answers is_terminal / is_chance / current_player at once
        self._player = state.current_player()

    def is_terminal(self) -> bool:
        return self._player == -4  # pyspiel.PlayerId.TERMINAL

    def is_chance(self) -> bool:
        return self._player == -1  # pyspiel.PlayerId.CHANCE

    def current_player(self) -> int:
        return self._player

    def actions(self) -> tuple[int, ...]:
        return tuple(self._state.legal_actions())

    def chance_outcomes(self) -> tuple[tuple[int, float], ...]:
        return tuple(self._state.chance_outcomes())

    def child(self, action: Hashable) -> History:
        return _OpenSpielHistory(self._state.child(action), self._game)

    def infoset_key(self) -> str:
        text = self._state.information_state_string(self._player)
        holders = self._game._holders
        if holders is None:
            return f"p{self._player}|{text}"
        if holders.setdefault(text, self._player) != self._player:
            raise _SharedKey(f"players {holders[text]} and {self._player} both hold {text!r}")
        return text

    def utilities(self) -> tuple[float, ...]:
        return tuple(self._state.returns())

    def __repr__(self) -> str:
        return f"OpenSpielState({self._state.history()!r})"


def _walk_states(game: OpenSpielGame, walk: Walk, root: Any) -> None:
    """Depth first through pyspiel states, recording into ``walk`` (see
    :meth:`OpenSpielGame._cfrkit_walk`). The loop is the compiler's floor: a node costs its
    pyspiel calls plus a list append or two and, at a decision node, one dict look-up and one
    comparison of its actions with its infoset's."""
    players = walk.num_players
    per_player = game.keys_per_player
    lists: list[list[int]] = []  # each infoset's actions as pyspiel gives them, to compare
    set_player, find, add_infoset = walk.set_player, walk.key_to_id.get, walk.add_infoset
    flushed, buffer = walk.code, walk.code_buffer
    record = buffer.append
    add_count, add_probs = walk.chance_counts.append, walk.chance_probs.extend
    add_labels, add_utilities = walk.chance_labels.extend, walk.utility_buffer.extend
    fsum = math.fsum

    def slow(state: Any) -> tuple:
        # the History walk's checks and messages, for an answer taken as suspect here
        return walk.visit(len(flushed) + len(buffer), _OpenSpielHistory(state, game))

    def replay(labels: list) -> History:
        state = game.openspiel_game.new_initial_state()
        for label in labels:
            state.apply_action(label)
        return _OpenSpielHistory(state, game)

    walk.replay = replay
    walk.floats_only = True  # returns() gives floats, and visit() converts what it takes
    created, limit = walk.created, walk.limit
    stack = [root]  # the states waiting, last first
    pop, push = stack.pop, stack.append
    while stack:
        state = pop()
        try:
            player = state.current_player()
            if player >= 0:
                actions = state.legal_actions()
                key = state.information_state_string()  # the acting player's: 10% cheaper
                if per_player:
                    key = f"p{player}|{key}"
                set_id = find(key)
                if set_id is None:
                    if actions and len(set(actions)) == len(actions):
                        record(add_infoset(key, player, tuple(actions)))
                        lists.append(actions)
                    else:
                        actions = slow(state)
                elif set_player[set_id] == player and lists[set_id] == actions:
                    record(set_id)
                else:
                    if set_player[set_id] != player and not per_player:
                        game._holders[key] = set_player[set_id]  # the History names the clash
                    actions = slow(state)
            elif player == -4:  # pyspiel.PlayerId.TERMINAL
                returns = state.returns()
                if len(returns) == players:
                    record(TERMINAL_CODE)
                    add_utilities(returns)
                else:
                    slow(state)
                continue
            elif player == -1:  # pyspiel.PlayerId.CHANCE
                outcomes = state.chance_outcomes()
                actions = [a for a, _ in outcomes]
                probs = [p for _, p in outcomes]
                if actions and abs(fsum(probs) - 1.0) <= PROB_TOLERANCE and min(probs) >= 0.0 \
                        and len(set(actions)) == len(actions):
                    record(CHANCE_CODE)
                    add_count(len(actions))
                    add_probs(probs)
                    add_labels(actions)
                else:
                    actions = slow(state)
            else:  # simultaneous, mean-field, invalid: the History walk says what is wrong
                actions = slow(state)
        except (GameError, MemoryError):
            raise
        except Exception:  # a pyspiel call raised: the History asks again and names it
            actions = slow(state)
            if not actions:
                continue
        created += len(actions)
        if created > limit:
            limit = walk.over_limit(len(flushed) + len(buffer) - 1, created)
        # last first, so that the first child is visited first; the first child is the state
        # itself, its action applied in place: nothing reads the state after this, and a
        # clone fewer per internal node saves about 6% of a bare walk of liar's dice
        child = state.child
        try:
            for action in reversed(actions[1:]):
                push(child(action))
            action = actions[0]
            state.apply_action(action)
        except Exception as exc:
            node = len(flushed) + len(buffer) - 1
            call = f"child({short_repr(action, 24)})"
            # the path replayed from the root: apply_action may have left the state half-done
            raise walk.raised(node, walk.history_at(node), call, exc) from exc
        push(state)
    walk.created = created


def _source_of(name: str, parameters: Mapping, game: Any) -> str | None:
    """``name`` and ``"; <file> sha256 <hex>"`` for every parameter value (nested games' too,
    defaults included) that names an existing file, read now, right after OpenSpiel read it;
    ``None`` if one cannot be read. OpenSpiel's parameters do not say which are files
    (``filename``, ``instances_file``, ``boards_file``, ...): any path to a file counts."""
    paths: set[str] = set()

    def collect(values: Mapping) -> None:
        for value in values.values():
            if isinstance(value, Mapping):
                collect(value)
            elif isinstance(value, str) and os.path.isfile(value):
                paths.add(value)

    collect(parameters)
    collect(game.get_parameters())
    parts = [name]
    for path in sorted(paths):
        try:
            with open(path, "rb") as stream:
                parts.append(f"{path} sha256 {hashlib.sha256(stream.read()).hexdigest()}")
        except OSError:
            return None
    return "; ".join(parts)


def _game_names(parameters: Mapping) -> list[str]:
    """The game names in parsed parameters: the game's own, then those of games it wraps."""
    names = [parameters["name"]] if isinstance(parameters.get("name"), str) else []
    for value in parameters.values():
        if isinstance(value, Mapping):
            names.extend(_game_names(value))
    return names


def _load_game(name: str) -> tuple[Any, Mapping]:
    """``pyspiel.load_game(name)`` and the parameters parsed from ``name``; an unknown game or
    bad parameters are a ``ValueError`` naming ``name``, in one line (OpenSpiel's
    ``SpielError`` goes on with the list of every game). Unknown names, nested ones too, are
    caught before OpenSpiel, which would print every game's name on stderr as well."""
    pyspiel = _pyspiel()

    def refused(exc: Exception) -> ValueError:
        reason = first_line(exc).split(" Available games")[0]
        if not isinstance(exc, pyspiel.SpielError):
            reason = f"{type(exc).__name__}: {reason}"
        return ValueError(f"OpenSpiel game {name!r}: {reason}")

    try:
        parameters = pyspiel.game_parameters_from_string(name)
    except Exception as exc:  # a malformed string
        raise refused(exc) from exc
    known = set(pyspiel.registered_names())
    unknown = [game for game in _game_names(parameters) if game not in known]
    if unknown:
        raise ValueError(
            f"OpenSpiel game {name!r}: Unknown game {unknown[0]!r}. "
            "(pyspiel.registered_names() lists the games)"
        )
    try:
        return pyspiel.load_game(name), parameters
    except Exception as exc:  # SpielError mostly, but a game's C++ may throw anything
        raise refused(exc) from exc


def from_openspiel(
    game_or_name: Any,
    *,
    max_nodes: int = DEFAULT_MAX_NODES,
    max_memory: int | None = None,
    cache_dir: str | os.PathLike[str] | None = None,
) -> OpenSpielGame:
    """Wrap an OpenSpiel game as a cfrkit :class:`~cfrkit.Game` and compile it.

    Parameters
    ----------
    game_or_name : pyspiel.Game or str
        A loaded game, or a name for ``pyspiel.load_game`` such as ``"leduc_poker"`` or
        ``"kuhn_poker(players=3)"``.
    max_nodes, max_memory : int, optional
        Passed to :func:`cfrkit.compile_game`: give up with :class:`cfrkit.GameError` past this
        many histories (default 20 million), or when the walk would need more memory than
        ``max_memory`` bytes (default: 80% of the memory available).
    cache_dir : str or os.PathLike, optional
        Passed to :func:`cfrkit.compile_game`: keep the compiled game in this directory, and
        load it from there instead of walking OpenSpiel's tree when a previous process has
        (keyed by :attr:`OpenSpielGame.identity`: the name, the SHA-256 of each data file it
        names, the key style and the OpenSpiel version). Only for a game given by name.

    Returns
    -------
    OpenSpielGame
        A game whose infoset keys are OpenSpiel's ``information_state_string(player)`` and whose
        action labels (chance outcomes included) are OpenSpiel's integer action ids. Where two
        players can hold the same string (the strings of ``phantom_ttt`` and ``latent_ttt`` do
        not name the player), every key is ``"p{player}|{string}"`` instead, and
        :attr:`OpenSpielGame.keys_per_player` is set; the policy conversions below map the
        keys back. It comes
        back already compiled: the whole OpenSpiel tree is walked once, here, and the
        :class:`~cfrkit.CompiledGame` is cached, so ``cfrkit.compile_game(game)`` and every
        trainer reuse it.

    Raises
    ------
    ImportError
        If OpenSpiel is not installed.
    ValueError
        If OpenSpiel knows no game of that name or refuses its parameters (one line, naming
        the string), or if the game is simultaneous-move (load it as
        ``turn_based_simultaneous_game(game=...)``, or wrap it with
        ``pyspiel.convert_to_turn_based``), a mean-field game, has sampled (not explicit)
        chance, or provides no information-state strings; or if ``cache_dir`` is given with a
        game object rather than a name, or a data file the name names cannot be read.
    cfrkit.GameError
        If the game breaks a rule cfrkit checks, e.g. imperfect recall, or is larger than
        ``max_nodes``.
    """
    pyspiel = _pyspiel()
    limits = {"max_nodes": max_nodes, "max_memory": max_memory, "cache_dir": cache_dir}
    if isinstance(game_or_name, OpenSpielGame):
        compile_game(game_or_name, **limits)  # compiled on return, as documented
        return game_or_name
    if isinstance(game_or_name, str):
        game, parameters = _load_game(game_or_name)
        return _from_loaded(game, (game_or_name, parameters), limits)
    if isinstance(game_or_name, pyspiel.Game):
        return _from_loaded(game_or_name, None, limits)
    raise TypeError(
        f"expected a pyspiel.Game or a game name, got {type(game_or_name).__name__}"
    )


def _from_loaded(game: Any, loaded_as: tuple[str, Mapping] | None, limits: dict) -> OpenSpielGame:
    """:func:`from_openspiel` of a loaded ``game``; ``loaded_as``: the name it was loaded by
    and its parsed parameters, if it was (the command line loads it first, to keep
    OpenSpiel's messages off stderr)."""
    pyspiel = _pyspiel()
    game_type = game.get_type()
    dynamics = game_type.dynamics
    if dynamics == pyspiel.GameType.Dynamics.SIMULTANEOUS:
        # a name with its brackets: the transform's parameter needs a game, not a string
        shown = str(game) if loaded_as is None or "(" not in loaded_as[0] else loaded_as[0]
        raise ValueError(
            f"{shown} is a simultaneous-move game; cfrkit solves turn-based games: load it as "
            f"'turn_based_simultaneous_game(game={shown})' (from_openspiel and the command line "
            "take that name), or wrap the loaded game with pyspiel.convert_to_turn_based"
        )
    if dynamics != pyspiel.GameType.Dynamics.SEQUENTIAL:
        raise ValueError(f"{game} has {dynamics}; only sequential (turn-based) games are supported")
    if game_type.chance_mode == pyspiel.GameType.ChanceMode.SAMPLED_STOCHASTIC:
        raise ValueError(
            f"{game} has sampled chance; cfrkit needs explicit chance outcomes and probabilities"
        )
    if not game_type.provides_information_state_string:
        raise ValueError(
            f"{game} provides no information-state strings, which cfrkit needs as infoset keys "
            "(OpenSpiel's perfect-information and one-player games often have none)"
        )
    source = None if loaded_as is None else _source_of(*loaded_as, game)

    def wrap(keys_per_player: bool) -> OpenSpielGame:
        wrapped = OpenSpielGame(game, keys_per_player=keys_per_player)
        wrapped._source = source
        return wrapped

    wrapped = wrap(False)
    cache_dir = limits["cache_dir"]
    if cache_dir is not None and source is None:
        raise ValueError(
            f"cache_dir: {game} is cached only when loaded by name, as its string does not "
            "always name it (pass the name to from_openspiel)" if loaded_as is None else
            f"cache_dir: a data file of {loaded_as[0]!r} cannot be read"
        )
    if cache_dir is not None and not cache_path(wrapped, cache_dir).exists():
        # a game needing per-player keys is cached under that identity: no walk to find out
        per_player = wrap(True)
        if cache_path(per_player, cache_dir).exists():
            wrapped = per_player
    try:
        compile_game(wrapped, **limits)
    except GameError as exc:
        if not isinstance(exc.__cause__, _SharedKey):
            raise
        # the strings do not name the player: key every infoset by (player, string) instead
        wrapped = wrap(True)
        compile_game(wrapped, **limits)
    finally:
        wrapped._holders = None  # only needed during the walk
    return wrapped


# -- policies --------------------------------------------------------------------------------


def _compiled_openspiel(game: OpenSpielGame | CompiledGame) -> tuple[CompiledGame, Any]:
    compiled = compile_game(game)
    if not isinstance(compiled.game, OpenSpielGame):
        raise TypeError(
            f"expected a game made by cfrkit.openspiel.from_openspiel, got {compiled.game!r}"
        )
    return compiled, compiled.game.openspiel_game


def _table(caller: str, compiled: CompiledGame, policy: Policy | Mapping) -> np.ndarray:
    if isinstance(policy, Policy):
        check_policy_game(caller, compiled, policy)
    else:
        policy = Policy.from_dict(compiled, policy)
    return policy.table


def _rows_by_openspiel_key(compiled: CompiledGame, table: np.ndarray) -> dict[str, tuple]:
    """``{OpenSpiel string: (infoset, actions, probabilities)}`` for an OpenSpiel policy.

    OpenSpiel's tabular policies have one row per string; where players share a string (games
    with per-player keys), their rows must agree or the policy cannot be written that way.
    """
    game = compiled.game
    first = compiled.tree.infoset_first_slot
    rows: dict[str, tuple] = {}
    for infoset, (key, actions) in enumerate(zip(compiled.infoset_keys, compiled.infoset_actions)):
        start = int(first[infoset])
        row = (infoset, actions, table[start : start + len(actions)])
        text = game.openspiel_key(key)
        other = rows.setdefault(text, row)
        if other is not row and not (other[1] == actions and np.array_equal(other[2], row[2])):
            raise ValueError(
                f"OpenSpiel's tabular policies have one row per information-state string, and "
                f"infosets {short_repr(compiled.infoset_keys[other[0]])} and {short_repr(key)} "
                "share theirs but are played differently here (use cfrkit.nash_conv and "
                "cfrkit.evaluate on this game)"
            )
    return rows


def to_pyspiel_policy(game: OpenSpielGame | CompiledGame, policy: Policy | Mapping) -> Any:
    """``policy`` as a C++ ``pyspiel.TabularPolicy`` for ``game.openspiel_game``.

    Cheap to build even for large games (no walk of the OpenSpiel tree); accepted by
    ``pyspiel.nash_conv``, ``pyspiel.exploitability`` and the other C++ algorithms.

    Parameters
    ----------
    game : OpenSpielGame or its CompiledGame
        A game from :func:`from_openspiel`.
    policy : Policy or mapping
        A policy of ``game`` (anything :meth:`cfrkit.Policy.from_dict` accepts).

    Returns
    -------
    pyspiel.TabularPolicy
        Keyed by OpenSpiel's information-state strings, with OpenSpiel's action ids.
    """
    pyspiel = _pyspiel()
    compiled, _ = _compiled_openspiel(game)
    table = _table("to_pyspiel_policy", compiled, policy)
    mapping = {
        text: list(zip(actions, probabilities.tolist()))
        for text, (_, actions, probabilities) in _rows_by_openspiel_key(compiled, table).items()
    }
    return pyspiel.TabularPolicy(mapping)


def to_tabular_policy(game: OpenSpielGame | CompiledGame, policy: Policy | Mapping) -> Any:
    """``policy`` as OpenSpiel's python ``TabularPolicy`` for ``game.openspiel_game``.

    The result is keyed by OpenSpiel's information-state strings, so it works with
    ``open_spiel.python.algorithms.exploitability.nash_conv`` and the rest of OpenSpiel's
    python algorithms. (Building a ``TabularPolicy`` enumerates every OpenSpiel state in
    Python, which takes a while for large games; :func:`to_pyspiel_policy` does not.)

    Parameters
    ----------
    game : OpenSpielGame or its CompiledGame
        A game from :func:`from_openspiel`.
    policy : Policy or mapping
        A policy of ``game`` (anything :meth:`cfrkit.Policy.from_dict` accepts).

    Returns
    -------
    open_spiel.python.policy.TabularPolicy
        Every information state's row over all of OpenSpiel's action ids (0 where an action
        is illegal).

    Raises
    ------
    ValueError
        If OpenSpiel's policy has an information state the compiled game does not (it cannot
        happen for a game compiled from the same OpenSpiel game).
    """
    policy_module = _python_policy_module()
    compiled, openspiel_game = _compiled_openspiel(game)
    rows = _rows_by_openspiel_key(compiled, _table("to_tabular_policy", compiled, policy))
    tabular = policy_module.TabularPolicy(openspiel_game)
    probabilities = tabular.action_probability_array
    probabilities[:] = 0.0
    for text, row in tabular.state_lookup.items():
        if text not in rows:
            raise ValueError(
                f"OpenSpiel information state {short_repr(text)} is not in {short_repr(compiled.game)}"
            )
        _, actions, values = rows[text]
        probabilities[row, np.asarray(actions, dtype=np.int64)] = values
    return tabular


def _game_and_parameters(game: Any) -> tuple:
    """A pyspiel game's name and every parameter, defaults included: ``kuhn_poker()`` and
    ``kuhn_poker(players=2)`` are one game, though their strings differ."""
    try:
        return game.get_type().short_name, game.get_parameters()
    except AttributeError:  # not a pyspiel game: its string is all there is
        return (str(game),)


def from_openspiel_policy(
    game: OpenSpielGame | CompiledGame, policy: Any, *, normalise: bool = False
) -> Policy:
    """Read an OpenSpiel tabular policy into a cfrkit :class:`~cfrkit.Policy` of ``game``.

    Parameters
    ----------
    game : OpenSpielGame or its CompiledGame
        A game from :func:`from_openspiel`.
    policy : open_spiel.python.policy.TabularPolicy or pyspiel.TabularPolicy
        The policy, e.g. ``pyspiel.CFRSolver(...).tabular_average_policy()``. It must have a
        row for every information state of ``game`` and none for states the game does not
        have (a python ``TabularPolicy`` must also be of the same OpenSpiel game);
        probabilities of illegal actions must be zero.
    normalise : bool, optional
        Divide each row by its sum first (default ``False``: a row must sum to 1 within
        1e-9). For a policy whose rows were rounded, e.g. kept in float32.

    Returns
    -------
    Policy

    Raises
    ------
    TypeError
        If ``policy`` is not an OpenSpiel tabular policy, or ``game`` was not made by
        :func:`from_openspiel`.
    ValueError
        If the policy is another game's (another OpenSpiel game, or rows for information
        states ``game`` does not have), has no row for an information state of ``game``, or a
        row :meth:`cfrkit.Policy.from_dict` refuses (an illegal action with a positive
        probability, a row that does not sum to 1).
    """
    pyspiel = _pyspiel()
    policy_module = _python_policy_module()
    compiled, _ = _compiled_openspiel(game)
    if isinstance(policy, policy_module.TabularPolicy):
        probabilities = policy.action_probability_array
        rows = {}
        for key, row in policy.state_lookup.items():
            (nonzero,) = np.nonzero(probabilities[row])
            rows[key] = {int(a): float(probabilities[row, a]) for a in nonzero}
    elif isinstance(policy, pyspiel.TabularPolicy):
        rows = {key: dict(pairs) for key, pairs in policy.policy_table().items()}
    else:
        raise TypeError(
            "expected an OpenSpiel TabularPolicy (python or pyspiel), got "
            f"{type(policy).__name__}"
        )
    rows = {key: {int(a): p for a, p in row.items()} for key, row in rows.items()}
    ours = compiled.game
    theirs = getattr(policy, "game", None)  # a python TabularPolicy knows its game
    if theirs is not None and _game_and_parameters(theirs) != _game_and_parameters(
            ours.openspiel_game):
        raise ValueError(f"from_openspiel_policy: the policy is of OpenSpiel's {theirs}, not "
                         f"{ours.openspiel_game}")
    for key in compiled.infoset_keys:
        if ours.openspiel_key(key) not in rows:
            raise ValueError(
                f"the OpenSpiel policy has no row for information state {short_repr(ours.openspiel_key(key))}"
            )
    # rows for states the game does not have: another game's policy, whose strings may name
    # other players' states here (three-player Kuhn's "0pb" is player 2's, two-player's 0's)
    extra = rows.keys() - {ours.openspiel_key(key) for key in compiled.infoset_keys}
    if extra:
        raise ValueError(
            f"from_openspiel_policy: the policy has rows for {len(extra):,} information states "
            f"{ours.openspiel_game} does not have, e.g. {short_repr(min(extra), 40)}: another "
            "game's policy?"
        )
    # where players share a string (per-player keys), OpenSpiel's one row serves them all
    return Policy.from_dict(
        compiled, {key: rows[ours.openspiel_key(key)] for key in compiled.infoset_keys},
        normalise=normalise,
    )
