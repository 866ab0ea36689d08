"""Regret rules: what happens at each infoset after a pass, as one parameter set.

A CFR iteration has two independent parts. The *traversal* (full, pruned or sampled passes)
computes each infoset's instantaneous counterfactual regret ``r^t(I, a)``; the *regret rule*
folds it into the cumulative regret, chooses what regret matching sees, and weighs the iterate
in the average strategy. With ``d_+(t) = t^alpha / (t^alpha + 1)`` and
``d_-(t) = t^beta / (t^beta + 1)`` (1 when the exponent is ``None``), on iteration ``t``::

    x       = R^{t-1}(I, a) + r^t(I, a)
    x       = max(x, 0)                                  if floor   (regret matching+)
    R^t     = x * (d_+(t) if x > 0 else d_-(t))                     (discounting)
    sigma^{t+1}(I) = RM(R^t(I) + r^t(I))   if predictive, else RM(R^t(I))
    S(I, a) += t^gamma * pi_i^t(I) * sigma^t(I, a)                  (average, sigma^t as played)

where ``RM(y)`` is regret matching: ``max(y_a, 0) / sum_b max(y_b, 0)``, uniform when no
``y_a`` is positive. Every named variant is a value of these five parameters:

=====================  =====  =====  =====  =====  ==========  ==================================
preset                 floor  alpha  beta   gamma  predictive  reference
=====================  =====  =====  =====  =====  ==========  ==================================
vanilla CFR            no     --     --     0      no          Zinkevich et al. 2007
CFR+                   yes    --     --     1      no          Tammelin 2014
Linear CFR             no     1      1      1      no          Brown & Sandholm 2019
Discounted CFR         no     1.5    0      2      no          Brown & Sandholm 2019
Predictive CFR+        yes    --     --     2      yes         Farina, Kroer & Sandholm 2021
DCFR+                  yes    1.5    --     4      no          Xu et al. 2024
PDCFR+                 yes    2.3    --     5      yes         Xu et al. 2024
=====================  =====  =====  =====  =====  ==========  ==================================

Linear CFR is Discounted CFR(1, 1, 1): multiplying the sum by ``t / (t + 1)`` every iteration
leaves ``sum_t t r^t / (T + 1)``, the linearly weighted sum up to a scale regret matching
ignores (OpenSpiel's ``LCFRSolver`` is built the same way). In DCFR+ and PDCFR+ the discount is
applied after the floor, so that PDCFR+'s prediction is added to the discounted regret
(``[R^{t-1} d(t) + r^t]^+`` in the papers' indexing is our ``R^{t-1}`` before its discount).

A rule with different schedules -- a time-varying exponent, say -- is a subclass overriding
:meth:`RegretRule.schedule`, which returns the three per-iteration factors as arrays; the
kernels never see the formulas, only those factors.

References
----------
- M. Zinkevich, M. Johanson, M. Bowling, C. Piccione. Regret Minimization in Games with
  Incomplete Information. NIPS 2007.
- O. Tammelin. Solving Large Imperfect Information Games Using CFR+. arXiv:1407.5042, 2014.
- N. Brown, T. Sandholm. Solving Imperfect-Information Games via Discounted Regret
  Minimization. AAAI 2019 (arXiv:1809.04040).
- G. Farina, C. Kroer, T. Sandholm. Faster Game Solving via Predictive Blackwell Approachability:
  Connecting Regret Matching and Mirror Descent. AAAI 2021 (arXiv:2007.14358).
- H. Xu, K. Li, B. Liu, H. Fu, Q. Fu, J. Xing, J. Cheng. Minimizing Weighted Counterfactual
  Regret with Optimistic Online Mirror Descent. IJCAI 2024 (arXiv:2404.13891).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

__all__ = ["RegretRule"]


def _exponent(name: str, value: object, *, optional: bool, minimum: float | None) -> float | None:
    """``value`` as a float, or a ValueError naming the argument."""
    if value is None and optional:
        return None
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.integer, np.floating)):
        kind = "a real number or None" if optional else "a real number"
        raise ValueError(f"{name} must be {kind}, got {value!r}")
    number = float(value)
    if not math.isfinite(number):
        raise ValueError(f"{name} must be finite, got {value!r}")
    if minimum is not None and number < minimum:
        raise ValueError(f"{name} must be >= {minimum:g}, got {value!r}")
    return number


def _discount(t: np.ndarray, exponent: float | None) -> np.ndarray:
    """``t^e / (t^e + 1)``, written as OpenSpiel writes it; 1 where ``t^e`` overflows."""
    if exponent is None:
        return np.ones_like(t)
    with np.errstate(over="ignore", invalid="ignore"):
        power = t**exponent
        return np.where(np.isinf(power), 1.0, power / (power + 1.0))


@dataclass(frozen=True)
class RegretRule:
    """How instantaneous regrets enter the cumulative regrets, and how iterates are averaged.

    The update on iteration ``t`` (docs/algorithm.md, *The algorithm*, gives the full formulas):
    add ``r^t`` to the cumulative regret, floor it at zero if ``floor``, scale positive sums by
    ``t^alpha / (t^alpha + 1)`` and the others by ``t^beta / (t^beta + 1)``, regret-match on the
    sum (plus ``r^t`` if ``predictive``), and give the iterate weight ``t^gamma`` in the average.

    Parameters
    ----------
    floor : bool
        Reset negative cumulative regrets to zero after every update (regret matching+,
        Tammelin 2014).
    alpha : float or None
        Discount exponent of positive cumulative regrets; ``None`` (default): no discount.
    beta : float or None
        Discount exponent of the other cumulative regrets; ``None``: no discount. Meaningless
        with ``floor`` (no negative regret survives), so it must stay ``None`` there.
    gamma : float
        The iterate of iteration ``t`` weighs ``t^gamma`` in the average strategy: 0 uniform
        (vanilla), 1 linear (CFR+), 2 quadratic (DCFR, PCFR+). Must be >= 0.
    predictive : bool
        Regret matching on the cumulative regret plus the prediction ``r^t`` (the last
        instantaneous regret), as predictive regret matching+ does (Farina et al. 2021).

    Examples
    --------
    >>> import cfrkit
    >>> cfrkit.RegretRule.cfr_plus()
    RegretRule(floor=True, alpha=None, beta=None, gamma=1.0, predictive=False)
    >>> dcfr_plus = cfrkit.RegretRule(floor=True, alpha=1.5, gamma=4.0)   # Xu et al. 2024
    """

    floor: bool = False
    alpha: float | None = None
    beta: float | None = None
    gamma: float = 0.0
    predictive: bool = False

    def __post_init__(self) -> None:
        for name in ("floor", "predictive"):
            value = getattr(self, name)
            if not isinstance(value, (bool, np.bool_)):
                raise ValueError(f"{name} must be a bool, got {value!r}")
            object.__setattr__(self, name, bool(value))
        object.__setattr__(self, "alpha", _exponent("alpha", self.alpha, optional=True, minimum=None))
        object.__setattr__(self, "beta", _exponent("beta", self.beta, optional=True, minimum=None))
        object.__setattr__(self, "gamma", _exponent("gamma", self.gamma, optional=False, minimum=0.0))
        if self.floor and self.beta is not None:
            raise ValueError(
                "beta has no effect with floor=True: negative cumulative regrets are reset to "
                "zero, so there is nothing left to discount (leave beta=None)"
            )

    # -- presets ------------------------------------------------------------------------------
    @classmethod
    def vanilla(cls) -> "RegretRule":
        """Plain sums and a uniform average (Zinkevich et al. 2007)."""
        return cls()

    @classmethod
    def cfr_plus(cls) -> "RegretRule":
        """Regret matching+ and linear averaging: CFR+ (Tammelin 2014)."""
        return cls(floor=True, gamma=1.0)

    @classmethod
    def linear(cls) -> "RegretRule":
        """Linear CFR: regrets and average weighted by ``t`` (Brown & Sandholm 2019)."""
        return cls(alpha=1.0, beta=1.0, gamma=1.0)

    @classmethod
    def discounted(cls, alpha: float = 1.5, beta: float = 0.0, gamma: float = 2.0) -> "RegretRule":
        """Discounted CFR(alpha, beta, gamma); the defaults are the paper's (Brown & Sandholm 2019)."""
        return cls(alpha=alpha, beta=beta, gamma=gamma)

    @classmethod
    def predictive_plus(cls) -> "RegretRule":
        """Predictive CFR+: predictive regret matching+, quadratic averaging (Farina et al. 2021)."""
        return cls(floor=True, gamma=2.0, predictive=True)

    @classmethod
    def dcfr_plus(cls, alpha: float = 1.5, gamma: float = 4.0) -> "RegretRule":
        """DCFR+: regret matching+ with discounted positive regrets (Xu et al. 2024)."""
        return cls(floor=True, alpha=alpha, gamma=gamma)

    @classmethod
    def pdcfr_plus(cls, alpha: float = 2.3, gamma: float = 5.0) -> "RegretRule":
        """PDCFR+: predictive DCFR+ (Xu et al. 2024)."""
        return cls(floor=True, alpha=alpha, gamma=gamma, predictive=True)

    # -- what the kernels get -----------------------------------------------------------------
    @property
    def discounts(self) -> bool:
        """Whether cumulative regrets are ever scaled (kernels then track the scale lazily)."""
        return self.alpha is not None or self.beta is not None

    @property
    def is_vanilla(self) -> bool:
        """Plain sums, no prediction, uniform average: what regret-based pruning needs."""
        return not (self.floor or self.discounts or self.predictive) and self.gamma == 0.0

    def schedule(self, iterations: np.ndarray) -> np.ndarray:
        """The per-iteration factors the kernels apply, one row per iteration.

        Parameters
        ----------
        iterations : numpy.ndarray
            float64 iteration numbers ``t`` (1-based).

        Returns
        -------
        numpy.ndarray
            float64 ``(len(iterations), 3)``: ``d_+(t)``, ``d_-(t)`` (each in ``(0, 1]``) and
            the average weight ``t^gamma`` (finite, >= 0). Override this in a subclass to use
            other schedules; the trainers check the ranges.
        """
        t = np.asarray(iterations, dtype=np.float64)
        factors = np.empty((t.shape[0], 3))
        factors[:, 0] = _discount(t, self.alpha)
        factors[:, 1] = _discount(t, self.beta)
        factors[:, 2] = 1.0 if self.gamma == 0.0 else t**self.gamma
        return factors


def kernel_schedule(rule: RegretRule, first: int, count: int) -> np.ndarray:
    """The factors of iterations ``first .. first + count - 1`` as the kernels read them:
    float64 ``(3, count)``, rows ``d_+``, ``d_-`` and the average weight.

    The presets' rows are filled directly (a few nanoseconds per iteration; tiny games run an
    iteration in ~100 ns). A subclass's :meth:`RegretRule.schedule` is called and checked: a
    discount outside ``(0, 1]`` or a negative or non-finite weight would silently corrupt the
    regrets, so it raises a ValueError naming the rule instead.
    """
    t = np.arange(first, first + count, dtype=np.float64)
    if type(rule).schedule is RegretRule.schedule:
        factors = np.empty((3, count))
        factors[0] = _discount(t, rule.alpha) if rule.alpha is not None else 1.0
        factors[1] = _discount(t, rule.beta) if rule.beta is not None else 1.0
        factors[2] = t**rule.gamma if rule.gamma != 0.0 else 1.0
        return factors
    given = np.asarray(rule.schedule(t), dtype=np.float64)
    name = type(rule).__name__
    if given.shape != (count, 3):
        raise ValueError(f"{name}.schedule() must return shape ({count}, 3), got {given.shape}")
    factors = np.ascontiguousarray(given.T)
    discounts, weights = factors[:2], factors[2]
    # reductions, not element-wise masks: NaN fails every comparison below
    if not (discounts.min() > 0.0 and discounts.max() <= 1.0):
        raise ValueError(
            f"{name}.schedule(): discounts must lie in (0, 1] (use floor=True to reset "
            "negative regrets)"
        )
    if not (weights.min() >= 0.0 and math.isfinite(weights.sum())):
        raise ValueError(f"{name}.schedule(): average weights must be finite and >= 0")
    return factors
