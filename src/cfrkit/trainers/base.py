"""State and read-out shared by every trainer."""

from __future__ import annotations

import abc
from collections.abc import Hashable, Mapping

import numpy as np

from .._kernels import regret_pruning
from .._kernels.traverse import Config, Workspace, cfr_iterations
from ..game import Game, InfoSet
from ..policy import Policy, policy_rows
from ..tree import CHANCE, CompiledGame, compile_game

__all__ = ["Trainer"]


class Trainer(abc.ABC):
    """A regret minimiser over a compiled game: its arrays, its counters and its policies.

    Subclasses choose the traversal's switches (:meth:`_config`); every trainer runs the same
    kernel family, one kernel call per :meth:`iterate`.

    Parameters
    ----------
    game : Game or CompiledGame
        The game to solve.
    fixed : Policy or Mapping, optional
        ``{infoset key: {action: probability}}`` (or a sequence of probabilities in action
        order) for infosets whose strategy is held fixed -- node locking. The other infosets
        learn a best reply to them; the fixed rows appear unchanged in every policy the trainer
        returns.

    Attributes
    ----------
    game : CompiledGame
        The compiled game (``trainer.game.game`` is the object passed in).
    iteration : int
        Iterations completed.
    nodes_touched : int
        Tree nodes the kernels have read or written, summed over all passes: the work done,
        for comparing trainers and measuring pruning. A vanilla iteration touches every node
        once per player.
    """

    def __init__(self, game: Game | CompiledGame, *, fixed: Policy | Mapping | None = None) -> None:
        self.game = compile_game(game)
        self.iteration = 0
        self.nodes_touched = 0
        tree = self.game.tree
        config = self._config()
        num_nodes = tree.node_kind.shape[0]
        num_infosets = tree.infoset_player.shape[0]
        num_players = tree.num_players
        # the current strategy over the decision slots, then the (constant) chance slots
        probs = np.concatenate([Policy.uniform(self.game).table, tree.chance_prob])
        locked = np.zeros(num_infosets, dtype=np.bool_)
        self._fixed_rows = {} if fixed is None else policy_rows(self.game, fixed)
        for infoset, row in self._fixed_rows.items():
            start = tree.infoset_first_slot[infoset]
            probs[start : start + row.shape[0]] = row
            locked[infoset] = True

        def buffer(used: bool, shape: tuple, dtype=np.float64, fill=0) -> np.ndarray:
            """A workspace array, or an empty one when the trainer does not use it."""
            return np.full(shape if used else (0,) * len(shape), fill, dtype=dtype)

        pruning = config.regret_pruning
        sampling = config.sample_chance
        num_slots = tree.num_action_slots
        alias_prob, alias_index = (
            alias_tables(tree) if sampling else (np.zeros(0), np.zeros(0, dtype=np.int32))
        )
        self._ws = Workspace(
            probs=probs,
            regret=np.zeros(num_slots),
            strategy_sum=np.zeros(num_slots),
            locked=locked,
            reach=np.zeros(num_nodes),
            value=tree.utility.copy(),  # terminal entries stay fixed, internal ones are rewritten
            own_reach=np.zeros(num_infosets),
            joint_reach=buffer(
                sampling and not config.alternating and not config.sample_per_player,
                (num_nodes, num_players),
            ),
            baseline=np.zeros(num_infosets),
            queue=buffer(config.dynamic, (num_nodes,), np.int32),
            accumulations=np.zeros(num_players, dtype=np.int64),
            window=buffer(pruning, (num_slots,), np.int8),
            bound_extra=buffer(pruning, (num_slots,)),
            **(pruning_bounds(self.game) if pruning else dict(
                max_increment=np.zeros(0), upper_bound=np.zeros((0, 0)),
                chance_reach=np.zeros(0), last_slot=np.zeros((0, 0), dtype=np.int32),
            )),
            snapshot=buffer(pruning, (num_players, num_nodes)),
            scratch=buffer(pruning, (num_nodes,)),
            subtree_queue=buffer(pruning, (num_nodes,), np.int32),
            pending=buffer(pruning, (num_players, num_slots), np.int32),
            pending_count=np.zeros(num_players, dtype=np.int64),
            visited=buffer(config.dynamic, (num_infosets,), np.int32),
            visited_stamp=buffer(config.dynamic, (num_infosets,), np.int64, -1),
            visited_count=np.zeros(2, dtype=np.int64),
            sampled_child=buffer(sampling, (num_nodes,), np.int32),
            sample_stamp=buffer(sampling, (num_nodes,), np.int64, -1),
            sample_id=np.zeros(1, dtype=np.int64),
            alias_prob=alias_prob,
            alias_index=alias_index,
            rng=np.zeros(4, dtype=np.uint64),
        )

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
    def _config(self) -> Config:
        """The traversal switches of this trainer."""

    def _run(self, n: int) -> int:
        """Run ``n`` iterations in one kernel call; return the number of nodes touched."""
        config = self._config()
        return cfr_iterations(
            self.game.tree, self._ws, n, config.alternating, config.dynamic,
            config.regret_pruning, config.sample_chance, config.sample_per_player,
            config.threshold,
        )

    def current_policy(self) -> Policy:
        """The strategy of the next iteration, from regret matching (a fresh copy)."""
        return Policy(self.game, self._ws.probs[: self.game.tree.num_action_slots])

    def average_policy(self) -> Policy:
        """The average strategy, the one that converges to equilibrium (a fresh copy).

        ``sum_t w_t pi_i^t(I) sigma^t(I, a)`` normalised per infoset, where ``pi_i^t(I)`` is
        the acting player's own reach; uniform at infosets whose weights are all zero. Fixed
        infosets show their fixed rows.
        """
        table = normalise_rows(self.game, self._ws.strategy_sum)
        for infoset, row in self._fixed_rows.items():
            start = self.game.tree.infoset_first_slot[infoset]
            table[start : start + row.shape[0]] = row
        return Policy(self.game, table)

    def cumulative_regrets(self) -> dict[str, dict[Hashable, float]]:
        """``{key: {action: cumulative regret}}``, a fresh copy."""
        return self._rows(self._ws.regret)

    def strategy_sums(self) -> dict[str, dict[Hashable, float]]:
        """``{key: {action: unnormalised average-strategy weight}}``, a fresh copy."""
        return self._rows(self._ws.strategy_sum)

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


def pruning_bounds(compiled: CompiledGame) -> dict[str, np.ndarray]:
    """The static data of regret-based pruning, computed once per compiled game.

    Upper value bounds, chance reach, each player's last slot per node and the per-slot bound
    of one pass's regret increment depend on the tree alone; the kernels only read them, so
    every trainer on the game shares the same arrays.
    """
    cached = compiled._cache.get("pruning_bounds")
    if cached is None:
        tree = compiled.tree
        shape = (tree.num_players, compiled.num_nodes)
        cached = dict(
            max_increment=np.zeros(tree.num_action_slots),
            upper_bound=np.zeros(shape),
            chance_reach=np.zeros(compiled.num_nodes),
            last_slot=np.full(shape, -1, dtype=np.int32),
        )
        regret_pruning.prepare(
            tree, cached["upper_bound"], np.zeros(shape), cached["chance_reach"],
            cached["last_slot"], cached["max_increment"],
        )
        # left writable: read-only arrays would be a second numba type, and a second
        # compilation of the whole kernel for the trainers that use them
        compiled._cache["pruning_bounds"] = cached
    return cached


def alias_tables(tree) -> tuple[np.ndarray, np.ndarray]:
    """Walker's alias tables (Vose's construction) for every chance node, over the chance slots.

    Sampling outcome ``k`` uniformly from ``m`` and keeping it with probability
    ``alias_prob[s + k]`` (else taking ``alias_index[s + k]``) draws each outcome with its
    chance probability, in O(1) whatever ``m``.
    """
    num_chance = tree.chance_prob.shape[0]
    alias_prob = np.ones(num_chance)
    alias_index = np.zeros(num_chance, dtype=np.int32)
    offset = tree.num_action_slots
    for n in np.flatnonzero(tree.node_kind == CHANCE):
        start = tree.node_slot[n] - offset
        m = int(tree.node_num_children[n])
        scaled = tree.chance_prob[start : start + m] * m
        small = [k for k in range(m) if scaled[k] < 1.0]
        large = [k for k in range(m) if scaled[k] >= 1.0]
        alias_index[start : start + m] = np.arange(m)
        while small and large:
            k, big = small.pop(), large[-1]
            alias_prob[start + k] = scaled[k]
            alias_index[start + k] = big
            scaled[big] -= 1.0 - scaled[k]
            if scaled[big] < 1.0:
                small.append(large.pop())
        for k in small + large:  # what is left is 1 up to rounding
            alias_prob[start + k] = 1.0
    return alias_prob, alias_index


def check_bool(name: str, value: object) -> bool:
    """``value`` if it is a bool, else a ValueError naming the argument."""
    if not isinstance(value, (bool, np.bool_)):
        raise ValueError(f"{name} must be a bool, got {value!r}")
    return bool(value)
