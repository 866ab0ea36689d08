"""Static per-game data the kernels read but never write, computed once per compiled game.

Alias tables for sampling chance outcomes, and the value bounds and chance reach that pruning
needs, depend on the tree alone; they are cached on the :class:`~cfrkit.tree.CompiledGame`, so
every trainer on one game shares the same arrays. A trainer that needs no piece gets empty
arrays in its place (the same numba types, so no second compilation).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ._kernels import regret_pruning
from .tree import CHANCE, CompiledGame, GameTree

__all__ = ["Statics", "alias_tables", "pruning_bounds", "statics_for"]


class Statics(NamedTuple):
    """Per-game arrays for pruning and sampling (``N`` nodes, ``A`` decision slots,
    ``C`` chance slots, ``P`` players); empty where the trainer does not use them."""

    alias_prob: np.ndarray  # float64[C]: Walker/Vose alias tables of the chance nodes
    alias_index: np.ndarray  # int32[C]
    max_increment: np.ndarray  # float64[A]: M(I, a), the most one pass can add to R(I, a)
    upper_bound: np.ndarray  # float64[P, N]: U_p, the most p can get below each node
    chance_reach: np.ndarray  # float64[N]: product of the chance probabilities on the path
    last_slot: np.ndarray  # int32[P, N]: each player's last slot on the path to each node


def statics_for(compiled: CompiledGame, *, sampling: bool, pruning: bool) -> Statics:
    """The pieces a trainer needs: alias tables if ``sampling``, bounds if ``pruning``."""
    alias_prob, alias_index = (
        alias_tables(compiled) if sampling else (np.zeros(0), np.zeros(0, dtype=np.int32))
    )
    bounds = pruning_bounds(compiled) if pruning else dict(
        max_increment=np.zeros(0), upper_bound=np.zeros((0, 0)),
        chance_reach=np.zeros(0), last_slot=np.zeros((0, 0), dtype=np.int32),
    )
    return Statics(alias_prob=alias_prob, alias_index=alias_index, **bounds)


def pruning_bounds(compiled: CompiledGame) -> dict[str, np.ndarray]:
    """Value bounds, chance reach, each player's last slot per node and the per-slot bound of
    one pass's regret increment (see ``_kernels/regret_pruning.py``)."""
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
        # compilation of the kernels for the trainers that use them
        compiled._cache["pruning_bounds"] = cached
    return cached


def alias_tables(compiled: CompiledGame) -> tuple[np.ndarray, np.ndarray]:
    """Walker's alias tables (Vose's construction) for every chance node, over the chance slots.

    Sampling outcome ``k`` uniformly from ``m`` and keeping it with probability
    ``alias_prob[s + k]`` (else taking ``alias_index[s + k]``) draws each outcome with its
    chance probability, in O(1) whatever ``m``.
    """
    cached = compiled._cache.get("alias_tables")
    if cached is None:
        cached = _build_alias_tables(compiled.tree)
        compiled._cache["alias_tables"] = cached
    return cached


def _build_alias_tables(tree: GameTree) -> tuple[np.ndarray, np.ndarray]:
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
