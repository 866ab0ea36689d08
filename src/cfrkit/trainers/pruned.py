"""CFR that skips the parts of the tree that cannot change the updating player's regrets."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from .. import _threads
from .._kernels.drivers import run_pruned
from .._numbers import real_value
from .._text import short_repr
from ..game import Game
from ..policy import Policy
from ..rules import RegretRule
from ..tree import CompiledGame
from .._numbers import check_bool
from .base import Buffers, KernelCall, ThreadsOption, Trainer

__all__ = ["PrunedCFR"]


class PrunedCFR(ThreadsOption, Trainer):
    """CFR that skips subtrees: the same iterates as full passes, fewer nodes visited.

    Three kinds of pruning, all switches of one queued traversal:

    * **Partial (zero-reach) pruning**, always on and exact for every rule: while updating
      player ``i``, a subtree the other players and chance reach with probability 0 adds
      nothing to ``i``'s regrets (they are weighted by ``pi_{-i}``) and is not visited. The
      average strategy is weighted by ``i``'s own reach, which the others' zeros do not change,
      so with ``regret_pruning=False`` and ``threshold=0`` this trainer produces the iterates of
      :class:`CFR` with the same rule. Under a discounting rule the regrets of unvisited
      infosets are discounted lazily (when next visited or read), with the same result.
    * **Regret-based pruning** (Brown and Sandholm 2015, "Regret-Based Pruning in Extensive-Form
      Games"), two-player games with the vanilla rule: an action of ``i`` that regret matching
      gives probability 0 leads to a subtree that is not visited in ``i``'s pass. For its
      regret, the counterfactual value of the skipped subtree is replaced by a static upper
      bound ``U(h a)``, so the stored regret is always an upper bound of the regret the action
      would have had; the action stays pruned exactly as long as that bound is not positive --
      as long as it provably could not have been played -- and when it returns, the bounded
      part is settled against a best response to the others' reach summed over the window.
      CFR's regret bound is kept. The settlement reads that summed reach off the opponent's
      *unweighted* cumulative sequence weights and adds to *plain* regret sums, so it is unsound
      under any other rule (floors, discounts, predictions or weighted averages), and with
      three or more players.
    * **Threshold pruning**, ``threshold > 0``: also skip the subtrees the *other players* reach
      with probability below ``threshold`` -- their reach without chance's factor, so that a
      deep deal (1/120 per history at Leduc's second card) does not hide whole rounds. An
      approximation: skipped subtrees keep the value of their last visit, so regrets are no
      longer exact. Use it for speed when small errors are acceptable.

    Cost: at most a full pass's nodes; ``nodes_touched`` counts every node actually read or
    written. A queued pass costs more per node than a full one, so pruning pays in wall time on
    games where many actions end up with probability zero (larger poker-like games).

    Parameters
    ----------
    game : Game or CompiledGame
        The game to solve.
    rule : RegretRule, optional
        The regret rule (default: vanilla).
    regret_pruning : bool or None, optional
        ``None`` (default): on where it is sound (two players, vanilla rule). ``True``: on,
        ValueError where unsound. ``False``: off.
    threshold : float, optional
        Others' reach (chance excluded) below which subtrees are skipped, in ``[0, 1)``
        (default 0: exact pruning only).
    alternating : bool, optional
        Alternating (default) or simultaneous updates, as in :class:`CFR`.
    fixed : Policy or Mapping, optional
        Infosets whose strategy is held fixed (see :class:`Trainer`).
    threads : int, optional
        Threads :meth:`solve`'s evaluations run on: default all of numba's, as for
        :class:`CFR`. The pruned pass itself runs on one (its queue is serial), whatever this
        says. A runtime choice: :attr:`threads` can change between calls, and checkpoints do
        not keep it.
    """

    def __init__(
        self,
        game: Game | CompiledGame,
        *,
        rule: RegretRule = RegretRule(),
        regret_pruning: bool | None = None,
        threshold: float = 0.0,
        alternating: bool = True,
        fixed: Policy | Mapping | None = None,
        threads: int | None = None,
    ) -> None:
        threads = _threads.check_threads(threads)  # before the game is compiled
        if regret_pruning is not None:
            regret_pruning = check_bool("regret_pruning", regret_pruning)
        number = real_value(threshold)
        if number is None or not 0.0 <= number < 1.0:
            raise ValueError(f"threshold must be a number in [0, 1), got {short_repr(threshold)}")
        self._threshold = number + 0.0  # -0.0 is 0.0: it would show in the repr and files
        self._requested_pruning = regret_pruning
        super().__init__(game, rule=rule, alternating=alternating, fixed=fixed)
        self._threads = threads

    def _thread_count(self, threads: int | None) -> int:
        return 1  # the pass; ``threads`` reaches solve()'s evaluations

    @property
    def regret_pruning(self) -> bool:
        """Whether regret-based pruning runs (fixed at construction)."""
        return self._regret_pruning

    @property
    def regret_pruning_active(self) -> bool:
        """Whether regret-based pruning runs (the same as :attr:`regret_pruning`)."""
        return self._regret_pruning

    @property
    def threshold(self) -> float:
        """The others' reach below which subtrees are skipped (fixed at construction)."""
        return self._threshold

    def _configure(self) -> Buffers:
        self._regret_pruning = _regret_pruning_switch(
            self._requested_pruning, self._rule, self.game.num_players
        )
        return Buffers(
            queued=True, regret_pruning=self._regret_pruning,
            bounds=self._regret_pruning or self._threshold > 0.0,
        )

    def _constructor_arguments(self) -> dict:
        return {"alternating": self._alternating, "rule": self._rule,
                "regret_pruning": self._requested_pruning, "threshold": self._threshold}

    def _persistent_scratch(self) -> tuple[str, ...]:
        # threshold pruning reads the values a skipped subtree had at its last visit
        return ("value",) if self._threshold > 0.0 else ()

    def _kernel(self, schedule: np.ndarray) -> KernelCall:
        return KernelCall(run_pruned, (
            self.game.tree, self._statics, self._state, self._scratch, schedule,
            self._alternating, self._threshold, self._regret_pruning, self._lower,
            self._rule.predictive, self._lazy,
        ))


def _regret_pruning_switch(requested: bool | None, rule: RegretRule, players: int) -> bool:
    """Whether regret-based pruning runs: asked for (or left to ``None``) and sound here."""
    if requested is False:
        return False
    reasons = []
    if not rule.is_vanilla:
        reasons.append(
            "its settlement adds to plain regret sums and reads the opponent's unweighted "
            f"sequence weights, so it needs the vanilla rule, not {rule!r}"
        )
    if players != 2:  # one player: no opponent whose reach to read (it read past the arrays)
        reasons.append(
            "its settlement needs the summed reach of one opponent; this game has "
            f"{players} player{'s' if players > 1 else ''}"
        )
    if reasons and requested:
        raise ValueError("regret_pruning=True is unsound here: " + "; ".join(reasons))
    return not reasons
