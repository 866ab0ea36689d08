"""OpenSpiel interop: solve OpenSpiel games with cfrkit and hand the policies back.

Needs OpenSpiel (``pip install cfrkit[openspiel]``); it is imported only when one of these
functions is called.

* :func:`from_openspiel` wraps a turn-based OpenSpiel game (chance allowed, perfect recall) as
  a :class:`cfrkit.Game`. Infoset keys are OpenSpiel's ``information_state_string(player)``
  and action labels OpenSpiel's integer action ids, chance outcomes included, so a cfrkit
  :class:`~cfrkit.Policy` over the game reads exactly like an OpenSpiel tabular policy.
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
(through OpenSpiel's C++ states) like any cfrkit game: about 7 microseconds per history.
``leduc_poker`` (9,457 histories) takes about 0.05 s, ``liars_dice`` (294,883 histories,
24,576 information sets) about 2 s.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping
from typing import Any

import numpy as np

from .game import Game, History
from .policy import Policy
from .tree import DEFAULT_MAX_NODES, CompiledGame, compile_game

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


# -- the game adapter ------------------------------------------------------------------------


class OpenSpielGame(Game):
    """A cfrkit :class:`~cfrkit.Game` over an OpenSpiel game (build it with :func:`from_openspiel`).

    Attributes
    ----------
    openspiel_game : pyspiel.Game
        The wrapped OpenSpiel game.
    num_players : int
    name : str
        OpenSpiel's description of the game with its parameters, e.g.
        ``"kuhn_poker(players=3)"``.
    """

    def __init__(self, openspiel_game: Any) -> None:
        self.openspiel_game = openspiel_game
        self.num_players = int(openspiel_game.num_players())
        self.name = str(openspiel_game)

    def root(self) -> History:
        return _OpenSpielHistory(self.openspiel_game.new_initial_state())

    def __repr__(self) -> str:
        return f"from_openspiel({self.name!r})"


class _OpenSpielHistory(History):
    """A History over one pyspiel state; every query is one call into OpenSpiel's C++."""

    __slots__ = ("_state", "_player")

    def __init__(self, state: Any) -> None:
        self._state = state
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
        return _OpenSpielHistory(self._state.child(action))

    def infoset_key(self) -> str:
        return self._state.information_state_string(self._player)

    def utilities(self) -> tuple[float, ...]:
        return tuple(self._state.returns())

    def __repr__(self) -> str:
        return f"OpenSpielState({self._state.history()!r})"


def from_openspiel(game_or_name: Any, *, max_nodes: int = DEFAULT_MAX_NODES) -> OpenSpielGame:
    """Wrap an OpenSpiel game as a cfrkit :class:`~cfrkit.Game` and compile it.

    Parameters
    ----------
    game_or_name : pyspiel.Game or str
        A loaded game, or a name for ``pyspiel.load_game`` such as ``"leduc_poker"`` or
        ``"kuhn_poker(players=3)"``.
    max_nodes : int, optional
        Passed to :func:`cfrkit.compile_game`: give up with :class:`cfrkit.GameError` past this
        many histories (default 20 million).

    Returns
    -------
    OpenSpielGame
        A game whose infoset keys are OpenSpiel's ``information_state_string(player)`` and whose
        action labels (chance outcomes included) are OpenSpiel's integer action ids. It comes
        back already compiled: the whole OpenSpiel tree is walked once, here, and the
        :class:`~cfrkit.CompiledGame` is cached, so ``cfrkit.compile_game(game)`` and every
        trainer reuse it.

    Raises
    ------
    ImportError
        If OpenSpiel is not installed.
    ValueError
        If the game is simultaneous-move (wrap it with ``pyspiel.convert_to_turn_based`` or
        load it with ``pyspiel.load_game_as_turn_based``), a mean-field game, has sampled
        (not explicit) chance, or provides no information-state strings.
    cfrkit.GameError
        If the game breaks a rule cfrkit checks, e.g. imperfect recall, or is larger than
        ``max_nodes``.
    """
    pyspiel = _pyspiel()
    if isinstance(game_or_name, OpenSpielGame):
        return game_or_name
    if isinstance(game_or_name, str):
        game = pyspiel.load_game(game_or_name)
    elif isinstance(game_or_name, pyspiel.Game):
        game = game_or_name
    else:
        raise TypeError(
            f"expected a pyspiel.Game or a game name, got {type(game_or_name).__name__}"
        )
    game_type = game.get_type()
    dynamics = game_type.dynamics
    if dynamics == pyspiel.GameType.Dynamics.SIMULTANEOUS:
        raise ValueError(
            f"{game} is a simultaneous-move game; cfrkit solves turn-based games. Apply "
            "OpenSpiel's turn-based transform first: "
            f"from_openspiel(pyspiel.convert_to_turn_based(pyspiel.load_game({str(game)!r}))) "
            "or pyspiel.load_game_as_turn_based(name, params)"
        )
    if dynamics != pyspiel.GameType.Dynamics.SEQUENTIAL:
        raise ValueError(f"{game} has {dynamics}; only sequential (turn-based) games are supported")
    if game_type.chance_mode == pyspiel.GameType.ChanceMode.SAMPLED_STOCHASTIC:
        raise ValueError(
            f"{game} has sampled chance; cfrkit needs explicit chance outcomes and probabilities"
        )
    if not game_type.provides_information_state_string:
        raise ValueError(f"{game} provides no information-state strings (needed as infoset keys)")
    wrapped = OpenSpielGame(game)
    compile_game(wrapped, max_nodes=max_nodes)
    return wrapped


# -- policies --------------------------------------------------------------------------------


def _compiled_openspiel(game: OpenSpielGame | CompiledGame) -> tuple[CompiledGame, Any]:
    compiled = compile_game(game)
    if not isinstance(compiled.game, OpenSpielGame):
        raise TypeError(
            f"expected a game made by cfrkit.openspiel.from_openspiel, got {compiled.game!r}"
        )
    return compiled, compiled.game.openspiel_game


def _table(compiled: CompiledGame, policy: Policy | Mapping) -> np.ndarray:
    if not (isinstance(policy, Policy) and policy.game is compiled):
        policy = Policy.from_dict(compiled, policy)
    return policy.table


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
    """
    pyspiel = _pyspiel()
    compiled, _ = _compiled_openspiel(game)
    table = _table(compiled, policy).tolist()
    first = compiled.tree.infoset_first_slot.tolist()
    mapping = {
        key: [(action, table[start + j]) for j, action in enumerate(actions)]
        for key, actions, start in zip(compiled.infoset_keys, compiled.infoset_actions, first)
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

    Raises
    ------
    ValueError
        If OpenSpiel's policy has an information state the compiled game does not (it cannot
        happen for a game compiled from the same OpenSpiel game).
    """
    policy_module = _python_policy_module()
    compiled, openspiel_game = _compiled_openspiel(game)
    table = _table(compiled, policy)
    tabular = policy_module.TabularPolicy(openspiel_game)
    first = compiled.tree.infoset_first_slot
    probabilities = tabular.action_probability_array
    probabilities[:] = 0.0
    for key, row in tabular.state_lookup.items():
        infoset = compiled.key_index.get(key)
        if infoset is None:
            raise ValueError(f"OpenSpiel information state {key!r} is not in {compiled.game!r}")
        actions = np.asarray(compiled.infoset_actions[infoset], dtype=np.int64)
        start = first[infoset]
        probabilities[row, actions] = table[start : start + actions.shape[0]]
    return tabular


def from_openspiel_policy(game: OpenSpielGame | CompiledGame, policy: Any) -> Policy:
    """Read an OpenSpiel tabular policy into a cfrkit :class:`~cfrkit.Policy` of ``game``.

    Parameters
    ----------
    game : OpenSpielGame or its CompiledGame
        A game from :func:`from_openspiel`.
    policy : open_spiel.python.policy.TabularPolicy or pyspiel.TabularPolicy
        The policy, e.g. ``pyspiel.CFRSolver(...).tabular_average_policy()``. It must have a
        row for every information state of ``game``; probabilities of illegal actions must be
        zero.
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
    missing = [key for key in compiled.infoset_keys if key not in rows]
    if missing:
        raise ValueError(f"the OpenSpiel policy has no row for information state {missing[0]!r}")
    return Policy.from_dict(compiled, {key: rows[key] for key in compiled.infoset_keys})
