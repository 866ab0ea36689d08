"""The named CFR variants: full-pass CFR with a fixed regret rule each.

Each class is :class:`~cfrkit.CFR` with one preset of :class:`~cfrkit.RegretRule`; the same
rules run under the other traversals as ``PrunedCFR(game, rule=...)`` or
``ChanceSampledCFR(game, rule=...)``. See :mod:`cfrkit.rules` for the formulas.
"""

from __future__ import annotations

from collections.abc import Mapping

from ..game import Game
from ..policy import Policy
from ..rules import RegretRule
from ..tree import CompiledGame
from .full import CFR

__all__ = ["CFRPlus", "DCFRPlus", "DiscountedCFR", "LinearCFR", "PDCFRPlus", "PredictiveCFRPlus"]


class CFRPlus(CFR):
    """CFR+ (Tammelin 2014): regret matching+, alternating updates, linear averaging.

    Cumulative regrets are floored at zero after every update, ``R <- max(R + r, 0)``, and the
    iterate of iteration ``t`` weighs ``t`` in the average (iteration 1 weighs 1; the strategy
    averaged is the one played, before its update). Iterate for iterate the same as OpenSpiel's
    ``pyspiel.CFRPlusSolver``.

    O. Tammelin, "Solving Large Imperfect Information Games Using CFR+", arXiv:1407.5042, 2014.

    Parameters
    ----------
    game : Game or CompiledGame
        The game to solve.
    alternating : bool, optional
        Alternating (default, as CFR+ is defined) or simultaneous updates.
    fixed : Policy or Mapping, optional
        Infosets whose strategy is held fixed (see :class:`Trainer`).
    threads : int, optional
        Threads for the passes (default: all cores; see :class:`CFR`).
    """

    def __init__(
        self,
        game: Game | CompiledGame,
        *,
        alternating: bool = True,
        fixed: Policy | Mapping | None = None,
        threads: int | None = None,
    ) -> None:
        super().__init__(game, rule=RegretRule.cfr_plus(), alternating=alternating, fixed=fixed,
                         threads=threads)

    _rule_in_repr = False

    def _constructor_arguments(self) -> dict:
        return {"alternating": self._alternating}


class LinearCFR(CFR):
    """Linear CFR (Brown & Sandholm 2019): iteration ``t`` weighs ``t`` in regrets and average.

    Run as Discounted CFR(1, 1, 1): the cumulative regret is multiplied by ``t / (t + 1)``
    after iteration ``t``, which leaves ``sum_t t r^t / (T + 1)``, the linearly weighted sum up
    to a scale regret matching ignores (as OpenSpiel's ``LCFRSolver``).

    N. Brown, T. Sandholm, "Solving Imperfect-Information Games via Discounted Regret
    Minimization", AAAI 2019.

    Parameters
    ----------
    game : Game or CompiledGame
        The game to solve.
    alternating : bool, optional
        Alternating (default) or simultaneous updates.
    fixed : Policy or Mapping, optional
        Infosets whose strategy is held fixed (see :class:`Trainer`).
    threads : int, optional
        Threads for the passes (default: all cores; see :class:`CFR`).
    """

    def __init__(
        self,
        game: Game | CompiledGame,
        *,
        alternating: bool = True,
        fixed: Policy | Mapping | None = None,
        threads: int | None = None,
    ) -> None:
        super().__init__(game, rule=RegretRule.linear(), alternating=alternating, fixed=fixed,
                         threads=threads)

    _rule_in_repr = False

    def _constructor_arguments(self) -> dict:
        return {"alternating": self._alternating}


class DiscountedCFR(CFR):
    """Discounted CFR(alpha, beta, gamma) (Brown & Sandholm 2019).

    On iteration ``t``, add the iteration's regrets, then multiply positive cumulative regrets
    by ``t^alpha / (t^alpha + 1)`` and the others by ``t^beta / (t^beta + 1)``; the iterate of
    iteration ``t`` weighs ``t^gamma`` in the average. The defaults (1.5, 0, 2) are the
    paper's recommendation (and OpenSpiel's ``DCFRSolver``).

    Parameters
    ----------
    game : Game or CompiledGame
        The game to solve.
    alpha, beta : float, optional
        Discount exponents of positive and of the other cumulative regrets.
    gamma : float, optional
        Average-weight exponent (>= 0).
    alternating : bool, optional
        Alternating (default) or simultaneous updates.
    fixed : Policy or Mapping, optional
        Infosets whose strategy is held fixed (see :class:`Trainer`).
    threads : int, optional
        Threads for the passes (default: all cores; see :class:`CFR`).
    """

    def __init__(
        self,
        game: Game | CompiledGame,
        *,
        alpha: float = 1.5,
        beta: float = 0.0,
        gamma: float = 2.0,
        alternating: bool = True,
        fixed: Policy | Mapping | None = None,
        threads: int | None = None,
    ) -> None:
        rule = RegretRule.discounted(alpha=alpha, beta=beta, gamma=gamma)
        super().__init__(game, rule=rule, alternating=alternating, fixed=fixed,
                         threads=threads)

    def _constructor_arguments(self) -> dict:
        rule = self._rule
        return {"alternating": self._alternating, "alpha": rule.alpha, "beta": rule.beta,
                "gamma": rule.gamma}


class PredictiveCFRPlus(CFR):
    """Predictive CFR+ (Farina, Kroer & Sandholm 2021): PCFR+.

    Predictive regret matching+: the cumulative regret is floored at zero as in CFR+, and the
    strategy is regret matching on the cumulative regret *plus the prediction* -- the last
    instantaneous regret, ``sigma^{t+1} = RM([R^t + r^t]^+)``. Alternating updates and
    quadratic averaging (iterate ``t`` weighs ``t^2``).

    G. Farina, C. Kroer, T. Sandholm, "Faster Game Solving via Predictive Blackwell
    Approachability: Connecting Regret Matching and Mirror Descent", AAAI 2021.

    Parameters
    ----------
    game : Game or CompiledGame
        The game to solve.
    alternating : bool, optional
        Alternating (default) or simultaneous updates.
    fixed : Policy or Mapping, optional
        Infosets whose strategy is held fixed (see :class:`Trainer`).
    threads : int, optional
        Threads for the passes (default: all cores; see :class:`CFR`).
    """

    def __init__(
        self,
        game: Game | CompiledGame,
        *,
        alternating: bool = True,
        fixed: Policy | Mapping | None = None,
        threads: int | None = None,
    ) -> None:
        rule = RegretRule.predictive_plus()
        super().__init__(game, rule=rule, alternating=alternating, fixed=fixed,
                         threads=threads)

    _rule_in_repr = False

    def _constructor_arguments(self) -> dict:
        return {"alternating": self._alternating}


class DCFRPlus(CFR):
    """DCFR+ (Xu et al. 2024): regret matching+ with discounted positive regrets.

    ``R^t = max(R^{t-1} + r^t, 0) * t^alpha / (t^alpha + 1)``; iterate ``t`` weighs
    ``t^gamma`` in the average. Defaults (1.5, 4) are the paper's.

    H. Xu, K. Li, B. Liu, H. Fu, Q. Fu, J. Xing, J. Cheng, "Minimizing Weighted Counterfactual
    Regret with Optimistic Online Mirror Descent", IJCAI 2024.

    Parameters
    ----------
    game : Game or CompiledGame
        The game to solve.
    alpha : float, optional
        Discount exponent of the (non-negative) cumulative regrets.
    gamma : float, optional
        Average-weight exponent (>= 0).
    alternating : bool, optional
        Alternating (default) or simultaneous updates.
    fixed : Policy or Mapping, optional
        Infosets whose strategy is held fixed (see :class:`Trainer`).
    threads : int, optional
        Threads for the passes (default: all cores; see :class:`CFR`).
    """

    def __init__(
        self,
        game: Game | CompiledGame,
        *,
        alpha: float = 1.5,
        gamma: float = 4.0,
        alternating: bool = True,
        fixed: Policy | Mapping | None = None,
        threads: int | None = None,
    ) -> None:
        rule = RegretRule.dcfr_plus(alpha=alpha, gamma=gamma)
        super().__init__(game, rule=rule, alternating=alternating, fixed=fixed,
                         threads=threads)

    def _constructor_arguments(self) -> dict:
        return {"alternating": self._alternating, "alpha": self._rule.alpha,
                "gamma": self._rule.gamma}


class PDCFRPlus(CFR):
    """PDCFR+ (Xu et al. 2024): predictive DCFR+.

    DCFR+'s discounted, floored regrets, and regret matching on them plus the prediction (the
    last instantaneous regret): ``sigma^{t+1} = RM([R^t + r^t]^+)`` with
    ``R^t = max(R^{t-1} + r^t, 0) * t^alpha / (t^alpha + 1)``; iterate ``t`` weighs ``t^gamma``.
    Defaults (2.3, 5) are the paper's.

    H. Xu, K. Li, B. Liu, H. Fu, Q. Fu, J. Xing, J. Cheng, "Minimizing Weighted Counterfactual
    Regret with Optimistic Online Mirror Descent", IJCAI 2024.

    Parameters
    ----------
    game : Game or CompiledGame
        The game to solve.
    alpha : float, optional
        Discount exponent of the (non-negative) cumulative regrets.
    gamma : float, optional
        Average-weight exponent (>= 0).
    alternating : bool, optional
        Alternating (default) or simultaneous updates.
    fixed : Policy or Mapping, optional
        Infosets whose strategy is held fixed (see :class:`Trainer`).
    threads : int, optional
        Threads for the passes (default: all cores; see :class:`CFR`).
    """

    def __init__(
        self,
        game: Game | CompiledGame,
        *,
        alpha: float = 2.3,
        gamma: float = 5.0,
        alternating: bool = True,
        fixed: Policy | Mapping | None = None,
        threads: int | None = None,
    ) -> None:
        rule = RegretRule.pdcfr_plus(alpha=alpha, gamma=gamma)
        super().__init__(game, rule=rule, alternating=alternating, fixed=fixed,
                         threads=threads)

    def _constructor_arguments(self) -> dict:
        return {"alternating": self._alternating, "alpha": self._rule.alpha,
                "gamma": self._rule.gamma}
