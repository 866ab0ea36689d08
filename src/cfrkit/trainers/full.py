"""Full-pass CFR: every iteration walks the whole tree once per player, under any regret rule."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from .. import _threads
from .._kernels.drivers import run_full
from .._kernels.parallel import run_full_parallel
from ..game import Game
from ..policy import Policy
from ..rules import RegretRule
from ..statics import parallel_layout
from ..tree import CompiledGame
from .base import Buffers, KernelCall, ThreadsOption, Trainer

__all__ = ["CFR", "VanillaCFR"]


class CFR(ThreadsOption, Trainer):
    """Counterfactual regret minimisation with full tree walks and any regret rule.

    Each iteration computes, for every player ``i`` and infoset ``I`` of ``i``, the
    instantaneous counterfactual regret ``r(I, a) = sum_{h in I} pi_{-i}(h) (v_i(h a) - v_i(h))``
    under the current profile, folds it into the cumulative regret with ``rule``, moves the
    current strategy by regret matching, and adds the played strategy, weighted by the player's
    own reach and the rule's iterate weight, to the average (Zinkevich et al. 2007). The named
    trainers (:class:`VanillaCFR`, :class:`CFRPlus`, :class:`DiscountedCFR`, ...) are this class
    with their rule fixed; use it directly for any other rule.

    Cost: every node once per player per iteration; ``nodes_touched`` grows by
    ``num_nodes * num_players`` per iteration.

    Parameters
    ----------
    game : Game or CompiledGame
        The game to solve.
    rule : RegretRule, optional
        The regret rule (default: vanilla, ``RegretRule()``).
    alternating : bool, optional
        ``True`` (default): players update in order 0..n-1, each seeing the others' freshest
        strategies (OpenSpiel's convention, so numbers compare one to one). ``False``:
        simultaneous updates, every player's regrets from the same profile.
    fixed : Policy or Mapping, optional
        Infosets whose strategy is held fixed (see :class:`Trainer`).
    threads : int, optional
        Threads the passes (and :meth:`solve`'s evaluations) run on: default all of numba's
        (``numba.config.NUMBA_NUM_THREADS``, the machine's cores unless that environment
        variable says fewer). The arrays are the same, bit for bit, on any count: each
        parallel loop computes every number with the serial kernel's operations in its order.
        Games under 50,000 nodes always run on one thread (the serial kernel: smaller passes
        gain nothing from more). A runtime choice: :attr:`threads` can change between calls,
        and checkpoints do not keep it.

    Examples
    --------
    >>> import cfrkit
    >>> from cfrkit.games import KuhnPoker
    >>> rule = cfrkit.RegretRule(floor=True, alpha=2.3, gamma=5.0, predictive=True)  # PDCFR+
    >>> trainer = cfrkit.CFR(KuhnPoker(), rule=rule).iterate(500)
    >>> cfrkit.exploitability(trainer.game, trainer.average_policy()) < 1e-10
    True
    """

    def __init__(
        self,
        game: Game | CompiledGame,
        *,
        rule: RegretRule = RegretRule(),
        alternating: bool = True,
        fixed: Policy | Mapping | None = None,
        threads: int | None = None,
    ) -> None:
        threads = _threads.check_threads(threads)  # before the game is compiled
        super().__init__(game, rule=rule, alternating=alternating, fixed=fixed)
        self._threads = threads

    def _thread_count(self, threads: int | None) -> int:
        return _threads.parallel_threads(self.game.num_nodes, threads)

    def _configure(self) -> Buffers:
        return Buffers()

    def _constructor_arguments(self) -> dict:
        return {"alternating": self._alternating, "rule": self._rule}

    def _kernel(self, schedule: np.ndarray) -> KernelCall:
        count = self._thread_count(self._threads)
        if count > 1:
            return KernelCall(run_full_parallel, (
                self.game.tree, parallel_layout(self.game), _threads.workers(count),
                self._state, self._scratch, schedule, self._alternating, self._lower,
                self._rule.predictive,
            ), count)
        return KernelCall(run_full, (
            self.game.tree, self._state, self._scratch, schedule, self._alternating,
            self._lower, self._rule.predictive,
        ))

    _rule_in_repr = True  # False in the presets whose name says the whole rule

    def __repr__(self) -> str:
        rule = f", rule={self._rule!r}" if self._rule_in_repr else ""
        return f"{type(self).__name__}({self.game.game!r}{rule}, iteration={self._iteration})"


class VanillaCFR(CFR):
    """CFR with plain regret sums and a uniform average (Zinkevich et al. 2007).

    ``R(I, a) += r(I, a)``, regret matching on ``R``, every iterate weighted by the player's
    own reach alone. The average strategy's NashConv falls as O(1/sqrt(T)) in theory, in
    practice faster; the reference the other trainers are compared with, and exactly
    OpenSpiel's ``CFRSolver`` iterate for iterate.

    Parameters
    ----------
    game : Game or CompiledGame
        The game to solve.
    alternating : bool, optional
        Alternating (default) or simultaneous updates (see :class:`CFR`).
    fixed : Policy or Mapping, optional
        Infosets whose strategy is held fixed (see :class:`Trainer`).
    threads : int, optional
        Threads for the passes (default: all cores; see :class:`CFR`).

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
        threads: int | None = None,
    ) -> None:
        super().__init__(game, rule=RegretRule.vanilla(), alternating=alternating, fixed=fixed,
                         threads=threads)

    _rule_in_repr = False

    def _constructor_arguments(self) -> dict:
        return {"alternating": self._alternating}
