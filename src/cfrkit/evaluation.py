"""Exact evaluation of a policy: expected values, best responses, NashConv, exploitability.

All of these run as array kernels on the compiled tree (no Python recursion), so they are cheap
enough to call inside a training loop.
"""

from __future__ import annotations

import contextlib
from collections.abc import Hashable, Iterator, Mapping
from dataclasses import dataclass, fields
from typing import NamedTuple

import numpy as np

from . import _threads
from ._frozen import frozen_copy
from ._kernels import best_response as _br
from ._kernels import parallel as _parallel
from ._notice import compile_notice
from ._numbers import integer_value
from ._text import counted, short_repr
from .game import Game
from .policy import Policy, check_policy_game
from .statics import parallel_layout
from .tree import CompiledGame, compile_game

__all__ = [
    "BestResponse",
    "Evaluation",
    "best_response",
    "evaluate",
    "expected_values",
    "exploitability",
    "nash_conv",
]


class _BestResponseFields(NamedTuple):
    value: float
    policy: dict[str, Hashable]


class BestResponse(_BestResponseFields):
    """A best response of one player: its value and its pure policy.

    Still the 2-tuple ``(value, policy)`` it always was (``value, response = best_response(...)``
    unpacks it, and it compares equal to that tuple); :meth:`as_policy` adds the whole profile
    with the response played in it.

    Attributes
    ----------
    value : float
        The player's expected utility when it best-responds and the others follow the policy.
    policy : dict
        ``{infoset key: action}`` for each of the player's infosets.
    """

    # set by best_response() (a tuple subclass cannot have __slots__; these live in __dict__)
    _game: CompiledGame | None = None
    _player: int = -1
    _responded: np.ndarray | None = None  # the responded profile's slot probabilities
    _choice: np.ndarray | None = None  # the chosen action index of every infoset (player's only)

    def as_policy(self) -> Policy:
        """The profile with this response in it, as a :class:`~cfrkit.Policy`.

        The responding player's infosets play the chosen action with probability 1; every other
        infoset keeps its row of the policy that was responded to. So
        ``expected_values(game, response.as_policy())[player]`` is ``response.value`` (up to
        rounding).

        Raises
        ------
        ValueError
            If this object was not made by :func:`best_response` (built by hand, or by
            ``_replace``), so it does not know the game.
        """
        compiled, responded, choice = self._game, self._responded, self._choice
        if compiled is None or responded is None or choice is None:
            raise ValueError("as_policy() needs a BestResponse made by cfrkit.best_response()")
        tree = compiled.tree
        table = responded.copy()
        start, stop = tree.player_infoset_start[self._player : self._player + 2]
        first = tree.infoset_first_slot
        for infoset in range(start, stop):
            slot = first[infoset]
            table[slot : slot + tree.infoset_num_actions[infoset]] = 0.0
            table[slot + choice[infoset]] = 1.0
        return Policy(compiled, table)


@dataclass(frozen=True, eq=False)
class Evaluation:
    """Everything :func:`evaluate` measures about one policy.

    Its arrays are read-only. Two evaluations are equal (``==``) when every field holds the
    same numbers; an evaluation is not hashable (its arrays are not).

    Attributes
    ----------
    nash_conv : float
        ``sum_i (max_{sigma_i'} u_i(sigma_i', sigma_{-i}) - u_i(sigma))``: 0 exactly at a Nash
        equilibrium.
    exploitability : float or None
        ``nash_conv / 2`` for two-player zero-sum games, else ``None``.
    player_improvements : numpy.ndarray
        Each player's gain from switching to a best response (the terms of ``nash_conv``).
    values : numpy.ndarray
        Each player's expected utility under the policy.
    best_response_values : numpy.ndarray
        Each player's best-response value against the others.
    """

    nash_conv: float
    exploitability: float | None
    player_improvements: np.ndarray
    values: np.ndarray
    best_response_values: np.ndarray

    def __post_init__(self) -> None:
        for name in ("player_improvements", "values", "best_response_values"):
            object.__setattr__(self, name, frozen_copy(getattr(self, name), np.float64))

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Evaluation):
            return NotImplemented
        return all(np.array_equal(getattr(self, field.name), getattr(other, field.name))
                   for field in fields(self))

    def __str__(self) -> str:
        fmt = lambda xs: "[" + ", ".join(f"{x:+.6f}" for x in xs) + "]"  # noqa: E731
        lines = [f"NashConv            {self.nash_conv:.6g}"]
        if self.exploitability is not None:
            lines.append(f"exploitability      {self.exploitability:.6g}")
        lines.append(f"player improvements {fmt(self.player_improvements)}")
        lines.append(f"player values       {fmt(self.values)}")
        return "\n".join(lines)


# the evaluation kernels were compiled (or loaded) in this process: the serial ones, the
# parallel ones
_kernels_ready = {False: False, True: False}


@contextlib.contextmanager
def _announced(parallel: bool = False) -> Iterator[None]:
    """Announce the evaluation kernels' first compilation if it takes a while."""
    if _kernels_ready[parallel]:
        yield
        return
    with compile_notice("the parallel evaluation kernels" if parallel
                        else "the evaluation kernels"):
        yield
    _kernels_ready[parallel] = True


def warm_up_evaluation(game: Game | CompiledGame, threads: int | None = None) -> None:
    """Compile (or load) the evaluation kernels ``evaluate(game, ..., threads=threads)`` uses
    now, if this process has not yet: one evaluation of the uniform policy (a timed run can then
    leave compilation out)."""
    compiled = compile_game(game)
    if not _kernels_ready[_threads.parallel_threads(compiled.num_nodes, threads, True) > 1]:
        evaluate(compiled, Policy.uniform(compiled), threads=threads)


def _profile(compiled: CompiledGame, policy: Policy | Mapping, caller: str) -> np.ndarray:
    """The policy's slot probabilities followed by the chance probabilities, for the kernels.

    A :class:`Policy` must belong to ``compiled`` or an equal compilation (same fingerprint):
    its table is used slot by slot. Any other mapping goes through :meth:`Policy.from_dict`.
    """
    if isinstance(policy, Policy):
        check_policy_game(caller, compiled, policy)
    else:
        policy = Policy.from_dict(compiled, policy)
    return np.concatenate([policy._table, compiled.tree.chance_prob])


def _response_order(compiled: CompiledGame, player: int) -> tuple[np.ndarray, int]:
    """The bottom-up unit order for ``player``'s best response, computed once per game."""
    key = ("best_response_order", player)
    cached = compiled._cache.get(key)
    if cached is None:
        tree = compiled.tree
        size = compiled.num_nodes + compiled.num_infosets
        order = np.empty(size, dtype=np.int64)
        used = _br.best_response_order(tree, player, np.empty(size, dtype=np.int64), order)
        cached = (order[:used].copy(), int(used))
        compiled._cache[key] = cached
    return cached


def _response_waves(compiled: CompiledGame, player: int) -> tuple[np.ndarray, np.ndarray]:
    """The units of :func:`_response_order` grouped into waves for the parallel kernel:
    ``(units, wave_start)``, wave ``w`` being ``units[wave_start[w]:wave_start[w + 1]]``."""
    key = ("best_response_waves", player)
    cached = compiled._cache.get(key)
    if cached is None:
        order, used = _response_order(compiled, player)
        wave = np.empty(used, dtype=np.int64)
        unit_wave = np.full(compiled.num_nodes + compiled.num_infosets, -1, dtype=np.int64)
        _br.best_response_waves(compiled.tree, player, order, used, unit_wave, wave)
        by_wave = np.argsort(wave, kind="stable")
        wave_start = np.zeros(int(wave.max(initial=-1)) + 2, dtype=np.int64)
        np.cumsum(np.bincount(wave, minlength=wave_start.shape[0] - 1), out=wave_start[1:])
        cached = (np.ascontiguousarray(order[by_wave]), wave_start)
        compiled._cache[key] = cached
    return cached


def _check_player(compiled: CompiledGame, player: int) -> int:
    if integer_value(player) is None:
        raise ValueError(f"player must be an int, got {short_repr(player)}")
    if not 0 <= player < compiled.num_players:
        raise ValueError(
            f"player {player} out of range for {counted(compiled.num_players, 'player')}"
        )
    return int(player)


def expected_values(
    game: Game | CompiledGame, policy: Policy | Mapping, *, threads: int | None = None
) -> np.ndarray:
    """Each player's expected utility when everyone follows ``policy``.

    Parameters
    ----------
    game : Game or CompiledGame
        The game.
    policy : Policy or Mapping
        The profile (a mapping goes through :meth:`~cfrkit.Policy.from_dict`).
    threads : int, optional
        Threads to run on (default: all of numba's, ``numba.config.NUMBA_NUM_THREADS``); the
        result is the same, bit for bit, whatever the count. Games under 100,000 nodes always
        run on one (more threads gain nothing there).

    Returns
    -------
    numpy.ndarray
        float64 array of shape ``(num_players,)``.

    Raises
    ------
    ValueError
        If ``policy`` is a :class:`~cfrkit.Policy` of another game (an equal game compiled
        separately is fine; ``policy.to_dict()`` is matched by infoset key instead), or a
        mapping :meth:`~cfrkit.Policy.from_dict` rejects; or ``threads`` is not a positive
        integer up to ``numba.config.NUMBA_NUM_THREADS`` or None.
    """
    compiled = compile_game(game)
    count = _thread_count(compiled, threads)
    with _announced(count > 1):
        return _values(compiled, _profile(compiled, policy, "expected_values"), count)


def _thread_count(compiled: CompiledGame, threads: object) -> int:
    """The threads the kernels run on for ``threads=`` (validated): 1 is the serial kernels."""
    return _threads.parallel_threads(compiled.num_nodes, _threads.check_threads(threads), True)


def _values(compiled: CompiledGame, probs: np.ndarray, count: int = 1) -> np.ndarray:
    value = compiled.tree.utility.copy()
    if count > 1:
        with _threads.running(count):
            _parallel.expected_values_parallel(
                compiled.tree, parallel_layout(compiled), _threads.workers(count), probs, value,
            )
    else:
        _br.expected_values(compiled.tree, probs, value)
    return value[:, 0].copy()


def _best_response_value(
    compiled: CompiledGame, probs: np.ndarray, player: int, count: int = 1
) -> tuple[float, np.ndarray]:
    """``player``'s best-response value to ``probs`` and the action index it picks at each
    infoset (the kernels' part: NashConv needs only this)."""
    tree = compiled.tree
    choice = np.zeros(compiled.num_infosets, dtype=np.int64)
    value = tree.utility[player].copy()
    reach = np.empty(compiled.num_nodes)
    if count > 1:
        units, wave_start = _response_waves(compiled, player)
        min_wave = _threads.parallel_wave_size(count)
        with _threads.running(count):
            br_value = _parallel.best_response_value_parallel(
                tree, parallel_layout(compiled), _threads.workers(count), probs, player,
                units, wave_start, min_wave, reach, value, choice,
            )
    else:
        order, used = _response_order(compiled, player)
        br_value = _br.best_response_value(tree, probs, player, order, used, reach, value, choice)
    return float(br_value), choice


def _best_response(
    compiled: CompiledGame, probs: np.ndarray, player: int, count: int = 1
) -> BestResponse:
    br_value, choice = _best_response_value(compiled, probs, player, count)
    tree = compiled.tree
    first, last = int(tree.player_infoset_start[player]), int(tree.player_infoset_start[player + 1])
    keys, labels = compiled.infoset_keys, compiled.infoset_actions
    actions = {  # from Python ints: indexing with numpy scalars takes 1.5 times as long
        keys[i]: labels[i][pick] for i, pick in zip(range(first, last), choice[first:last].tolist())
    }
    response = BestResponse(br_value, actions)
    response._game = compiled
    response._player = player
    response._responded = probs[: tree.num_action_slots]
    response._choice = choice
    return response


def best_response(
    game: Game | CompiledGame, policy: Policy | Mapping, player: int, *,
    threads: int | None = None,
) -> BestResponse:
    """``player``'s best response to the other players' strategies in ``policy``.

    At each of ``player``'s infosets the response picks
    ``argmax_a sum_{h in I} pi_{-i}(h) v_i(h a)``, where ``pi_{-i}`` is the others' and chance's
    reach and ``v_i`` already assumes the best response deeper down; with perfect recall this
    maximises ``player``'s expected utility. Ties go to the first action in the game's order.

    Parameters
    ----------
    game : Game or CompiledGame
        The game.
    policy : Policy or Mapping
        The profile (a mapping goes through :meth:`~cfrkit.Policy.from_dict`).
    player : int
        The responding player, from 0; the others keep their strategies in ``policy`` (its
        rows for ``player`` must be there but do not change the answer).
    threads : int, optional
        Threads to run on, as in :func:`expected_values` (the same response, bit for bit, on
        any count).

    Returns
    -------
    BestResponse
        ``(value, policy)``: the best-response value and ``{infoset key: action}``;
        ``.as_policy()`` gives the whole profile with the response in it, as a ``Policy``.

    Raises
    ------
    ValueError
        If ``policy`` is a :class:`~cfrkit.Policy` of another game (an equal game compiled
        separately is fine; ``policy.to_dict()`` is matched by infoset key instead), or a
        mapping :meth:`~cfrkit.Policy.from_dict` rejects.
        Also if ``player`` is not one of the game's players, or ``threads`` is not a
        positive integer up to ``numba.config.NUMBA_NUM_THREADS`` or None.
    """
    compiled = compile_game(game)
    player = _check_player(compiled, player)
    count = _thread_count(compiled, threads)
    with _announced(count > 1):
        return _best_response(compiled, _profile(compiled, policy, "best_response"), player,
                              count)


def evaluate(
    game: Game | CompiledGame, policy: Policy | Mapping, *, threads: int | None = None
) -> Evaluation:
    """Values, best-response values, per-player improvements and NashConv of ``policy``.

    Parameters
    ----------
    game : Game or CompiledGame
        The game.
    policy : Policy or Mapping
        The profile (a mapping goes through :meth:`~cfrkit.Policy.from_dict`).
    threads : int, optional
        Threads to run on, as in :func:`expected_values` (the same numbers, bit for bit, on
        any count).

    Returns
    -------
    Evaluation
        Every figure at once, for the price of one :func:`nash_conv` (``exploitability`` is
        ``None`` unless the game is two-player zero-sum).

    Raises
    ------
    ValueError
        If ``policy`` is a :class:`~cfrkit.Policy` of another game (an equal game compiled
        separately is fine; ``policy.to_dict()`` is matched by infoset key instead), or a
        mapping :meth:`~cfrkit.Policy.from_dict` rejects; or ``threads`` is not a positive
        integer up to ``numba.config.NUMBA_NUM_THREADS`` or None.
    """
    return _evaluate(compile_game(game), policy, "evaluate", threads)


def _evaluate(
    compiled: CompiledGame, policy: Policy | Mapping, caller: str, threads: object = None
) -> Evaluation:
    count = _thread_count(compiled, threads)
    probs = _profile(compiled, policy, caller)
    with _announced(count > 1):
        values = _values(compiled, probs, count)
        responses = np.array(
            # the values alone: building each response's {key: action} took 0.6 of NashConv's
            # time on liar's dice (benchmarks/against_revision.py --trainer nash_conv)
            [_best_response_value(compiled, probs, p, count)[0]
             for p in range(compiled.num_players)]
        )
    improvements = responses - values
    total = float(improvements.sum())
    two_player_zero_sum = compiled.num_players == 2 and compiled.zero_sum
    return Evaluation(
        nash_conv=total,
        exploitability=total / 2 if two_player_zero_sum else None,
        player_improvements=improvements,
        values=values,
        best_response_values=responses,
    )


def nash_conv(
    game: Game | CompiledGame, policy: Policy | Mapping, *, threads: int | None = None
) -> float:
    """``sum_i (u_i(BR_i, sigma_{-i}) - u_i(sigma))``: how far ``policy`` is from equilibrium.

    Parameters
    ----------
    game : Game or CompiledGame
        The game.
    policy : Policy or Mapping
        The profile (a mapping goes through :meth:`~cfrkit.Policy.from_dict`).
    threads : int, optional
        Threads to run on, as in :func:`expected_values` (the same number, bit for bit, on
        any count).

    Returns
    -------
    float
        NashConv: 0 exactly at a Nash equilibrium, positive elsewhere (up to rounding, about
        1e-16, at exact indifference).

    Raises
    ------
    ValueError
        If ``policy`` is a :class:`~cfrkit.Policy` of another game (an equal game compiled
        separately is fine; ``policy.to_dict()`` is matched by infoset key instead), or a
        mapping :meth:`~cfrkit.Policy.from_dict` rejects; or ``threads`` is not a positive
        integer up to ``numba.config.NUMBA_NUM_THREADS`` or None.
    """
    return _evaluate(compile_game(game), policy, "nash_conv", threads).nash_conv


def exploitability(
    game: Game | CompiledGame, policy: Policy | Mapping, *, threads: int | None = None
) -> float:
    """NashConv / 2, the mean gain of a best response, for two-player zero-sum games.

    Parameters
    ----------
    game : Game or CompiledGame
        The game.
    policy : Policy or Mapping
        The profile (a mapping goes through :meth:`~cfrkit.Policy.from_dict`).
    threads : int, optional
        Threads to run on, as in :func:`expected_values` (the same number, bit for bit, on
        any count).

    Returns
    -------
    float
        ``nash_conv(game, policy) / 2``.

    Raises
    ------
    ValueError
        If the game does not have two players or is not zero-sum; if ``policy`` is a
        :class:`~cfrkit.Policy` of another game (an equal game compiled separately is fine), or
        a mapping :meth:`~cfrkit.Policy.from_dict` rejects; or ``threads`` is not a positive
        integer up to ``numba.config.NUMBA_NUM_THREADS`` or None.
    """
    compiled = compile_game(game)
    if compiled.num_players != 2 or not compiled.zero_sum:
        raise ValueError(
            f"exploitability is defined for two-player zero-sum games; {compiled.game!r} has "
            f"{counted(compiled.num_players, 'player')} and is {'' if compiled.zero_sum else 'not '}"
            "zero-sum (use nash_conv)"
        )
    return _evaluate(compiled, policy, "exploitability", threads).nash_conv / 2
