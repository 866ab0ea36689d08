"""What every trainer shares: construction, ``iterate``, counters and policies.

A trainer is one *traversal* (a subclass: full, pruned or chance-sampled passes) and one
*regret rule* (:class:`~cfrkit.rules.RegretRule`, a value). Both are fixed at construction:
the buffers are sized for them, so they are read-only properties afterwards.
"""

from __future__ import annotations

import abc
import time
from collections.abc import Hashable, Mapping
from typing import NamedTuple

import numpy as np

from .._kernels.update import synced_regrets
from ..game import Game, InfoSet
from ..policy import Policy, policy_rows
from ..rules import RegretRule, kernel_schedule
from ..state import Scratch, TrainerState, new_scratch, new_state
from ..statics import Statics, statics_for
from ..tree import CompiledGame, compile_game

__all__ = ["Trainer"]

# iterate() runs blocks of iterations, each one kernel call of about this many seconds: long
# enough that the call overhead (~10 us) vanishes, short enough that counters and arrays agree
# often (every block boundary is a consistent state)
_BLOCK_SECONDS = 0.01
_MAX_BLOCK = 1 << 17


class Buffers(NamedTuple):
    """Which optional buffers a traversal uses."""

    queued: bool = False  # pruned or sampled passes (a queue, a visited list)
    sampling: bool = False  # chance sampling (alias tables, sample stamps)
    joint: bool = False  # one sampled walk for every player (per-node reach of each player)
    regret_pruning: bool = False  # pruning windows and value bounds
    bounds: bool = False  # value bounds and chance reach (regret-based or threshold pruning)


class Trainer(abc.ABC):
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
        returns.

    Attributes
    ----------
    game : CompiledGame
        The compiled game (``trainer.game.game`` is the object passed in).
    """

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
        self.game = compile_game(game)
        self._rule = rule
        self._alternating = check_bool("alternating", alternating)
        self._iteration = 0
        self._nodes_touched = 0
        self._block = 1
        tree = self.game.tree
        buffers = self._configure()
        # the current strategy over the decision slots, then the (constant) chance slots
        probs = np.concatenate([Policy.uniform(self.game).table, tree.chance_prob])
        locked = np.zeros(self.game.num_infosets, dtype=np.bool_)
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

    # -- the traversal, for subclasses ------------------------------------------------------------
    @abc.abstractmethod
    def _configure(self) -> Buffers:
        """Settle the traversal's switches against the compiled game and the rule (raising
        ValueError where a combination is unsound); return the optional buffers it uses.

        Called once, in ``__init__``, after :attr:`game` and :attr:`rule` are set.
        """

    @abc.abstractmethod
    def _run(self, schedule: np.ndarray) -> int:
        """Run ``schedule.shape[1]`` iterations in one kernel call; return the nodes touched."""

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
    def iterate(self, n: int = 1) -> "Trainer":
        """Run ``n`` iterations; return ``self`` for chaining.

        The iterations run inside numba in blocks of about 10 ms each (one kernel call per
        block); :attr:`iteration` and the arrays agree at every block boundary.
        """
        if isinstance(n, (bool, np.bool_)) or not isinstance(n, (int, np.integer)) or n < 0:
            raise ValueError(f"n must be a non-negative integer, got {n!r}")
        remaining = int(n)
        while remaining:
            count = min(self._block, remaining)
            schedule = kernel_schedule(self._rule, self._iteration + 1, count)
            start = time.perf_counter()
            touched = self._run(schedule)
            elapsed = time.perf_counter() - start
            self._iteration += count
            self._nodes_touched += int(touched)
            remaining -= count
            if count == self._block and elapsed < _BLOCK_SECONDS / 2:
                self._block = min(2 * self._block, _MAX_BLOCK)
            elif elapsed > 2 * _BLOCK_SECONDS and self._block > 1:
                self._block //= 2
        return self

    # -- reading ------------------------------------------------------------------------------
    def current_policy(self) -> Policy:
        """The strategy of the next iteration, from regret matching (a fresh copy)."""
        return Policy(self.game, self._state.probs[: self.game.tree.num_action_slots])

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

    def cumulative_regrets(self) -> dict[str, dict[Hashable, float]]:
        """``{key: {action: cumulative regret}}`` as of now, a fresh copy.

        Under a discounting rule this is the discounted sum (for Linear CFR, ``sum_t t r^t``
        divided by ``T + 1``).
        """
        regrets = np.empty(self.game.tree.num_action_slots)
        synced_regrets(self.game.tree, self._state, regrets)
        return self._rows(regrets)

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


def normalise_rows(compiled: CompiledGame, weights: np.ndarray) -> np.ndarray:
    """Normalise non-negative ``weights`` per infoset; rows summing to 0 become uniform."""
    tree = compiled.tree
    totals = np.add.reduceat(weights, tree.infoset_first_slot) if weights.size else weights
    per_slot = np.repeat(totals, tree.infoset_num_actions)
    uniform = 1.0 / np.repeat(tree.infoset_num_actions, tree.infoset_num_actions)
    safe = np.where(per_slot > 0.0, per_slot, 1.0)
    return np.where(per_slot > 0.0, weights / safe, uniform)


def check_bool(name: str, value: object) -> bool:
    """``value`` if it is a bool, else a ValueError naming the argument."""
    if not isinstance(value, (bool, np.bool_)):
        raise ValueError(f"{name} must be a bool, got {value!r}")
    return bool(value)
