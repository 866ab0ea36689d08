"""What every trainer shares: construction, ``iterate``, counters and policies.

A trainer is one *traversal* (a subclass: full, pruned or chance-sampled passes) and one
*regret rule* (:class:`~cfrkit.rules.RegretRule`, a value). Both are fixed at construction:
the buffers are sized for them, so they are read-only properties afterwards.
"""

from __future__ import annotations

import abc
import math
import os
import sys
import time
from collections.abc import Callable, Hashable, Mapping
from pathlib import Path
from typing import NamedTuple

import numpy as np

from .. import _threads
from .._interrupt import Blocks, FixedGame, NoCopies, between_blocks, interruptible
from .._kernels.update import synced_regrets
from .._notice import first_call
from .._numbers import check_bool, integer_value, real_value
from .._text import short_repr
from ..game import Game, InfoSet
from ..evaluation import evaluate, warm_up_evaluation
from ..policy import Policy, check_policy_game, policy_rows
from ..record import SolveRecord
from ..rules import RegretRule, iteration_limit, kernel_schedule
from ..state import Scratch, TrainerState, new_scratch, new_state
from ..statics import Statics, statics_for
from ..tree import CompiledGame, compile_game

__all__ = ["Trainer"]

# iterate() runs blocks of iterations, each one kernel call of about this many seconds: long
# enough that the call overhead (~10 us) vanishes, short enough that counters and arrays agree
# often (every block boundary is a consistent state)


class KernelCall(NamedTuple):
    """A trainer's next kernel call: the numba function, its arguments, and the threads it runs
    on (1: a serial kernel)."""

    kernel: Callable[..., int]
    arguments: tuple
    threads: int = 1


class Buffers(NamedTuple):
    """Which optional buffers a traversal uses."""

    queued: bool = False  # pruned or sampled passes (a queue, a visited list)
    sampling: bool = False  # chance sampling (alias tables, sample stamps)
    joint: bool = False  # one sampled walk for every player (per-node reach of each player)
    regret_pruning: bool = False  # pruning windows and value bounds
    bounds: bool = False  # value bounds and chance reach (regret-based or threshold pruning)


class Trainer(NoCopies, FixedGame, abc.ABC):
    """A regret minimiser over a compiled game: its arrays, its counters and its policies.

    Parameters
    ----------
    game : Game or CompiledGame
        The game to solve.
    rule : RegretRule
        How instantaneous regrets are folded in and iterates averaged.
    alternating : bool
        ``True``: players update in order 0..n-1, each seeing the others' freshest strategies
        (OpenSpiel's ``CFRSolver`` convention). ``False``: simultaneous updates, every player's
        regrets from the same profile.
    fixed : Policy or Mapping, optional
        ``{infoset key: {action: probability}}`` (or a sequence of probabilities in action
        order) for infosets whose strategy is held fixed -- node locking. The other infosets
        learn a best reply to them; the fixed rows appear unchanged in every policy the trainer
        returns. A :class:`Policy` must belong to this game (or an equal compilation of it),
        else ``ValueError``.

    Attributes
    ----------
    game : CompiledGame
        The compiled game, read-only (``trainer.game.game`` is the object passed in).
    """

    _copy_instead = NoCopies.SAVE_AND_LOAD

    def __init__(
        self,
        game: Game | CompiledGame,
        *,
        rule: RegretRule,
        alternating: bool,
        fixed: Policy | Mapping | None,
    ) -> None:
        if not isinstance(rule, RegretRule):
            raise TypeError(f"rule must be a cfrkit.RegretRule, got {type(rule).__name__}")
        self._game = compile_game(game)
        self._rule = rule
        self._alternating = check_bool("alternating", alternating)
        self._iteration = 0
        self._nodes_touched = 0
        self._blocks = Blocks()
        self._warm = False  # kernels compiled (or loaded) for this trainer
        tree = self.game.tree
        buffers = self._configure()
        # the current strategy over the decision slots, then the (constant) chance slots
        probs = np.concatenate([Policy.uniform(self.game).table, tree.chance_prob])
        locked = np.zeros(self.game.num_infosets, dtype=np.bool_)
        if isinstance(fixed, Policy):  # as in evaluation: not matched by key across games
            check_policy_game("fixed", self.game, fixed)
        self._fixed_rows = {} if fixed is None else policy_rows(self.game, fixed)
        for infoset, row in self._fixed_rows.items():
            start = tree.infoset_first_slot[infoset]
            probs[start : start + row.shape[0]] = row
            locked[infoset] = True
        self._lazy = buffers.queued and rule.discounts
        self._lower = 0.0 if rule.floor else -np.inf  # the kernels' branch-free floor
        self._state: TrainerState = new_state(
            tree, probs, locked, predictive=rule.predictive, lazy_discount=self._lazy,
            queued=buffers.queued, regret_pruning=buffers.regret_pruning,
        )
        self._scratch: Scratch = new_scratch(
            tree, queued=buffers.queued, sampling=buffers.sampling, joint=buffers.joint,
            regret_pruning=buffers.regret_pruning,
        )
        self._statics: Statics = statics_for(
            self.game, sampling=buffers.sampling, pruning=buffers.bounds
        )

    #: Threads for solve()'s evaluations (None: all of numba's); full-pass trainers take it as
    #: an argument and run their passes on it too (see CFR.threads)
    _threads: int | None = None

    # -- the traversal, for subclasses ------------------------------------------------------------
    @abc.abstractmethod
    def _configure(self) -> Buffers:
        """Settle the traversal's switches against the compiled game and the rule (raising
        ValueError where a combination is unsound); return the optional buffers it uses.

        Called once, in ``__init__``, after :attr:`game` and :attr:`rule` are set.
        """

    @abc.abstractmethod
    def _kernel(self, schedule: np.ndarray) -> KernelCall:
        """The kernel call that runs ``schedule.shape[1]`` iterations as things stand."""

    def _run(self, schedule: np.ndarray) -> int:
        """Run ``schedule.shape[1]`` iterations in one kernel call; return the nodes touched."""
        kernel, arguments, threads = self._kernel(schedule)
        if threads > 1:
            with _threads.running(threads):
                return kernel(*arguments)
        return kernel(*arguments)

    # -- switches (fixed at construction) ---------------------------------------------------------
    @property
    def rule(self) -> RegretRule:
        """The regret rule (fixed at construction)."""
        return self._rule

    @property
    def alternating(self) -> bool:
        """Alternating (``True``) or simultaneous updates (fixed at construction)."""
        return self._alternating

    @property
    def iteration(self) -> int:
        """Iterations completed (always those whose updates are in the arrays)."""
        return self._iteration

    @property
    def nodes_touched(self) -> int:
        """Tree nodes the kernels have read or written, summed over all passes.

        The work done, for comparing trainers and measuring pruning. A full-pass iteration
        touches every node once per player.
        """
        return self._nodes_touched

    @property
    def infosets(self) -> Mapping[str, InfoSet]:
        """Infoset key -> :class:`InfoSet` record (key, player, actions)."""
        return self.game.infosets

    # -- running ------------------------------------------------------------------------------
    def iterate(self, n: int = 1) -> Trainer:
        """Run ``n`` iterations; return ``self`` for chaining.

        The iterations run inside numba, without the GIL, in blocks of about 10 ms each (one
        kernel call per block). Ctrl-C is honoured at the end of the block it arrives in:
        :attr:`iteration` then counts exactly the iterations whose updates are in the arrays,
        the trainer keeps working, and the KeyboardInterrupt propagates.

        A trainer runs at most :data:`cfrkit.limits.MAX_ITERATIONS` (2^53) iterations in all,
        fewer under a rule whose weights or discounts would leave float64 first (see
        :class:`~cfrkit.rules.RegretRule`, *Limits*).

        Parameters
        ----------
        n : int, optional
            Iterations to run (default 1; 0 does nothing). One iteration updates every player
            once.

        Returns
        -------
        Trainer
            ``self``.

        Raises
        ------
        ValueError
            If ``n`` is not a non-negative integer, or ``iteration + n`` is past the limit
            (checked before anything runs).
        """
        remaining = integer_value(n)
        if remaining is None or remaining < 0:
            raise ValueError(f"n must be a non-negative integer, got {short_repr(n)}")
        self._check_room(f"iterate(n={short_repr(n)})", remaining)
        with interruptible():
            if remaining and not self._warm:
                self._warm_up()
            self._blocks.run(remaining, self._step)
        return self

    def _step(self, count: int) -> None:
        """``count`` iterations in one kernel call, and the counters with them."""
        schedule = kernel_schedule(self._rule, self._iteration + 1, count)
        touched = self._run(schedule)
        self._iteration += count
        self._nodes_touched += int(touched)

    def _check_room(self, what: str, n: int) -> None:
        """A ValueError starting with ``what`` if ``n`` more iterations go past the limit."""
        limit, reason = iteration_limit(self._rule)
        if self._iteration + n > limit:
            raise ValueError(f"{what}: {reason}; this one is at {self._iteration}")

    def _warm_up(self) -> None:
        """Compile (or load) this trainer's kernel with an empty block, once per process: no
        iteration runs, so a Ctrl-C during a long first compilation interrupts at once, and the
        wait is announced."""
        empty = np.empty((3, 0))
        first_call(self._kernel(empty).kernel, f"the {type(self).__name__} kernels",
                   lambda: self._run(empty))
        self._warm = True

    def solve(
        self,
        *,
        target_nash_conv: float | None = None,
        max_iterations: int | None = None,
        time_limit: float | None = None,
        progress: bool = False,
        callback: Callable[["Trainer", SolveRecord], bool | None] | None = None,
    ) -> SolveRecord:
        """Train until a target NashConv, an iteration budget or a time limit, whichever first.

        The average policy's NashConv is checked on a schedule that keeps evaluation a small
        part of the run and depends on the run alone, not on the machine's speed: after at
        least 10% more iterations and at least nine evaluations' worth of training, counted in
        node-visits, so evaluation is about a tenth of the work
        (:attr:`SolveRecord.evaluation_seconds` reports its time) and the same trainer, game
        and seed stop at the same iteration anywhere. The policy is also checked before the
        first iteration, so a target already met stops at once; a fresh trainer (or a time
        limit, which needs an iteration's time) checks again after one iteration, a continued
        one sizes its first chunk from the node-visits of its earlier iterations.

        Parameters
        ----------
        target_nash_conv : float, optional
            Stop once the average policy's NashConv is at most this (exploitability is half of
            it in two-player zero-sum games).
        max_iterations : int, optional
            Stop after this many more iterations. ``iteration + max_iterations`` must not pass
            the trainer's limit (2^53 in all, fewer under some rules: see :meth:`iterate`);
            without it, a run that reaches the limit stops there, as ``"max_iterations"``.
        time_limit : float, optional
            Stop once this many seconds have passed (checked between chunks; a chunk is sized
            not to overrun it).
        progress : bool, optional
            Show a progress bar (tqdm, on stderr) with the iteration, NashConv and rate.
        callback : callable, optional
            ``callback(trainer, record)`` after each check, the one before the first iteration
            and the last included, with the record so far (its ``stopped`` is ``"running"``
            until the last check); returning True stops the run.

        Returns
        -------
        SolveRecord
            One entry per check, the last at the final state.

        Raises
        ------
        ValueError
            If no limit is given, or an argument is out of range.
        ImportError
            If ``progress=True`` and tqdm is not installed (``pip install cfrkit[progress]``).
        KeyboardInterrupt
            On Ctrl-C, after the current block; the trainer stays consistent and usable.
        """
        target = _optional_positive("target_nash_conv", target_nash_conv)
        limit = _optional_positive("time_limit", time_limit)
        if max_iterations is not None and (
            integer_value(max_iterations) is None or max_iterations < 0
        ):
            raise ValueError(
                f"max_iterations must be a non-negative integer, got {short_repr(max_iterations)}"
            )
        if max_iterations is not None:
            self._check_room(f"solve(max_iterations={short_repr(max_iterations)})",
                             int(max_iterations))
        if target is None and max_iterations is None and limit is None:
            raise ValueError("solve() needs target_nash_conv, max_iterations or time_limit")
        progress = check_bool("progress", progress)
        if callback is not None and not callable(callback):
            raise ValueError(f"callback must be callable, got {callback!r}")
        with interruptible():
            # compile (or load) the kernels before the clock starts: a first run in a fresh
            # process would otherwise count seconds of compilation as training or evaluation
            if not self._warm:
                self._warm_up()
            warm_up_evaluation(self.game, self._threads)
            run = _SolveRun(self, target, None if max_iterations is None else int(max_iterations),
                            limit,
                            _progress_bar(type(self).__name__, max_iterations) if progress else None)
            try:
                run.check()
                while True:
                    # every check, the first and the last too; after the last, its answer is moot
                    if callback is not None and callback(self, run.record()) \
                            and run.stopped is None:
                        run.stopped = "callback"
                    if run.stopped is not None:
                        break
                    run.train(run.next_chunk())
                    run.check()
            finally:
                if run.bar is not None:
                    run.bar.close()
        return run.record()

    @between_blocks
    def save(self, path: str | os.PathLike) -> Path:
        """Write a checkpoint: every array of the run and its metadata, in one ``.npz`` file.

        The file holds the trainer's arrays (regrets, average weights, current strategy,
        discount bookkeeping, random stream) and a JSON metadata entry: format version, cfrkit
        version, trainer class and parameters, iteration, and a fingerprint of the compiled
        game, which :func:`cfrkit.load_trainer` checks. It is written atomically (a temporary
        file, then a rename) and holds nothing pickled. Continuing the loaded trainer is
        bit-identical to never having stopped.

        Parameters
        ----------
        path : str or os.PathLike
            Where to write; conventionally ending in ``.npz``. An existing file is replaced.

        Returns
        -------
        pathlib.Path
            ``path``.
        """
        from ..checkpoint import save_trainer

        return save_trainer(self, path)

    def _constructor_arguments(self) -> dict:
        """The keyword arguments that rebuild this trainer (``fixed`` aside): for checkpoints.

        Subclasses add their own switches.
        """
        return {"alternating": self._alternating}

    def _persistent_scratch(self) -> tuple[str, ...]:
        """Scratch buffers whose contents a later pass reads (a checkpoint keeps them)."""
        return ()

    def _persistent(self) -> dict[str, tuple[NamedTuple, tuple[str, ...]]]:
        """What a checkpoint keeps beyond the state: ``{prefix: (bundle, field names)}``."""
        return {"scratch": (self._scratch, self._persistent_scratch())}

    # -- reading ------------------------------------------------------------------------------
    @between_blocks
    def current_policy(self) -> Policy:
        """The strategy of the next iteration, from regret matching (a fresh copy)."""
        return Policy(self.game, self._state.probs[: self.game.tree.num_action_slots])

    @between_blocks
    def average_policy(self) -> Policy:
        """The average strategy, the one that converges to equilibrium (a fresh copy).

        ``sum_t w_t pi_i^t(I) sigma^t(I, a)`` normalised per infoset, where ``pi_i^t(I)`` is
        the acting player's own reach and ``w_t`` the rule's iterate weight; uniform at
        infosets whose weights are all zero. Fixed infosets show their fixed rows.
        """
        table = normalise_rows(self.game, self._state.strategy_sum)
        for infoset, row in self._fixed_rows.items():
            start = self.game.tree.infoset_first_slot[infoset]
            table[start : start + row.shape[0]] = row
        return Policy(self.game, table)

    @between_blocks
    def cumulative_regrets(self) -> dict[str, dict[Hashable, float]]:
        """``{key: {action: cumulative regret}}`` as of now, a fresh copy.

        Under a discounting rule this is the discounted sum (for Linear CFR, ``sum_t t r^t``
        divided by ``T + 1``).
        """
        regrets = np.empty(self.game.tree.num_action_slots)
        synced_regrets(self.game.tree, self._state, regrets)
        return self._rows(regrets)

    @between_blocks
    def strategy_sums(self) -> dict[str, dict[Hashable, float]]:
        """``{key: {action: unnormalised average-strategy weight}}``, a fresh copy."""
        return self._rows(self._state.strategy_sum)

    def _rows(self, values: np.ndarray) -> dict[str, dict[Hashable, float]]:
        first = self.game.tree.infoset_first_slot
        return {
            key: {a: float(values[first[i] + j]) for j, a in enumerate(actions)}
            for i, (key, actions) in enumerate(zip(self.game.infoset_keys, self.game.infoset_actions))
        }

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.game.game!r}, iteration={self._iteration})"


class ThreadsOption:
    """The ``threads`` setting of the trainers whose passes run on several threads (mixed in
    before :class:`Trainer`): validated, settable between calls, never in checkpoints."""

    _threads: int | None
    _warm: bool

    @property
    def threads(self) -> int | None:
        """Threads the passes and :meth:`solve`'s evaluations run on (``None``: all of
        numba's); settable between calls. (A :class:`~cfrkit.PrunedCFR` pass runs on one
        whatever this says: there it sets the evaluations' threads.)

        Raises
        ------
        ValueError
            On setting anything but an integer from 1 to ``numba.config.NUMBA_NUM_THREADS``,
            or None.
        """
        return self._threads

    @threads.setter
    @between_blocks  # a pass in another thread reads the count and the per-thread buffers
    def threads(self, threads: int | None) -> None:
        threads = _threads.check_threads(threads)
        count = self._thread_count(threads)
        if count != self._thread_count(self._threads):
            self._warm = False  # another kernel: announce its compilation again
            self._use_threads(count)
        self._threads = threads

    def _thread_count(self, threads: int | None) -> int:
        """The threads the passes run on under the setting ``threads`` (1: the serial kernel)."""
        raise NotImplementedError

    def _use_threads(self, count: int) -> None:
        """Resize anything held per thread for ``count`` threads (nothing by default)."""


def normalise_rows(compiled: CompiledGame, weights: np.ndarray) -> np.ndarray:
    """Normalise non-negative ``weights`` per infoset; rows summing to 0 become uniform."""
    tree = compiled.tree
    totals = np.add.reduceat(weights, tree.infoset_first_slot) if weights.size else weights
    per_slot = np.repeat(totals, tree.infoset_num_actions)
    uniform = 1.0 / np.repeat(tree.infoset_num_actions, tree.infoset_num_actions)
    safe = np.where(per_slot > 0.0, per_slot, 1.0)
    return np.where(per_slot > 0.0, weights / safe, uniform)


#: Seeds are integers in ``[0, MAX_SEED)``: splitmix64 seeding reads 64 bits.
MAX_SEED = 2**64


def check_seed(seed: object) -> int:
    """A sampled trainer's seed: ``seed`` itself if it is an integer in ``[0, 2**64)``, 64 bits
    of operating-system entropy for ``None``, else a ValueError (a larger seed would silently
    repeat a smaller one's stream)."""
    if seed is None:
        # 64 bits of OS entropy (SeedSequence().entropy has 128, which the seeding would
        # truncate, and which a checkpoint could not be rebuilt from)
        return int(np.random.SeedSequence().generate_state(1, np.uint64)[0])
    value = integer_value(seed)
    if value is None or not 0 <= value < MAX_SEED:
        raise ValueError(f"seed must be an integer in [0, 2**64) or None, got {short_repr(seed)}")
    return value


def _optional_positive(name: str, value: object) -> float | None:
    """``value`` as a positive finite float, ``None`` as it is, else a ValueError."""
    if value is None:
        return None
    number = real_value(value)
    if number is None or not (math.isfinite(number) and number > 0.0):
        raise ValueError(f"{name} must be a positive number, got {short_repr(value)}")
    return number


def _progress_bar(name: str, total: int | None):
    try:
        from tqdm.auto import tqdm
    except ImportError:
        raise ImportError(
            "progress=True needs tqdm: pip install cfrkit[progress] (or pip install tqdm)"
        ) from None
    return tqdm(total=total, desc=name, unit="it", file=sys.stderr, dynamic_ncols=True,
                mininterval=0.2)


class _SolveRun:
    """The bookkeeping of one :meth:`Trainer.solve`: checks, timing, stop reasons.

    The check schedule depends on the run alone, not on the machine's speed, so the same
    trainer, game and seed check (and stop) at the same iterations everywhere: the next check
    comes after at least 10% more iterations, and after at least nine evaluations' worth of
    training, counted in node-visits, so evaluation is about a tenth of the time. Only a time
    limit, which caps the chunk to the time left, depends on the clock.
    """

    _GROWTH = 0.1  # at least 10% more iterations between checks
    _EVALUATIONS_PER_CHECK = 9.0  # training between checks, in evaluations' worth of visits
    # an evaluation in training node-visits (measured: evaluate() takes ~3x a training pass's
    # time per node, for each player and once more, plus 40-70 us of fixed cost)
    _EVALUATION_VISITS_PER_NODE = 3.0
    _EVALUATION_OVERHEAD = 15_000

    def __init__(self, trainer: Trainer, target, max_iterations, time_limit, bar) -> None:
        self.trainer = trainer
        self.target = target
        self.max_iterations = max_iterations
        self.time_limit = time_limit
        self.bar = bar
        self.start = time.perf_counter()
        self.first_iteration = trainer.iteration
        self.first_touched = trainer.nodes_touched
        self.iteration_limit = iteration_limit(trainer.rule)[0]  # a run without a budget stops there
        compiled = trainer.game
        self.evaluation_visits = (
            self._EVALUATION_VISITS_PER_NODE * (compiled.num_players + 1) * compiled.num_nodes
            + self._EVALUATION_OVERHEAD
        )
        self.training = 0.0
        self.evaluating = 0.0
        self.last_evaluation = 0.0
        self.stopped: str | None = None
        self.halve = compiled.num_players == 2 and compiled.zero_sum
        self.iterations: list[int] = []
        self.seconds: list[float] = []
        self.training_seconds: list[float] = []
        self.nash_conv: list[float] = []

    def done(self) -> int:
        return self.trainer.iteration - self.first_iteration

    def next_chunk(self) -> int:
        done = self.done()
        iteration = self.trainer.iteration
        if done == 0 and (iteration == 0 or self.time_limit is not None):
            chunk = 1  # the cost of an iteration (in visits, or in seconds) is not known yet
        else:
            # node-visits per iteration: this run's so far, or a continued trainer's before it
            touched, count = (self.trainer.nodes_touched - self.first_touched, done) if done \
                else (self.trainer.nodes_touched, iteration)
            visits = max(touched, 1) / count
            chunk = max(
                math.ceil(self._GROWTH * max(self.trainer.iteration, 1)),
                math.ceil(self._EVALUATIONS_PER_CHECK * self.evaluation_visits / visits),
            )
            if self.time_limit is not None and self.training > 0.0:
                left = self.time_limit - (time.perf_counter() - self.start) - self.last_evaluation
                chunk = min(chunk, max(1, int(done / self.training * left)))
        if self.max_iterations is not None:
            chunk = min(chunk, self.max_iterations - done)
        chunk = min(chunk, self.iteration_limit - self.trainer.iteration)
        return max(chunk, 1)

    def train(self, n: int) -> None:
        start = time.perf_counter()
        try:
            self.trainer.iterate(n)
        finally:
            self.training += time.perf_counter() - start
            if self.bar is not None:
                self.bar.update(self.done() - self.bar.n)

    def check(self) -> None:
        start = time.perf_counter()
        nash_conv = evaluate(self.trainer.game, self.trainer.average_policy(),
                             threads=self.trainer._threads).nash_conv
        self.last_evaluation = time.perf_counter() - start
        self.evaluating += self.last_evaluation
        self.iterations.append(self.trainer.iteration)
        self.seconds.append(time.perf_counter() - self.start)
        self.training_seconds.append(self.training)
        self.nash_conv.append(nash_conv)
        if self.bar is not None:
            # named with its iteration: the bar's count moves on while the next chunk trains
            self.bar.set_postfix_str(f"NashConv {nash_conv:.3g} at {self.trainer.iteration:,}")
        if self.target is not None and nash_conv <= self.target:
            self.stopped = "target"
        elif (self.max_iterations is not None and self.done() >= self.max_iterations) or (
            self.trainer.iteration >= self.iteration_limit
        ):
            self.stopped = "max_iterations"
        elif self.time_limit is not None and self.seconds[-1] >= self.time_limit:
            self.stopped = "time_limit"

    def record(self) -> SolveRecord:
        nash_conv = np.array(self.nash_conv, dtype=np.float64)
        return SolveRecord(
            trainer=type(self.trainer).__name__,
            game=repr(self.trainer.game.game),
            iterations=np.array(self.iterations, dtype=np.int64),
            seconds=np.array(self.seconds, dtype=np.float64),
            training_seconds=np.array(self.training_seconds, dtype=np.float64),
            nash_conv=nash_conv,
            exploitability=nash_conv / 2 if self.halve else None,
            stopped=self.stopped or "running",
            evaluation_seconds=self.evaluating,
        )
