"""Vanilla CFR: every iteration walks the whole tree once per player."""

from __future__ import annotations

from collections.abc import Mapping

from .._kernels.traverse import Config
from ..game import Game
from ..policy import Policy
from ..tree import CompiledGame
from .base import Trainer, check_bool

__all__ = ["VanillaCFR"]


class VanillaCFR(Trainer):
    """Counterfactual regret minimisation with full tree walks.

    Each iteration computes, for every player ``i`` and infoset ``I`` of ``i``, the
    counterfactual regrets ``R(I, a) += sum_{h in I} pi_{-i}(h) (v_i(h a) - v_i(h))`` under the
    current profile, moves the current strategy by regret matching, and adds
    ``pi_i(I) sigma(I, a)`` to the average strategy. The average strategy's NashConv falls as
    O(1/sqrt(T)) (Zinkevich et al. 2007, "Regret Minimization in Games with Incomplete
    Information"); in practice much faster.

    Cost: every node once per player per iteration, ``nodes_touched`` grows by
    ``num_nodes * num_players`` per iteration. The simplest and most predictable trainer, and
    the reference the others are compared with.

    Parameters
    ----------
    game : Game or CompiledGame
        The game to solve.
    alternating : bool, optional
        ``True`` (default): players update in order 0..n-1, each seeing the others' freshest
        strategies (OpenSpiel's ``CFRSolver`` convention, so numbers compare one to one).
        ``False``: simultaneous updates, every player's regrets from the same profile.
    fixed : Policy or Mapping, optional
        Infosets whose strategy is held fixed (see :class:`Trainer`).

    Examples
    --------
    >>> import cfrkit
    >>> from cfrkit.games import KuhnPoker
    >>> trainer = cfrkit.VanillaCFR(KuhnPoker()).iterate(1000)
    >>> round(cfrkit.exploitability(trainer.game, trainer.average_policy()), 7)
    0.0009376
    """

    def __init__(
        self,
        game: Game | CompiledGame,
        *,
        alternating: bool = True,
        fixed: Policy | Mapping | None = None,
    ) -> None:
        self.alternating = check_bool("alternating", alternating)
        super().__init__(game, fixed=fixed)

    def _config(self) -> Config:
        return Config(
            alternating=self.alternating, dynamic=False, threshold=0.0,
            regret_pruning=False, sample_chance=False, sample_per_player=False,
        )
