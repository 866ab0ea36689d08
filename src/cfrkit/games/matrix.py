"""Two-player simultaneous-move (normal-form) games written as extensive-form games."""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Sequence

import numpy as np
from numpy.typing import ArrayLike

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
        Actions, the same for both players.
    row_payoff : array_like, shape (k, k)
        ``row_payoff[a, b]``: player 0's payoff when player 0 plays ``a`` and player 1 plays
        ``b``.
    column_payoff : array_like, shape (k, k), optional
        Player 1's payoffs; default ``-row_payoff`` (zero-sum).
    """

    num_players = 2

    def __init__(
        self,
        name: str,
        actions: Sequence[Hashable],
        row_payoff: ArrayLike,
        column_payoff: ArrayLike | None = None,
    ) -> None:
        if not isinstance(name, str):
            raise TypeError(f"name must be a str, got {type(name).__name__}")
        if isinstance(actions, (str, bytes)) or not isinstance(actions, Iterable):
            raise TypeError(
                f"{name}: actions must be a sequence of labels, got {type(actions).__name__}"
            )
        self.name = name
        self.action_labels = tuple(actions)
        row = _payoff_matrix(name, "row_payoff", row_payoff)
        column = -row if column_payoff is None else \
            _payoff_matrix(name, "column_payoff", column_payoff)
        k = len(self.action_labels)
        if row.shape != (k, k) or column.shape != (k, k):
            raise GameError(
                f"{name}: payoff matrices must be {k}x{k}, got {row.shape} and {column.shape}"
            )
        # the rules, fixed once the game is made: over immutable bytes, so not even
        # setflags(write=True) can open them again
        self.row_payoff = np.frombuffer(row.tobytes(), dtype=np.float64).reshape(k, k)
        self.column_payoff = np.frombuffer(column.tobytes(), dtype=np.float64).reshape(k, k)

    def root(self) -> History:
        return _MatrixHistory(self, ())

    @property
    def identity(self) -> str:
        """The class, name, action labels and both payoff matrices in full (``repr`` of each
        float, so exact); see :attr:`cfrkit.Game.identity`."""
        cls = type(self)
        return (
            f"{cls.__module__}.{cls.__qualname__}(name={self.name!r}, "
            f"actions={self.action_labels!r}, row_payoff={self.row_payoff.tolist()!r}, "
            f"column_payoff={self.column_payoff.tolist()!r})"
        )


def _payoff_matrix(name: str, argument: str, payoff) -> np.ndarray:
    """``payoff`` as a float64 array, or a GameError naming the argument (numpy's own message
    for ragged rows or text is long and names neither)."""
    try:
        return np.asarray(payoff, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        reason = "rows of different lengths" if "inhomogeneous" in str(exc) else "not numbers"
        raise GameError(f"{name}: {argument} is not a matrix of numbers ({reason})") from exc


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
        return self._game.action_labels

    def chance_outcomes(self) -> tuple:
        return ()

    def child(self, action: Hashable) -> History:
        return _MatrixHistory(self._game, self._moves + (self._game.action_labels.index(action),))

    def infoset_key(self) -> str:
        return f"P{len(self._moves)}"

    def utilities(self) -> tuple[float, float]:
        a, b = self._moves
        return float(self._game.row_payoff[a, b]), float(self._game.column_payoff[a, b])

    def __repr__(self) -> str:
        labels = [self._game.action_labels[m] for m in self._moves]
        return f"{self._game.name}{labels}"
