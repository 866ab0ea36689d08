"""Two-player simultaneous-move (normal-form) games written as extensive-form games."""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Sequence

import numpy as np
from numpy.typing import ArrayLike

from .._frozen import frozen_copy
from .._numbers import real_value
from .._text import short_repr
from ..game import FixedAttributes, Game, GameError, History

__all__ = ["MatrixGame"]


class MatrixGame(FixedAttributes, Game):
    """A two-player one-shot game: both choose at once, payoffs from two matrices.

    As an extensive-form game, player 0 moves first and player 1 moves without seeing that
    move: all of player 1's histories share the infoset ``"P1"`` (player 0's is ``"P0"``).

    Parameters
    ----------
    name : str
        The game's name.
    actions : sequence of (hashable) labels
        Player 0's actions (the rows), and player 1's too unless ``column_actions`` is given.
    row_payoff : array_like of real numbers, shape (k, m)
        ``row_payoff[a, b]``: player 0's payoff when player 0 plays its ``a``-th action and
        player 1 its ``b``-th. Ints and floats only: text or booleans raise
        :class:`~cfrkit.GameError`.
    column_payoff : array_like of real numbers, shape (k, m), optional
        Player 1's payoffs; default ``-row_payoff`` (zero-sum).
    column_actions : sequence of (hashable) labels, optional
        Player 1's actions (the columns), for a game whose players have different actions;
        default: the same as ``actions``.

    Examples
    --------
    A 2 x 3 zero-sum game, whose row player mixes (1/2, 1/2) and gets 1/2:

    >>> import cfrkit
    >>> from cfrkit.games import MatrixGame
    >>> game = MatrixGame("2x3", ("top", "bottom"), [[0, 1, 3], [1, 0, 2]],
    ...                   column_actions=("left", "middle", "right"))
    >>> policy = cfrkit.CFRPlus(game).iterate(2000).average_policy()
    >>> [round(p, 3) for p in policy["P0"].values()]
    [0.5, 0.5]
    >>> round(float(cfrkit.expected_values(game, policy)[0]), 3)
    0.5
    """

    num_players = 2

    def __init__(
        self,
        name: str,
        actions: Sequence[Hashable],
        row_payoff: ArrayLike,
        column_payoff: ArrayLike | None = None,
        *,
        column_actions: Sequence[Hashable] | None = None,
    ) -> None:
        if not isinstance(name, str):
            raise TypeError(f"name must be a str, got {type(name).__name__}")
        self.name = name
        self.action_labels = _labels(name, "actions", actions)
        self.column_labels = self.action_labels if column_actions is None else \
            _labels(name, "column_actions", column_actions)
        row = _payoff_matrix(name, "row_payoff", row_payoff)
        column = -row if column_payoff is None else \
            _payoff_matrix(name, "column_payoff", column_payoff)
        shape = (len(self.action_labels), len(self.column_labels))
        for argument, matrix in (("row_payoff", row), ("column_payoff", column)):
            if matrix.shape != shape:
                columns = ("column_actions" if column_actions is not None
                           else "actions, the same for both players")
                raise GameError(
                    f"{name}: {argument} has shape {matrix.shape}, expected {shape[0]}x{shape[1]} "
                    f"(rows: actions; columns: {columns})"
                )
        # the rules, fixed once the game is made: over immutable bytes, so not even
        # setflags(write=True) can open them again
        self.row_payoff = frozen_copy(row, np.float64)
        self.column_payoff = frozen_copy(column, np.float64)

    def root(self) -> History:
        return _MatrixHistory(self, ())

    @property
    def identity(self) -> str:
        """The class, name, action labels and both payoff matrices in full (``repr`` of each
        float, so exact); see :attr:`cfrkit.Game.identity`."""
        cls = type(self)
        # named only where they differ: a square game keeps the identity (and cache key) it had
        columns = ("" if self.column_labels == self.action_labels
                   else f"column_actions={self.column_labels!r}, ")
        return (
            f"{cls.__module__}.{cls.__qualname__}(name={self.name!r}, "
            f"actions={self.action_labels!r}, {columns}row_payoff={self.row_payoff.tolist()!r}, "
            f"column_payoff={self.column_payoff.tolist()!r})"
        )


def _labels(name: str, argument: str, labels) -> tuple[Hashable, ...]:
    """``labels`` as a tuple, or a TypeError naming the argument (a string is not a sequence
    of labels)."""
    if isinstance(labels, (str, bytes)) or not isinstance(labels, Iterable):
        raise TypeError(
            f"{name}: {argument} must be a sequence of labels, got {type(labels).__name__}"
        )
    return tuple(labels)


def _payoff_matrix(name: str, argument: str, payoff) -> np.ndarray:
    """``payoff`` as a float64 array of finite numbers, or a GameError naming the argument
    (numpy's own message for ragged rows is long and names neither; numpy would read ``"1"``
    and ``True`` as numbers, which a game's utilities may not be either)."""
    try:
        array = np.asarray(payoff)
    except (TypeError, ValueError) as exc:
        reason = "rows of different lengths" if "inhomogeneous" in str(exc) else "not numbers"
        raise GameError(f"{name}: {argument} is not a matrix of numbers ({reason})") from exc
    if not (isinstance(payoff, np.ndarray) and payoff.dtype.kind in "iuf"):
        # element by element: numpy turns [[True, 0]] into ints, [["1"]] into strings
        objects = np.asarray(payoff, dtype=object)
        values = [real_value(value) for value in objects.ravel().tolist()]
        if None in values:
            culprit = objects.ravel()[values.index(None)]
            raise GameError(f"{name}: {argument} is not a matrix of numbers (it holds "
                            f"{type(culprit).__name__} {short_repr(culprit, 24)})")
        array = np.array(values, dtype=np.float64).reshape(objects.shape)
    array = array.astype(np.float64)
    if not np.isfinite(array).all():
        culprit = array.ravel()[np.flatnonzero(~np.isfinite(array))[0]]
        raise GameError(f"{name}: {argument} holds {culprit}, not a finite number")
    return array


class _MatrixHistory(History):
    __slots__ = ("_game", "_moves")

    def __init__(self, game: MatrixGame, moves: tuple[int, ...]) -> None:
        self._game = game
        self._moves = moves

    def is_terminal(self) -> bool:
        return len(self._moves) == 2

    def is_chance(self) -> bool:
        return False

    def current_player(self) -> int:
        return len(self._moves)

    def actions(self) -> tuple[Hashable, ...]:
        return self._game.column_labels if self._moves else self._game.action_labels

    def chance_outcomes(self) -> tuple:
        return ()

    def child(self, action: Hashable) -> History:
        return _MatrixHistory(self._game, self._moves + (self.actions().index(action),))

    def infoset_key(self) -> str:
        return f"P{len(self._moves)}"

    def utilities(self) -> tuple[float, float]:
        a, b = self._moves
        return float(self._game.row_payoff[a, b]), float(self._game.column_payoff[a, b])

    def __repr__(self) -> str:
        labels = [of[m] for of, m in zip((self._game.action_labels, self._game.column_labels),
                                         self._moves)]
        return f"{self._game.name}{labels}"
