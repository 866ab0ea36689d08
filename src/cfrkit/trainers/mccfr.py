"""Monte Carlo CFR sampling the players' actions too (external and outcome sampling), and the
streams every Monte Carlo trainer takes."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from .. import _threads
from .._kernels.mccfr import (
    run_external,
    run_external_parallel,
    run_external_streams,
    run_outcome,
    run_outcome_parallel,
    run_outcome_streams,
)
from .._kernels.random import seed_state, stream_states
from .._numbers import integer_value, real_value
from .._text import short_repr
from ..game import Game
from ..policy import Policy
from ..rules import RegretRule
from ..state import StreamPool, new_stream_pool, worker_buffers
from ..tree import CompiledGame
from .base import Buffers, KernelCall, ThreadsOption, Trainer, check_seed

__all__ = ["ExternalSamplingCFR", "OutcomeSamplingCFR", "StreamSampling"]


#: The most streams a trainer takes (each holds its own regret and average sums).
MAX_STREAMS = 1024
#: The most passes per stream, player and iteration.
MAX_SAMPLES = 2**20


def _count(name: str, value: object, limit: int) -> int:
    """``value`` as an int in ``[1, limit]``, else a ValueError naming the argument."""
    count = integer_value(value)
    if count is None or not 1 <= count <= limit:
        raise ValueError(f"{name} must be an integer from 1 to {limit}, got {short_repr(value)}")
    return count


class StreamSampling(ThreadsOption, Trainer):
    """What the Monte Carlo trainers share: the seed, the streams and their threads, the stack
    (see ``_kernels/mccfr.py``)."""

    _kernels: tuple  # the plain kernel, the streams' serial and parallel kernels
    _plain_stack = True  # the plain kernel walks on the trainer's stack (the streams on the pool's)

    def __init__(
        self,
        game: Game | CompiledGame,
        *,
        seed: int | None,
        rule: RegretRule,
        alternating: bool,
        fixed: Policy | Mapping | None,
        streams: int,
        samples: int,
        threads: int | None,
    ) -> None:
        self._seed = check_seed(seed)
        self._streams = _count("streams", streams, MAX_STREAMS)
        self._samples = _count("samples", samples, MAX_SAMPLES)
        threads = _threads.check_threads(threads)  # before the game is compiled
        super().__init__(game, rule=rule, alternating=alternating, fixed=fixed)
        self._threads = threads
        self._state.rng[:] = seed_state(self._seed)
        # the depth-first walk's stack (external) or the sampled path (outcome)
        self._stack = np.zeros(self.game.num_nodes if self._plain_stack else 0, dtype=np.int32)
        plain = self._streams == 1 and self._samples == 1  # the one-pass kernel
        self._pool: StreamPool = new_stream_pool(
            self.game.tree, stream_states(self._seed, 0 if plain else self._streams),
            self._thread_count(threads), self._stream_layout(),
        )

    @property
    def seed(self) -> int:
        """The seed of the trainer's random stream, in ``[0, 2**64)`` (fixed at construction)."""
        return self._seed

    @property
    def streams(self) -> int:
        """Independent random streams, each making :attr:`samples` passes per player and
        iteration (fixed at construction)."""
        return self._streams

    @property
    def samples(self) -> int:
        """Passes per stream, player and iteration (fixed at construction)."""
        return self._samples

    def _persistent(self) -> dict:
        streams = ("rng",) if self._pool.rng.shape[0] else ()
        return {**super()._persistent(), "streams": (self._pool, streams)}

    def _thread_count(self, threads: int | None) -> int:
        if self._streams == 1:
            return 1
        return min(self._streams, _threads.parallel_threads(self.game.num_nodes, threads))

    def _use_threads(self, count: int) -> None:
        if self._pool.rng.shape[0]:
            self._pool = self._pool._replace(
                **worker_buffers(self.game.tree, count, self._stream_layout())
            )

    def _stream_layout(self):
        """The sampling layout whose buffers the streams' workers need (chance sampling's), or
        None for the depth-first passes."""
        return None

    def _kernel(self, schedule: np.ndarray) -> KernelCall:
        # the workers the pool has buffers for: read from the pool itself, one attribute, so
        # a call never pairs buffers for one count with another (threads set meanwhile, or a
        # setter stopped by Ctrl-C between the pool and the setting)
        count = self._pool.merged_count.shape[0]
        arguments = (
            self.game.tree, self._statics, self._state, self._scratch, self._stack, self._pool,
            _threads.workers(count), self._samples, schedule, self._alternating, self._lower,
            self._lazy, *self._scheme_arguments(),
        )
        plain, streams, parallel = self._kernels
        if count > 1:
            return KernelCall(parallel, arguments, count)
        return KernelCall(streams if self._pool.rng.shape[0] else plain, arguments)

    def _scheme_arguments(self) -> tuple:
        return ()


class _ActionSampling(StreamSampling):
    """What external and outcome sampling share: :class:`StreamSampling` and the sound
    rules."""

    def _configure(self) -> Buffers:
        rule = self._rule
        if rule.floor or rule.predictive:
            what = "regret matching+ (floor=True)" if rule.floor else "a predictive rule"
            # why (the docs' Trainers page): the floor keeps the positive noise and forgets
            # the negative; a prediction repeats the last sample's noise
            raise ValueError(
                f"{type(self).__name__} does not take {what}, unstable on sampled regrets; use "
                "RegretRule(), RegretRule.linear() or RegretRule.discounted()"
            )
        return Buffers(queued=True, sampling=True)

    def _constructor_arguments(self) -> dict:
        return {"alternating": self._alternating, "rule": self._rule, "seed": self._seed,
                "streams": self._streams, "samples": self._samples}


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
    weight that keeps the constant as with two players, while those players give every action
    a positive probability; OpenSpiel's simple averaging omits it). Under
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
    streams : int, optional
        Independent random streams (default 1), each making ``samples`` passes per player and
        iteration; see *Streams* below.
    samples : int, optional
        Passes per stream, player and iteration (default 1).
    threads : int, optional
        Threads the streams (and :meth:`solve`'s evaluations) run on: default all of numba's,
        at most ``streams``. The arrays are the same, bit for bit, on any count. Games under
        50,000 nodes run their passes on one thread. Settable between calls; not kept in
        checkpoints.

    Notes
    -----
    **Streams.** With ``streams=k, samples=b``, each player's pass of an iteration becomes a
    *round* of ``k * b`` independent passes under the same strategy: stream ``j`` draws from
    the seed's xoshiro256** stream jumped ``j`` times by ``2**128`` draws, so no two streams
    overlap. The round's regret estimates and average-strategy terms are averaged,

    .. math:: \\tilde r(I, a) = \\frac{1}{kb} \\sum_{j < k} \\sum_{i < b} \\tilde r_{j,i}(I, a),

    still unbiased, with ``1 / (kb)`` of one pass's variance, and folded in with one update.
    The streams run on the threads, each into its own sums, and the sums are merged infoset
    by infoset in stream order, so a run depends on ``k`` and ``b`` but never on the thread
    count. ``k = b = 1`` is the one-pass trainer. Batching saves the per-pass update and lets
    the passes share the cores; it also makes ``kb`` times fewer updates per pass, which
    costs most early in a run (see the Trainers guide for measurements). Memory: each stream
    holds its own slot and infoset sums (``8 A + 28 S`` bytes for ``A`` action slots
    and ``S`` infosets), each thread its own per-node buffers.
    """

    _kernels = (run_external, run_external_streams, run_external_parallel)

    def __init__(
        self,
        game: Game | CompiledGame,
        *,
        seed: int | None = None,
        rule: RegretRule = RegretRule(),
        alternating: bool = True,
        fixed: Policy | Mapping | None = None,
        streams: int = 1,
        samples: int = 1,
        threads: int | None = None,
    ) -> None:
        super().__init__(game, seed=seed, rule=rule, alternating=alternating, fixed=fixed,
                         streams=streams, samples=samples, threads=threads)



class OutcomeSamplingCFR(_ActionSampling):
    """Outcome-sampling Monte Carlo CFR (Lanctot, Waugh, Zinkevich and Bowling 2009).

    Each iteration makes one pass per player ``p``, in turn, along ONE sampled terminal history
    ``z``: at ``p``'s nodes the action is drawn from the exploring strategy
    ``s(a) = e / |A| + (1 - e) sigma(a)`` (``e`` = ``exploration``), elsewhere from the current
    strategy or the chance probabilities. With ``q(z) = q(h) q(h, z)`` the probability of
    sampling ``z`` (its parts to and from ``h``) and ``u`` its utility for ``p``, at each
    history ``h`` of ``p`` on the path, with sampled action ``a*``,

    .. math::

        \\tilde r(I, a) = \\frac{\\pi_{-p}(h)}{q(h)} \\, \\frac{u}{q(h, z)} \\left(
            [a = a^*] \\, \\pi(h a^*, z) - \\pi(h, z) \\right),

    an unbiased estimate of CFR's regret (``pi_{-p} / q`` on the path is ``1 / q_p(h)``, the
    inverse of ``p``'s own sampling probabilities: chance's and the others' cancel). The
    exploration keeps every action of ``p`` sampled with probability at least ``e / |A|``,
    which bounds the importance weights.

    Average strategy: *stochastically weighted averaging* (Lanctot et al. 2009, section 4.2;
    OpenSpiel's ``OutcomeSamplingMCCFRSolver`` does the same): each of ``p``'s infosets on the
    path adds ``w_t pi_p(h) sigma(I) / q(h)``, whose expectation is ``w_t pi_p(I) sigma(I)``
    times the number of histories of ``I`` the sample can reach (chance and the others playing
    their path with positive probability). While the others play every action, that is a
    constant per infoset, which normalisation removes; where their strategies put zeros (as
    regret matching does), it changes with ``t``, and the average is off by that much. The
    method has this bias (so has OpenSpiel's); a fixed ``exploration`` does not remove it,
    since the others are sampled by their own strategies.

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
    streams, samples, threads : int, optional
        Independent random streams, passes per stream, player and iteration, and the threads
        the streams run on (defaults 1, 1 and all of numba's): see
        :class:`ExternalSamplingCFR`, *Streams*. Outcome sampling gains the most from
        ``samples``: its passes are so short that the update after each one is nearly half
        of its cost.
    """

    _kernels = (run_outcome, run_outcome_streams, run_outcome_parallel)

    def __init__(
        self,
        game: Game | CompiledGame,
        *,
        seed: int | None = None,
        exploration: float = 0.6,
        rule: RegretRule = RegretRule(),
        alternating: bool = True,
        fixed: Policy | Mapping | None = None,
        streams: int = 1,
        samples: int = 1,
        threads: int | None = None,
    ) -> None:
        number = real_value(exploration)
        if number is None or not 0.0 < number <= 1.0:
            raise ValueError(f"exploration must be a number in (0, 1], got {short_repr(exploration)}")
        self._exploration = number
        super().__init__(game, seed=seed, rule=rule, alternating=alternating, fixed=fixed,
                         streams=streams, samples=samples, threads=threads)

    @property
    def exploration(self) -> float:
        """The share of uniform exploration in the traverser's sampling (fixed at construction)."""
        return self._exploration

    def _constructor_arguments(self) -> dict:
        return {**super()._constructor_arguments(), "exploration": self._exploration}

    def _scheme_arguments(self) -> tuple:
        return (self._exploration,)
