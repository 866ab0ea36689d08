"""CFR that skips the parts of the tree that cannot change the updating player's regrets."""

from __future__ import annotations

import math
from collections.abc import Mapping

from .._kernels.traverse import Config
from ..game import Game
from ..policy import Policy
from ..tree import CompiledGame
from .base import Trainer, check_bool

__all__ = ["PrunedCFR"]


class PrunedCFR(Trainer):
    """Vanilla CFR with pruning: the same iterates, fewer nodes visited.

    Three kinds of pruning, all switches of the one CFR traversal:

    * **Partial (zero-reach) pruning**, always on and exact: while updating player ``i``, a
      subtree the other players and chance reach with probability 0 adds nothing to ``i``'s
      regrets (they are weighted by ``pi_{-i}``) and is not visited. The average strategy is
      weighted by ``i``'s own reach, which the others' zeros do not change, so with
      ``regret_pruning=False`` and ``threshold=0`` this trainer produces the same regrets and
      average policy as :class:`VanillaCFR`, iteration for iteration.
    * **Regret-based pruning** (Brown and Sandholm 2015, "Regret-Based Pruning in Extensive-Form
      Games"), ``regret_pruning=True``: an action of ``i`` that regret matching gives
      probability 0 (its regret is not positive while another's is) leads to a subtree that is
      not visited in ``i``'s pass. For its regret, the counterfactual value of the skipped
      subtree is replaced by a static upper bound ``U(h a)`` (the best ``i`` could expect below,
      maxing over every decision and averaging over chance), so the stored regret is always an
      upper bound of the regret the action would have had. The action stays pruned exactly as
      long as that bound is not positive -- as long as it provably could not have been played
      -- and when it returns its subtree resumes from its stored regrets. Because the bound
      replaces the subtree's values only on iterations where the action was not played, the
      regret-matching guarantee (and so CFR's O(1/sqrt(T)) bound) is kept; the iterates
      differ from vanilla CFR's only by that conservative bookkeeping. Since the others'
      reach behind the pruned action is zero, their passes skip it too.
    * **Threshold pruning**, ``threshold > 0``: additionally skip subtrees whose reach by the
      others is below ``threshold`` (the approximate pruning of earlier CFR code). This is an
      approximation: skipped subtrees keep the value of their last visit, so regrets are no
      longer exact. Use it for speed when small errors are acceptable.

    Cost: at most vanilla's; ``nodes_touched`` counts every node actually read or written.
    Prefer it over :class:`VanillaCFR` on games with many dominated actions (poker-like games).

    Parameters
    ----------
    game : Game or CompiledGame
        The game to solve.
    regret_pruning : bool, optional
        Turn regret-based pruning on (default) or off.
    threshold : float, optional
        Reach below which subtrees are skipped (default 0: exact pruning only).
    alternating : bool, optional
        Alternating (default) or simultaneous updates, as in :class:`VanillaCFR`.
    fixed : Policy or Mapping, optional
        Infosets whose strategy is held fixed (see :class:`Trainer`).
    """

    def __init__(
        self,
        game: Game | CompiledGame,
        *,
        regret_pruning: bool = True,
        threshold: float = 0.0,
        alternating: bool = True,
        fixed: Policy | Mapping | None = None,
    ) -> None:
        self.regret_pruning = check_bool("regret_pruning", regret_pruning)
        self.alternating = check_bool("alternating", alternating)
        if isinstance(threshold, bool) or not isinstance(threshold, (int, float)):
            raise ValueError(f"threshold must be a number in [0, 1), got {threshold!r}")
        if not (math.isfinite(threshold) and 0.0 <= threshold < 1.0):
            raise ValueError(f"threshold must be in [0, 1), got {threshold!r}")
        self.threshold = float(threshold)
        super().__init__(game, fixed=fixed)

    @property
    def regret_pruning_active(self) -> bool:
        """Whether regret-based pruning runs: asked for, and the game has two players."""
        return self.regret_pruning and self.game.num_players == 2

    def _config(self) -> Config:
        return Config(
            alternating=self.alternating, dynamic=True, threshold=self.threshold,
            regret_pruning=self.regret_pruning_active, sample_chance=False,
            sample_per_player=False,
        )
