"""Monte Carlo CFR sampling the players' actions too: external and outcome sampling."""

from __future__ import annotations

import math
from collections.abc import Mapping

import numpy as np

from .._kernels.mccfr import run_external, run_outcome
from .._kernels.random import seed_state
from .._text import short_repr
from ..game import Game
from ..policy import Policy
from ..rules import RegretRule
from ..tree import CompiledGame
from .base import Buffers, Trainer, check_seed

__all__ = ["ExternalSamplingCFR", "OutcomeSamplingCFR"]


class _ActionSampling(Trainer):
    """What external and outcome sampling share: the seed, the stack, the sound rules."""

    def __init__(
        self,
        game: Game | CompiledGame,
        *,
        seed: int | None,
        rule: RegretRule,
        alternating: bool,
        fixed: Policy | Mapping | None,
    ) -> None:
        self._seed = check_seed(seed)
        super().__init__(game, rule=rule, alternating=alternating, fixed=fixed)
        self._state.rng[:] = seed_state(self._seed)
        # the depth-first walk's stack (external) or the sampled path (outcome)
        self._stack = np.zeros(self.game.num_nodes, dtype=np.int32)

    @property
    def seed(self) -> int:
        """The seed of the trainer's random stream, in ``[0, 2**64)`` (fixed at construction)."""
        return self._seed

    def _configure(self) -> Buffers:
        rule = self._rule
        if rule.floor or rule.predictive:
            what = "regret matching+ (floor=True)" if rule.floor else "a predictive rule"
            raise ValueError(
                f"{type(self).__name__} does not take {what}: with sampled regrets it is "
                "unstable (the floor keeps the positive noise and forgets the negative; a "
                "prediction repeats the last sample's noise). Use the vanilla, linear or "
                "discounted rules (RegretRule.linear(), RegretRule.discounted()), as Linear and "
                "Discounted MCCFR do (Brown and Sandholm 2019)"
            )
        return Buffers(queued=True, sampling=True)

    def _constructor_arguments(self) -> dict:
        return {"alternating": self._alternating, "rule": self._rule, "seed": self._seed}


class ExternalSamplingCFR(_ActionSampling):
    """External-sampling Monte Carlo CFR (Lanctot, Waugh, Zinkevich and Bowling 2009).

    Each iteration makes one pass per player ``p`` (the *traverser*), in turn: chance outcomes
    and the other players' actions are sampled, one per node reached (from the chance
    probabilities and the current strategy), and every action of ``p`` is walked. The sampled
    counterfactual value of ``h`` is ``v(h) = sum_a sigma(h, a) v(h a)`` over ``p``'s actions,
    the sampled value elsewhere; the others' and chance's reach cancel against the probability
    of sampling them, so the regret estimate at each visited history of ``p``,

    .. math:: \\tilde r(I, a) = \\tilde v(h a) - \\tilde v(h),

    summed over the visited histories of ``I``, is an unbiased estimate of CFR's instantaneous
    regret. The regret rule folds it in as in every trainer (infosets the pass did not reach
    get 0; under discounting rules they are discounted lazily).

    Average strategy: during ``p``'s pass, each sampled node of the next player
    ``q = (p + 1) mod P`` adds ``w_t sigma(I)`` -- OpenSpiel's "simple" averaging, in
    expectation ``pi_q(I)`` times a constant per infoset -- divided, with three or more
    players, by the sampled reach of the players other than ``p`` and ``q`` (an importance
    weight that keeps the estimate unbiased; OpenSpiel's simple averaging omits it). Under
    alternating updates ``q = 0`` is averaged after its own update of the iteration, as in
    OpenSpiel's ``ExternalSamplingMCCFRSolver``.

    Cost per iteration: for each player, the subtree spanned by all of that player's actions
    below one sample of everything else -- far less than a full pass in games with many chance
    outcomes or many opponent actions (liar's dice, poker), with noisier iterations; judge it
    by wall time to a target.

    Parameters
    ----------
    game : Game or CompiledGame
        The game to solve.
    seed : int, optional
        Seed of the trainer's own random stream (xoshiro256**): the same seed gives
        bit-identical runs. An integer in ``[0, 2**64)``; ``None`` (default) draws 64 bits from
        the operating system, kept in :attr:`seed`.
    rule : RegretRule, optional
        The regret rule (default vanilla). Linear and discounted rules are what large-scale
        MCCFR uses (Linear MCCFR: ``RegretRule.linear()``); regret matching+ and predictive
        rules are refused (``ValueError``): with sampled regrets they are unstable.
    alternating : bool, optional
        ``True`` (default): each player's regrets are updated right after its pass, so later
        passes sample the fresher strategy. ``False``: every pass samples the same profile and
        all update at the end of the iteration.
    fixed : Policy or Mapping, optional
        Infosets whose strategy is held fixed (see :class:`Trainer`).
    """

    def __init__(
        self,
        game: Game | CompiledGame,
        *,
        seed: int | None = None,
        rule: RegretRule = RegretRule(),
        alternating: bool = True,
        fixed: Policy | Mapping | None = None,
    ) -> None:
        super().__init__(game, seed=seed, rule=rule, alternating=alternating, fixed=fixed)

    def _run(self, schedule: np.ndarray) -> int:
        return run_external(
            self.game.tree, self._statics, self._state, self._scratch, self._stack, schedule,
            self._alternating, self._lower, self._lazy,
        )


class OutcomeSamplingCFR(_ActionSampling):
    """Outcome-sampling Monte Carlo CFR (Lanctot, Waugh, Zinkevich and Bowling 2009).

    Each iteration makes one pass per player ``p``, in turn, along ONE sampled terminal history
    ``z``: at ``p``'s nodes the action is drawn from the exploring strategy
    ``s(a) = e / |A| + (1 - e) sigma(a)`` (``e`` = ``exploration``), elsewhere from the current
    strategy or the chance probabilities. With ``q(z)`` the probability of sampling ``z`` and
    ``u`` its utility for ``p``, at each history ``h`` of ``p`` on the path, with sampled
    action ``a*``,

    .. math::

        \\tilde r(I, a) = \\frac{\\pi_{-p}(h)}{q(h)} \\left(
            [a = a^*] \\, \\frac{\\pi(h a^*, z)\\, u}{q(h a^*, z)}
            - \\frac{\\pi(h, z)\\, u}{q(h, z)} \\right),

    an unbiased estimate of CFR's regret (``pi_{-p} / q`` on the path is ``1 / q_p(h)``, the
    inverse of ``p``'s own sampling probabilities: chance's and the others' cancel). The
    exploration keeps every action of ``p`` sampled with probability at least ``e / |A|``,
    which bounds the importance weights.

    Average strategy: *stochastically weighted averaging* (Lanctot et al. 2009, section 4.2;
    OpenSpiel's ``OutcomeSamplingMCCFRSolver`` does the same): each of ``p``'s infosets on the
    path adds ``w_t pi_p(h) sigma(I) / q(h)``, whose expectation is ``w_t pi_p(I) sigma(I)``
    times the number of histories of ``I``, a constant per infoset that normalisation removes.

    Each pass touches one path (a handful of nodes): by far the cheapest iterations, and the
    noisiest. It needs no sampled subtree to be walked, so it is the trainer for games too big
    to walk one player's whole strategy below a sample.

    Parameters
    ----------
    game : Game or CompiledGame
        The game to solve.
    seed : int, optional
        Seed of the trainer's own random stream; see :class:`ExternalSamplingCFR`.
    exploration : float, optional
        ``e`` in ``(0, 1]``, the share of uniform exploration in the traverser's sampling
        (default 0.6, OpenSpiel's).
    rule : RegretRule, optional
        The regret rule (default vanilla); linear and discounted rules are sound, regret
        matching+ and predictive rules are refused (``ValueError``).
    alternating : bool, optional
        Alternating (default) or simultaneous updates (see :class:`ExternalSamplingCFR`).
    fixed : Policy or Mapping, optional
        Infosets whose strategy is held fixed (see :class:`Trainer`).
    """

    def __init__(
        self,
        game: Game | CompiledGame,
        *,
        seed: int | None = None,
        exploration: float = 0.6,
        rule: RegretRule = RegretRule(),
        alternating: bool = True,
        fixed: Policy | Mapping | None = None,
    ) -> None:
        if isinstance(exploration, (bool, np.bool_)) or not isinstance(
            exploration, (int, float, np.integer, np.floating)
        ) or not (0.0 < float(exploration) <= 1.0 and math.isfinite(float(exploration))):
            raise ValueError(f"exploration must be a number in (0, 1], got {short_repr(exploration)}")
        self._exploration = float(exploration)
        super().__init__(game, seed=seed, rule=rule, alternating=alternating, fixed=fixed)

    @property
    def exploration(self) -> float:
        """The share of uniform exploration in the traverser's sampling (fixed at construction)."""
        return self._exploration

    def _constructor_arguments(self) -> dict:
        return {**super()._constructor_arguments(), "exploration": self._exploration}

    def _run(self, schedule: np.ndarray) -> int:
        return run_outcome(
            self.game.tree, self._statics, self._state, self._scratch, self._stack, schedule,
            self._alternating, self._lower, self._lazy, self._exploration,
        )
