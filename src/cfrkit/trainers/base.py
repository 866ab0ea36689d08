"""State and read-out shared by every trainer."""

from __future__ import annotations

import abc
from collections.abc import Hashable, Mapping

import numpy as np

from ..game import Game, InfoSet
from ..policy import Policy
from ..tree import CompiledGame, compile_game

__all__ = ["Trainer"]


class Trainer(abc.ABC):
    """A regret minimiser over a compiled game: its arrays, its counters and its policies.

    Subclasses implement :meth:`_run`, one kernel call for many iterations.

    Attributes
    ----------
    game : CompiledGame
        The compiled game (``trainer.game.game`` is the object passed in).
    iteration : int
        Iterations completed.
    nodes_touched : int
        Tree nodes the kernels have visited, summed over all passes: the work done, for
        comparing trainers and measuring pruning.
    """

    def __init__(self, game: Game | CompiledGame) -> None:
        self.game = compile_game(game)
        tree = self.game.tree
        num_slots = tree.num_action_slots
        self.iteration = 0
        self.nodes_touched = 0
        # the current strategy over the decision slots, then the (constant) chance slots
        self._probs = np.concatenate([Policy.uniform(self.game).table, tree.chance_prob])
        self._regret = np.zeros(num_slots)
        self._strategy_sum = np.zeros(num_slots)
        # kernel workspaces, allocated once
        self._reach = np.zeros(tree.node_kind.shape[0])
        self._value = tree.utility.copy()  # terminal entries stay fixed, internal ones are rewritten
        self._own_reach = np.zeros(tree.infoset_player.shape[0])

    @property
    def infosets(self) -> Mapping[str, InfoSet]:
        """Infoset key -> :class:`InfoSet` record (key, player, actions)."""
        return self.game.infosets

    def iterate(self, n: int = 1) -> "Trainer":
        """Run ``n`` iterations in a single kernel call; return ``self`` for chaining."""
        if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 0:
            raise ValueError(f"n must be a non-negative integer, got {n!r}")
        if n:
            self.nodes_touched += int(self._run(int(n)))
            self.iteration += int(n)
        return self

    @abc.abstractmethod
    def _run(self, n: int) -> int:
        """Run ``n`` iterations; return the number of nodes visited."""

    def current_policy(self) -> Policy:
        """The strategy of the next iteration, from regret matching (a fresh copy)."""
        return Policy(self.game, self._probs[: self.game.tree.num_action_slots])

    def average_policy(self) -> Policy:
        """The average strategy, the one that converges to equilibrium (a fresh copy).

        ``sum_t w_t pi_i^t(I) sigma^t(I, a)`` normalised per infoset, where ``pi_i^t(I)`` is
        the acting player's own reach; uniform at infosets whose weights are all zero.
        """
        return Policy(self.game, normalise_rows(self.game, self._strategy_sum))

    def cumulative_regrets(self) -> dict[str, dict[Hashable, float]]:
        """``{key: {action: cumulative regret}}``, a fresh copy."""
        return self._rows(self._regret)

    def strategy_sums(self) -> dict[str, dict[Hashable, float]]:
        """``{key: {action: unnormalised average-strategy weight}}``, a fresh copy."""
        return self._rows(self._strategy_sum)

    def _rows(self, values: np.ndarray) -> dict[str, dict[Hashable, float]]:
        first = self.game.tree.infoset_first_slot
        return {
            key: {a: float(values[first[i] + j]) for j, a in enumerate(actions)}
            for i, (key, actions) in enumerate(zip(self.game.infoset_keys, self.game.infoset_actions))
        }

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.game.game!r}, iteration={self.iteration})"


def normalise_rows(compiled: CompiledGame, weights: np.ndarray) -> np.ndarray:
    """Normalise non-negative ``weights`` per infoset; rows summing to 0 become uniform."""
    tree = compiled.tree
    totals = np.add.reduceat(weights, tree.infoset_first_slot) if weights.size else weights
    per_slot = np.repeat(totals, tree.infoset_num_actions)
    uniform = 1.0 / np.repeat(tree.infoset_num_actions, tree.infoset_num_actions)
    safe = np.where(per_slot > 0.0, per_slot, 1.0)
    return np.where(per_slot > 0.0, weights / safe, uniform)
