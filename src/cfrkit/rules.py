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
(the paper's ``R^t = [R^{t-1} d(t-1) + r^t]^+`` is our ``R^t`` before its discount ``d(t)``).

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

from ._numbers import check_bool, real_value
from ._text import counted, short_repr
from .limits import MAX_ITERATIONS

__all__ = ["RegretRule"]

# The average weights of a run add up in the strategy sums (times an own reach <= 1 and, with
# chance sampling, an infoset's visit count, < 2^63): keeping sum_t w_t below 2^960 leaves that
# factor and more below float64's overflow at 2^1024.
_WEIGHT_SUM_LOG2 = 960
# A custom schedule's weights, each at most 2^960 / MAX_ITERATIONS: no run can overflow the sum.
_MAX_CUSTOM_WEIGHT = 2.0**907
# The smallest discount: lazily discounting trainers keep the running products of discounts as
# frexp pairs (mantissa in [0.5, 1), int64 exponent), which a product of 0 would turn into 0/0,
# and which a discount below 2^-1022 could round to 0. 2^53 iterations of >= 2^-1022 also keep
# the int64 exponent above -2^63.
_MIN_DISCOUNT = 2.0**-1022
_MIN_DISCOUNT_LOG2 = -1021  # the presets' bound on t^alpha (alpha < 0), a margin below that


def _exponent(name: str, value: object, *, optional: bool, minimum: float | None) -> float | None:
    """``value`` as a float, or a ValueError naming the argument."""
    if value is None and optional:
        return None
    number = real_value(value)
    if number is None:
        kind = "a real number or None" if optional else "a real number"
        raise ValueError(f"{name} must be {kind}, got {short_repr(value)}")
    if not math.isfinite(number):
        raise ValueError(f"{name} must be finite, got {short_repr(value)}")
    if minimum is not None and number < minimum:
        raise ValueError(f"{name} must be >= {minimum:g}, got {short_repr(value)}")
    return number + 0.0  # -0.0 is 0.0: it would show in the rule's repr and files


def _discount(t: np.ndarray, exponent: float | None) -> np.ndarray:
    """``t^e / (t^e + 1)``, written as OpenSpiel writes it; 1 where ``t^e`` overflows.

    Never NaN: ``t^e`` is in ``[0, inf]``, and inf (where ``1 / (1 + t^-e)`` is 1 in float64
    too) is replaced. The equivalent ``1 / (1 + t^-e)`` is not used because it differs from
    this form by an ulp on about half the iterations, and runs stay bit-identical this way.
    A negative ``e`` makes ``t^e`` underflow to 0 for large ``t``; :func:`iteration_limit`
    stops runs before that.
    """
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
        Any finite value; below -19, runs are capped (see *Limits*).
    beta : float or None
        Discount exponent of the other cumulative regrets; ``None``: no discount. Meaningless
        with ``floor`` (no negative regret survives), so it must stay ``None`` there. Any
        finite value; below -19, runs are capped (see *Limits*).
    gamma : float
        The iterate of iteration ``t`` weighs ``t^gamma`` in the average strategy: 0 uniform
        (vanilla), 1 linear (CFR+), 2 quadratic (DCFR, PCFR+). Must be >= 0; above 17, runs
        are capped (see *Limits*).
    predictive : bool
        Regret matching on the cumulative regret plus the prediction ``r^t`` (the last
        instantaneous regret), as predictive regret matching+ does (Farina et al. 2021).

    Notes
    -----
    *Limits.* A trainer runs at most :data:`cfrkit.limits.MAX_ITERATIONS` (2^53) iterations
    in all, and fewer where the rule's numbers would leave float64 before that;
    :meth:`Trainer.iterate <cfrkit.trainers.Trainer.iterate>` refuses, with a ValueError
    naming the exponent, a run that would go past the cap, before running anything:

    - ``gamma``: the strategy sums add up ``sum_t t^gamma <= T^(gamma + 1)``, kept below
      2^960, so ``T <= 2^(960 / (gamma + 1))``; no cap up to ``gamma = 17`` (the published
      rules use at most 5), about 1.1e7 iterations at ``gamma = 40``.
    - ``alpha``, ``beta`` < 0: the discount ``t^alpha / (t^alpha + 1)`` must not underflow to
      0 (it would erase the regrets, and the pruned and sampled trainers cannot track it), so
      ``T <= 2^(1021 / |alpha|)``; no cap down to -19. Positive exponents of any size are
      safe: the discount tends to 1.

    A subclass overriding :meth:`schedule` is checked per block instead: discounts in
    ``[2^-1022, 1]``, weights in ``[0, 2^907]`` (2^53 of them cannot overflow a sum), and
    discounts below 1 only if ``alpha`` or ``beta`` is set (any value): that is what tells
    the pruned and sampled trainers to apply discounts to the infosets they skip.

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
            object.__setattr__(self, name, check_bool(name, getattr(self, name)))
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
    def vanilla(cls) -> RegretRule:
        """Plain sums and a uniform average (Zinkevich et al. 2007)."""
        return cls()

    @classmethod
    def cfr_plus(cls) -> RegretRule:
        """Regret matching+ and linear averaging: CFR+ (Tammelin 2014)."""
        return cls(floor=True, gamma=1.0)

    @classmethod
    def linear(cls) -> RegretRule:
        """Linear CFR: regrets and average weighted by ``t`` (Brown & Sandholm 2019)."""
        return cls(alpha=1.0, beta=1.0, gamma=1.0)

    @classmethod
    def discounted(cls, alpha: float = 1.5, beta: float = 0.0, gamma: float = 2.0) -> RegretRule:
        """Discounted CFR(alpha, beta, gamma); the defaults are the paper's (Brown & Sandholm 2019).

        Parameters
        ----------
        alpha : float, optional
            Positive cumulative regrets are scaled by ``t^alpha / (t^alpha + 1)`` each
            iteration (default 1.5).
        beta : float, optional
            Negative cumulative regrets are scaled by ``t^beta / (t^beta + 1)`` (default 0:
            halved).
        gamma : float, optional
            Iterate ``t`` weighs ``t^gamma`` in the average strategy (default 2).
        """
        return cls(alpha=alpha, beta=beta, gamma=gamma)

    @classmethod
    def predictive_plus(cls) -> RegretRule:
        """Predictive CFR+: predictive regret matching+, quadratic averaging (Farina et al. 2021)."""
        return cls(floor=True, gamma=2.0, predictive=True)

    @classmethod
    def dcfr_plus(cls, alpha: float = 1.5, gamma: float = 4.0) -> RegretRule:
        """DCFR+: regret matching+ with discounted positive regrets (Xu et al. 2024).

        Parameters
        ----------
        alpha : float, optional
            Positive cumulative regrets are scaled by ``t^alpha / (t^alpha + 1)`` each
            iteration (default 1.5).
        gamma : float, optional
            Iterate ``t`` weighs ``t^gamma`` in the average strategy (default 4).
        """
        return cls(floor=True, alpha=alpha, gamma=gamma)

    @classmethod
    def pdcfr_plus(cls, alpha: float = 2.3, gamma: float = 5.0) -> RegretRule:
        """PDCFR+: predictive DCFR+ (Xu et al. 2024).

        Parameters
        ----------
        alpha : float, optional
            Positive cumulative regrets are scaled by ``t^alpha / (t^alpha + 1)`` each
            iteration (default 2.3).
        gamma : float, optional
            Iterate ``t`` weighs ``t^gamma`` in the average strategy (default 5).
        """
        return cls(floor=True, alpha=alpha, gamma=gamma, predictive=True)

    # -- what the kernels get -----------------------------------------------------------------
    @property
    def discounts(self) -> bool:
        """Whether cumulative regrets are ever scaled (kernels then track the scale lazily)."""
        return self.alpha is not None or self.beta is not None

    @property
    def is_vanilla(self) -> bool:
        """Plain sums, no prediction, uniform average: what regret-based pruning needs.

        Never true for a subclass with its own :meth:`schedule`, whose weights may vary from
        one iteration to the next whatever its fields say.
        """
        return (
            not (self.floor or self.discounts or self.predictive)
            and self.gamma == 0.0
            and type(self).schedule is RegretRule.schedule
        )

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
            other schedules; the trainers check the ranges (a subclass's discounts must lie in
            ``[2^-1022, 1]`` and its weights in ``[0, 2^907]``).
        """
        try:
            t = np.asarray(iterations, dtype=np.float64)
        except (TypeError, ValueError):
            t = None
        if t is None or t.ndim != 1 or not np.all(t >= 1.0) or not np.all(np.isfinite(t)):
            raise ValueError(f"iterations must be a 1-D array of iteration numbers t >= 1, got "
                             f"{short_repr(iterations)}")
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
    if not (discounts.min() >= _MIN_DISCOUNT and discounts.max() <= 1.0):
        raise ValueError(
            f"{name}.schedule(): discounts must lie in [2**-1022, 1] (use floor=True to reset "
            "negative regrets)"
        )
    # pruned and sampled passes discount skipped infosets lazily only for a rule that says so
    if not rule.discounts and discounts.min() < 1.0:
        raise ValueError(
            f"{name}.schedule() discounts the regrets, but alpha and beta are None: set either "
            "(any value) to mark the rule as discounting"
        )
    # each weight at most 2^907: the strategy sums of 2^53 iterations then stay finite
    if not (weights.min() >= 0.0 and weights.max() <= _MAX_CUSTOM_WEIGHT):
        raise ValueError(
            f"{name}.schedule(): average weights must be finite and >= 0, at most 2**907 "
            "(rescale them: the average ignores a common factor)"
        )
    return factors


def iteration_limit(rule: RegretRule) -> tuple[int, str]:
    """The most iterations a trainer with ``rule`` runs in all, and the reason as a phrase.

    :data:`~cfrkit.limits.MAX_ITERATIONS`, or fewer where the presets' formulas would leave
    float64 first (see :class:`RegretRule`, *Limits*): ``T^(gamma + 1)``, a bound on the sum
    of the average weights, must stay below 2^960, and for a negative ``alpha`` or ``beta``,
    ``t^alpha`` must stay above 2^-1021 so the discount never rounds to 0. A subclass with its
    own :meth:`RegretRule.schedule` has its factors checked per block instead.

    Returns
    -------
    tuple of (int, str)
        The limit (at least 1) and a phrase for error messages, e.g. ``"a trainer runs at most
        2**53 iterations in all (9007199254740992)"``.
    """
    limit = MAX_ITERATIONS
    reason = f"a trainer runs at most 2**53 iterations in all ({MAX_ITERATIONS})"
    if type(rule).schedule is not RegretRule.schedule:
        return limit, reason
    # (log2 of the cap on T, the parameter, what would happen beyond it)
    caps = []
    if rule.gamma > 0.0:
        caps.append((_WEIGHT_SUM_LOG2 / (rule.gamma + 1.0), f"gamma={rule.gamma:g}",
                     f"the sum of the average weights t^{rule.gamma:g} would overflow float64"))
    for name in ("alpha", "beta"):
        exponent = getattr(rule, name)
        if exponent is not None and exponent < 0.0:
            caps.append((-_MIN_DISCOUNT_LOG2 / -exponent, f"{name}={exponent:g}",
                         f"the discount t^{exponent:g} / (t^{exponent:g} + 1) would underflow to 0"))
    for log2_cap, parameter, beyond in caps:
        if log2_cap < 53.0:  # else no cap below 2^53 (and 2.0**log2_cap might overflow)
            cap = max(1, math.floor(2.0**log2_cap))
            if cap < limit:
                limit = cap
                reason = (f"with {parameter} a trainer runs at most {counted(cap, 'iteration')} "
                          f"in all ({beyond} beyond)")
    return limit, reason
