"""Chance-sampled CFR: one sampled chance outcome per chance node per iteration."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from .._kernels.drivers import run_chance_sampled, run_chance_sampled_plain, run_joint_sampled
from .._kernels.mccfr import run_chance_parallel, run_chance_streams
from ..game import Game
from ..policy import Policy
from ..rules import RegretRule
from ..state import sampling_scratch
from ..tree import CompiledGame
from .._numbers import check_bool
from .base import Buffers, KernelCall
from .mccfr import StreamSampling

__all__ = ["ChanceSampledCFR"]


class ChanceSampledCFR(StreamSampling):
    """Monte Carlo CFR with chance sampling (Zinkevich et al. 2007; Lanctot et al. 2009).

    Each iteration samples one outcome at every chance node it reaches (from the chance
    probabilities) and walks all player actions below the sampled outcomes. Regrets use the
    sampled counterfactual value: the chance probabilities drop out of the reach because they
    cancel against the probability of sampling, so each iteration's instantaneous regret is an
    unbiased estimate of the full pass's (Lanctot, Waugh, Zinkevich and Bowling 2009, "Monte
    Carlo Sampling for Regret Minimization in Extensive Games"). The average strategy gets
    ``w_t pi_i(h) sigma(I, a)`` at each visited history ``h``; in expectation that is the full
    pass's weight times the chance probability of ``I``, a constant per infoset that
    normalisation removes.

    The regret rule is applied to the sampled regrets exactly as to exact ones: infosets the
    sample did not reach have instantaneous regret 0 (under a discounting rule their regrets
    are discounted lazily, when next visited or read; under a predictive rule their prediction
    becomes 0). Regret matching+ (``floor``) with sampled regrets is known to be less stable
    than with exact ones -- the floor forgets the negative noise but keeps the positive -- so
    prefer the vanilla, linear or discounted rules for long sampled runs.

    Iteration semantics: by default one chance sample per iteration, shared by all players,
    who then update in turn (alternating, each player's strategy refreshed right after its
    pass). ``alternating=False`` makes every player's pass see the same profile -- one sampled
    deal evaluated for all players at once, as in the original chance-sampling papers -- and
    ``sample_per_player=True`` draws a fresh sample for each player's pass instead.

    Cost: only the sampled part of the tree, once per player per iteration (about 25 nodes per
    pass on three-player Kuhn instead of 601). Many cheap, noisy iterations: prefer it when
    chance nodes have many outcomes (card deals), and judge it by wall time, not iterations.

    Parameters
    ----------
    game : Game or CompiledGame
        The game to solve.
    seed : int, optional
        Seed of the trainer's own random stream (xoshiro256**): the same seed gives
        bit-identical results. An integer in ``[0, 2**64)`` (numpy integers too): the stream's
        seeding reads 64 bits, so a larger seed would silently repeat a smaller one's stream
        and is refused. ``None`` (default) draws a 64-bit seed from the operating system; the
        seed used is kept in :attr:`seed`.
    rule : RegretRule, optional
        The regret rule (default: vanilla).
    alternating : bool, optional
        Alternating (default) or simultaneous updates.
    sample_per_player : bool, optional
        A fresh chance sample for each player's pass (default ``False``: one per iteration).
    fixed : Policy or Mapping, optional
        Infosets whose strategy is held fixed (see :class:`Trainer`).
    streams, samples, threads : int, optional
        Independent random streams, passes per stream, player and iteration, and the threads
        the streams (and :meth:`solve`'s evaluations) run on (defaults 1, 1 and all of numba's):
        see *Streams* below.

    Notes
    -----
    **Streams.** With ``streams=k, samples=b`` (``k b > 1``), each player's pass of an
    iteration becomes a *round* of ``k b`` passes under the same strategy, each on its own
    sample: ``b`` on each of ``k`` independent random streams (stream ``j`` is the seed's
    xoshiro256** stream jumped ``j`` times by ``2**128`` draws). The round's sampled regrets
    and average terms are averaged (``1 / (k b)`` each) and folded in with one update, as
    :class:`ExternalSamplingCFR` does with its streams: still unbiased, with ``1 / (k b)`` of
    one sample's variance. With ``sample_per_player=False`` every player's round of an
    iteration uses the same ``k b`` samples. The streams run on the threads, each into its own
    sums, merged in a fixed order: the arrays are the same, bit for bit, on any thread count
    (they depend on ``k`` and ``b``). The passes are the one-stream trainer's, without its
    updates during a pass; with ``samples=1``, stream 0 draws the one-stream trainer's samples.
    Predictive rules are refused with streams (their update has no predictions).
    """

    _plain_stack = False  # the layout's kernels need no stack
    _kernels = (None, run_chance_streams, run_chance_parallel)

    def __init__(
        self,
        game: Game | CompiledGame,
        *,
        seed: int | None = None,
        rule: RegretRule = RegretRule(),
        alternating: bool = True,
        sample_per_player: bool = False,
        fixed: Policy | Mapping | None = None,
        streams: int = 1,
        samples: int = 1,
        threads: int | None = None,
    ) -> None:
        self._sample_per_player = check_bool("sample_per_player", sample_per_player)
        super().__init__(game, seed=seed, rule=rule, alternating=alternating, fixed=fixed,
                         streams=streams, samples=samples, threads=threads)
        if not self._pool.rng.shape[0]:
            # the passes run on the sampling layout (see cfrkit._kernels.sampled_pass)
            self._scratch = sampling_scratch(self._scratch, self._statics)

    @property
    def sample_per_player(self) -> bool:
        """Whether each player's pass draws its own sample (fixed at construction)."""
        return self._sample_per_player

    def _configure(self) -> Buffers:
        streams = self._streams * self._samples > 1
        if streams and self._rule.predictive:
            raise ValueError(
                "ChanceSampledCFR takes a predictive rule only with streams=1 and samples=1: "
                "the streams' update has no predictions"
            )
        joint = not streams and not self._alternating and not self._sample_per_player
        return Buffers(queued=True, sampling=True, joint=joint)

    def _constructor_arguments(self) -> dict:
        return {"alternating": self._alternating, "rule": self._rule, "seed": self._seed,
                "sample_per_player": self._sample_per_player, "streams": self._streams,
                "samples": self._samples}

    def _scheme_arguments(self) -> tuple:
        return (self._sample_per_player,)

    def _stream_layout(self):
        return self._statics.layout

    def _kernel(self, schedule: np.ndarray) -> KernelCall:
        if self._pool.rng.shape[0]:  # streams: the rounds of _kernels/mccfr.py
            return super()._kernel(schedule)
        # one walk for every player, or a pass per player: under a rule without predictions or
        # discounts, alternating passes have a kernel of their own with those switches constant
        # (faster; each kernel is compiled on first use)
        tree, plain = self.game.tree, not (self._rule.predictive or self._lazy)
        if not self._alternating and not self._sample_per_player:
            return KernelCall(run_joint_sampled, (
                tree, self._statics, self._state, self._scratch, schedule,
                self._lower, self._rule.predictive, self._lazy,
            ))
        if self._alternating and plain:
            return KernelCall(run_chance_sampled_plain, (
                tree, self._statics, self._state, self._scratch, schedule,
                self._sample_per_player, self._lower,
            ))
        return KernelCall(run_chance_sampled, (
            tree, self._statics, self._state, self._scratch, schedule,
            self._alternating, self._sample_per_player, self._lower,
            self._rule.predictive, self._lazy,
        ))
