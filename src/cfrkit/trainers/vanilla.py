"""Vanilla CFR: every iteration walks the whole tree once per player."""

from __future__ import annotations

from ..game import Game
from ..tree import CompiledGame
from .._kernels.traverse import cfr_iterations
from .base import Trainer

__all__ = ["VanillaCFR"]


class VanillaCFR(Trainer):
    """Counterfactual regret minimisation with full tree walks.

    Each iteration computes, for every player ``i`` and infoset ``I`` of ``i``, the
    counterfactual regrets ``R(I, a) += sum_{h in I} pi_{-i}(h) (v_i(h a) - v_i(h))`` under the
    current profile, moves the current strategy by regret matching, and adds
    ``pi_i(I) sigma(I, a)`` to the average strategy. The average strategy's NashConv falls as
    O(1/sqrt(T)) (Zinkevich et al. 2007, "Regret Minimization in Games with Incomplete
    Information"); in practice much faster.

    Parameters
    ----------
    game : Game or CompiledGame
        The game to solve.
    alternating : bool, optional
        ``True`` (default): players update in order 0..n-1, each seeing the others' freshest
        strategies (OpenSpiel's ``CFRSolver`` convention, so numbers compare one to one).
        ``False``: simultaneous updates, every player's regrets from the same profile.

    Examples
    --------
    >>> import cfrkit
    >>> from cfrkit.games import KuhnPoker
    >>> trainer = cfrkit.VanillaCFR(KuhnPoker()).iterate(1000)
    >>> round(cfrkit.exploitability(trainer.game, trainer.average_policy()), 7)
    0.0009376
    """

    def __init__(self, game: Game | CompiledGame, *, alternating: bool = True) -> None:
        if not isinstance(alternating, bool):
            raise ValueError(f"alternating must be a bool, got {alternating!r}")
        super().__init__(game)
        self.alternating = alternating

    def _run(self, n: int) -> int:
        return cfr_iterations(
            self.game.tree, self._probs, self._regret, self._strategy_sum,
            self._reach, self._value, self._own_reach, n, self.alternating,
        )
