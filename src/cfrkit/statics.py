"""Static per-game data the kernels read but never write, computed once per compiled game.

Alias tables for sampling chance outcomes, the layout chance-sampled passes walk, and the value
bounds and chance reach that pruning needs, depend on the tree alone; they are cached on the
:class:`~cfrkit.tree.CompiledGame`, so every trainer on one game shares the same arrays. A
trainer that needs no piece gets empty arrays in its place (the same numba types, so no second
compilation).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ._kernels import regret_pruning, tree_loops
from ._kernels.sampled_pass import (
    DECISION_ACTIONS,
    DECISION_FIRST_CHILD,
    DECISION_INFOSET,
    DECISION_POSITION,
    DECISION_SLOT,
    EDGE_FAMILY,
    EDGE_SLOT,
    INNER_PARENT,
    INNER_PLAYER,
    INNER_POSITION,
    INNER_SLOT,
)
from .tree import CHANCE, DECISION, TERMINAL, CompiledGame, GameTree
from .tree.check import level_starts

__all__ = [
    "ParallelLayout", "SamplingLayout", "Statics", "alias_tables", "parallel_layout",
    "pruning_bounds", "sampling_layout", "statics_for",
]


class SamplingLayout(NamedTuple):
    """The layout chance-sampled passes walk (see :func:`sampling_layout`): arrays indexed by
    position ``i`` (the node ``position_node[i]``), region ``r`` (by position), chance node by
    chance index ``k`` (their rank by node), chance slot by ``slot - A``, decision node by
    row; ``R`` regions, ``K`` chance nodes, ``M`` and ``D`` rows.

    A field of :class:`Statics` of its own, ``None`` for the trainers that do not sample: their
    kernels then see a small bundle (a bundle of 22 arrays measured 12% longer to compile for
    PrunedCFR than the bundle of 6 it needs).
    """

    position_node: np.ndarray  # int32[N]: the node at each position
    position_utility: np.ndarray  # float64[P, N]: as GameTree.utility, by position
    position_edge: np.ndarray  # int32[N, 2]: the edge into the node at each position (rows
    # of the edge loops; columns in sampled_pass.EDGE_*)
    region_start: np.ndarray  # int32[R+1]: region r is the positions [start[r], start[r+1])
    region_inner: np.ndarray  # int32[P+1, R+1]: the internal nodes of region r that player
    # p's pass needs are the rows [region_inner[p, r], region_inner[p, r + 1]) of inner (row
    # P: those any player needs, for the joint walk)
    inner: np.ndarray  # int32[M, 4]: internal nodes but the regions' first, above a decision
    # node of the player, in position order, player by player (columns in sampled_pass.INNER_*)
    region_values: np.ndarray  # int32[P, R]: player p's backward loop in region r runs over
    # the positions [region_values[p, r], end of r)
    region_decisions: np.ndarray  # int32[P, R+1]: player p's decision nodes in region r are
    # the rows [region_decisions[p, r], region_decisions[p, r + 1]) of decisions
    decisions: np.ndarray  # int32[D, 5]: decision nodes, grouped by player, in position order
    # within a player (columns in sampled_pass.DECISION_*)
    infoset_once: np.ndarray  # bool[S]: no sample reaches two histories of the infoset
    next_chance: np.ndarray  # int32[N+1]: chance index of the first chance node at or after i
    chance_position: np.ndarray  # int32[K+1]: position of each chance node, then N
    chance_slot_start: np.ndarray  # int32[K+1]: its chance slots are [start[k], start[k+1])
    chance_child_region: np.ndarray  # int32[C]: the region each chance slot's child starts
    chance_below_start: np.ndarray  # int32[C+2]: CSR offsets into chance_below, per chance
    # slot (and one more group, C: the chance nodes with no chance node above them)
    chance_below: np.ndarray  # int32[K]: the nearest chance nodes below each chance slot


class Statics(NamedTuple):
    """Per-game arrays for pruning and sampling (``N`` nodes, ``A`` decision slots,
    ``C`` chance slots, ``P`` players); empty (or ``None``) where the trainer does not use
    them."""

    alias_prob: np.ndarray  # float64[C]: Walker/Vose alias tables of the chance nodes
    alias_index: np.ndarray  # int32[C]
    max_increment: np.ndarray  # float64[A]: M(I, a), the most one pass can add to R(I, a)
    upper_bound: np.ndarray  # float64[P, N]: U_p, the most p can get below each node
    chance_reach: np.ndarray  # float64[N]: product of the chance probabilities on the path
    last_slot: np.ndarray  # int32[P, N]: each player's last slot on the path to each node
    layout: SamplingLayout | None  # chance-sampled passes' layout (statics_for(sampling))


def statics_for(compiled: CompiledGame, *, sampling: bool, pruning: bool) -> Statics:
    """The pieces a trainer needs: alias tables and the sampling layout if ``sampling``,
    bounds if ``pruning``."""
    alias_prob, alias_index = (
        alias_tables(compiled) if sampling else (np.zeros(0), np.zeros(0, dtype=np.int32))
    )
    bounds = pruning_bounds(compiled) if pruning else dict(
        max_increment=np.zeros(0), upper_bound=np.zeros((0, 0)),
        chance_reach=np.zeros(0), last_slot=np.zeros((0, 0), dtype=np.int32),
    )
    layout = SamplingLayout(**sampling_layout(compiled)) if sampling else None
    return Statics(alias_prob=alias_prob, alias_index=alias_index, **bounds, layout=layout)


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
    chance = np.flatnonzero(tree.node_kind == CHANCE)
    # a game deals from a few distributions at many chance nodes (three-player Leduc: 10,481
    # nodes, 2 distributions): each table is built once
    made: dict[bytes, tuple[np.ndarray, np.ndarray]] = {}
    for start, m in zip((tree.node_slot[chance] - offset).tolist(),
                        tree.node_num_children[chance].tolist()):
        probs = tree.chance_prob[start : start + m]
        key = probs.tobytes()
        table = made.get(key)
        if table is None:
            table = made[key] = _alias_table(probs)
        alias_prob[start : start + m], alias_index[start : start + m] = table
    return alias_prob, alias_index


def _alias_table(probs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Vose's alias table of one distribution: per outcome, the probability of keeping it and
    the outcome taken instead."""
    m = probs.shape[0]
    scaled = probs * m
    keep = np.ones(m)
    alias = np.arange(m, dtype=np.int32)
    small = [k for k in range(m) if scaled[k] < 1.0]
    large = [k for k in range(m) if scaled[k] >= 1.0]
    while small and large:
        k, big = small.pop(), large[-1]
        keep[k] = scaled[k]
        alias[k] = big
        scaled[big] -= 1.0 - scaled[k]
        if scaled[big] < 1.0:
            small.append(large.pop())
    for k in small + large:  # what is left is 1 up to rounding
        keep[k] = 1.0
    return keep, alias


def sampling_layout(compiled: CompiledGame) -> dict[str, np.ndarray]:
    """The tree reordered for chance-sampled passes: every chance outcome's subtree contiguous,
    breadth-first inside the parts without chance.

    A chance-sampled pass walks the whole tree except the subtrees of the outcomes it did not
    draw. Cut the tree at the chance edges into *regions*: the root's, and one per chance
    outcome, each the nodes reached from its first node without crossing another chance edge.
    Positions are given region by region: a region's nodes in breadth-first order, then, chance
    node by chance node and outcome by outcome, the regions of the subtree below each outcome
    (recursively). So every chance outcome's subtree is one contiguous range of positions, the
    regions tile the positions in order, and a sample's walk is a short list of whole regions,
    one per chance node it reaches (``_kernels/sampled_pass.py``): flat loops like the full
    pass's, with no queue, no test of a node's kind and no stamp per chance node. Each region
    also gets the rows of its internal nodes (``inner``: the forward loop needs no terminal)
    and of each player's decision nodes (``decisions``: the player's regrets, out of the edge
    loops).

    Breadth-first inside a region rather than depth-first everywhere: a node's children stay
    contiguous and its parent is a level back, so the backward loop sums a family in a register
    and neither loop waits on the node it just wrote (depth-first, a node's parent is usually
    the node before it; measured about 10% slower per pass on Kuhn and Leduc poker). And a
    region's breadth-first order is the tree's own order restricted to it, so the sums come in
    the order of the breadth-first walk earlier versions made: the same bits, unless one sample
    reaches an infoset in two regions in another order.

    The chance nodes keep their breadth-first numbering (chance index ``k``, their rank by node)
    and get, per chance outcome, the nearest chance nodes below it: a sample draws its outcomes
    in breadth-first order of the chance nodes it reaches (``chance.draw_sample``), as the
    breadth-first walk did, so a seed keeps drawing the same samples.

    ``infoset_once`` marks the infosets no sample can reach twice (see :func:`_met_once`): an
    alternating pass may update those on the spot.

    Computed level by level with numpy (no compilation), once per compiled game and cached on
    it.
    """
    cached = compiled._cache.get("sampling_layout")
    if cached is None:
        cached = _build_sampling_layout(compiled.tree)
        # left writable: read-only arrays would be a second numba type (see pruning_bounds)
        compiled._cache["sampling_layout"] = cached
    return cached


class ParallelLayout(NamedTuple):
    """How the parallel kernels cut the tree (see :func:`parallel_layout`): the *top* levels,
    run serially, then ``T`` tasks, each a contiguous range of every level from the split
    level down; and ``K`` chunks of each player's infosets.
    """

    top_forward_end: int  # the forward loop's top: nodes [1, top_forward_end) (above the split)
    top_backward_end: int  # the backward loop's top: the children [1, top_backward_end)
    task_bound: np.ndarray  # int64[R, T+1]: task t's nodes in the split level + r are
    # [task_bound[r, t], task_bound[r, t + 1])
    infoset_chunks: np.ndarray  # int64[P, K+1]: player p's chunk k is the infosets
    # [infoset_chunks[p, k], infoset_chunks[p, k + 1]) (empty chunks where p has few)


#: The parallel layout's split level: the first with at least this many nodes (its nodes are
#: grouped into the tasks, so it bounds how evenly the work can be shared).
SPLIT_MIN_NODES = 256
#: Tasks of the parallel passes, and chunks of each player's infosets: enough that any thread
#: count up to a dozen or so gets an even share (prange hands each thread a contiguous block).
PARALLEL_TASKS = 64


def parallel_layout(compiled: CompiledGame) -> ParallelLayout:
    """The parallel kernels' cut of the tree (``_kernels/parallel.py``), computed once per game
    with numpy and cached on it.

    The split level is the first with at least :data:`SPLIT_MIN_NODES` nodes (the last if none
    has); the levels above it are the *top*. Its nodes are cut into up to
    :data:`PARALLEL_TASKS` tasks of about equal subtree size. Breadth-first, the descendants of
    a contiguous range of one level are a contiguous range of each deeper level (a node's
    children are contiguous, and ordered as their parents), so a task is one range per level,
    found by running sums of the child counts. Each player's infosets are cut into up to as
    many chunks of about equal work (histories times actions, plus slots).
    """
    cached = compiled._cache.get("parallel_layout")
    if cached is None:
        cached = _build_parallel_layout(compiled.tree)
        compiled._cache["parallel_layout"] = cached
    return cached


def _even_cuts(work: np.ndarray, parts: int) -> np.ndarray:
    """Indices ``0 = c_0 < ... < c_k = len(work)`` (``k <= parts``) cutting ``work`` into
    contiguous pieces of about equal sum."""
    total = np.concatenate([[0.0], np.cumsum(work, dtype=np.float64)])
    if work.shape[0] == 0:
        return np.zeros(1, dtype=np.int64)
    targets = total[-1] * np.arange(1, parts) / parts
    inner = np.searchsorted(total, targets, side="left")
    return np.unique(np.concatenate([[0], inner, [work.shape[0]]])).astype(np.int64)


def _build_parallel_layout(tree: GameTree) -> ParallelLayout:
    levels = _levels(tree)
    sizes = [hi - lo for lo, hi in levels]
    split = next((k for k, size in enumerate(sizes) if size >= SPLIT_MIN_NODES), len(levels) - 1)
    split = max(split, 1)  # the root alone is never worth a task
    num_children = tree.node_num_children
    # every node boundary of the split level, followed down level by level
    rows = []
    if split < len(levels):
        lo, hi = levels[split]
        bounds = np.arange(lo, hi + 1, dtype=np.int64)
        rows.append(bounds)
        for level in range(split, len(levels) - 1):
            lo, hi = levels[level]
            running = np.zeros(hi - lo + 1, dtype=np.int64)
            np.cumsum(num_children[lo:hi], out=running[1:])
            bounds = levels[level + 1][0] + running[bounds - lo]
            rows.append(bounds)
    if rows:
        every = np.stack(rows)
        subtree = (every[:, 1:] - every[:, :-1]).sum(axis=0)
        cuts = _even_cuts(subtree, PARALLEL_TASKS)
        task_bound = np.ascontiguousarray(every[:, cuts])
    else:
        task_bound = np.zeros((0, 1), dtype=np.int64)
    num_nodes = tree.node_kind.shape[0]
    top_forward_end = levels[split][0] if split < len(levels) else num_nodes
    top_backward_end = levels[split + 1][0] if split + 1 < len(levels) else num_nodes
    # infoset chunks: work ~ histories x (actions + 1) for the sums, plus the slots
    histories = np.diff(tree.infoset_node_start).astype(np.float64)
    actions = tree.infoset_num_actions.astype(np.float64)
    work = histories * (actions + 1.0) + actions
    chunks = np.zeros((tree.num_players, PARALLEL_TASKS + 1), dtype=np.int64)
    for player in range(tree.num_players):
        first, end = tree.player_infoset_start[player : player + 2]
        cuts = first + _even_cuts(work[first:end], PARALLEL_TASKS)
        chunks[player, : cuts.shape[0]] = cuts
        chunks[player, cuts.shape[0] :] = end  # empty chunks at the end
    return ParallelLayout(
        top_forward_end=int(top_forward_end),
        top_backward_end=int(top_backward_end),
        task_bound=task_bound,
        infoset_chunks=chunks,
    )


def _rows(columns: dict[int, np.ndarray]) -> np.ndarray:
    """A C-contiguous int32 table whose column ``k`` is ``columns[k]``."""
    table = np.empty((len(next(iter(columns.values()))), len(columns)), dtype=np.int32)
    for k, column in columns.items():
        table[:, k] = column
    return table


def _levels(tree: GameTree) -> list[tuple[int, int]]:
    """The breadth-first levels as node ranges ``[lo, hi)``: a level's children are the next."""
    starts = level_starts(tree.node_num_children).tolist()
    return list(zip(starts[:-1], starts[1:]))


def _group_offsets(keys: np.ndarray, sizes: np.ndarray, num_groups: int) -> np.ndarray:
    """For items with group ``keys`` and ``sizes``: the sum of the sizes of the items before
    each one in its group (items in index order within a group)."""
    offsets = np.empty(keys.shape[0], dtype=np.int64)
    tree_loops.offsets_in_group(keys, sizes, np.zeros(num_groups, dtype=np.int64), offsets)
    return offsets


def _build_sampling_layout(tree: GameTree) -> dict[str, np.ndarray]:
    num_nodes = tree.node_kind.shape[0]
    num_slots = tree.num_action_slots
    num_chance_slots = tree.chance_prob.shape[0]
    parent, first_child, num_children = (
        tree.node_parent, tree.node_first_child, tree.node_num_children
    )
    size = np.ones(num_nodes, dtype=np.int64)
    tree_loops.subtree_sizes(parent, size)
    # region of each node: the chance slot of the nearest chance edge above it (C: none)
    region = np.full(num_nodes, num_chance_slots, dtype=np.int64)
    tree_loops.chance_regions(parent, tree.edge_player, tree.edge_slot, num_slots, region)
    region_size = np.bincount(region, minlength=num_chance_slots + 1)
    rank = _group_offsets(region, np.ones(num_nodes, dtype=np.int64), num_chance_slots + 1)
    # a chance slot's region lies in its chance node's; below a region come, in slot order,
    # the whole subtrees of its chance slots (chance slots are numbered by chance node)
    chance_nodes = np.flatnonzero(tree.node_kind == CHANCE)
    slot_node = np.repeat(chance_nodes, num_children[chance_nodes])
    slot_child = (first_child[slot_node] + np.arange(num_chance_slots)
                  - (tree.node_slot[slot_node] - num_slots))
    outer = region[slot_node]
    before = _group_offsets(outer, size[slot_child], num_chance_slots + 1)
    region_start = np.zeros(num_chance_slots + 1, dtype=np.int64)  # the root's region: 0
    tree_loops.region_starts(tree.edge_player, tree.edge_slot, num_slots, outer, region_size,
                             before, region_start)
    position = region_start[region] + rank
    node = np.empty(num_nodes, dtype=np.int32)
    node[position] = np.arange(num_nodes, dtype=np.int32)
    # regions renumbered by position: sorted by first position they tile [0, N)
    by_start = np.argsort(region_start, kind="stable")
    region_rank = np.empty(num_chance_slots + 1, dtype=np.int64)
    region_rank[by_start] = np.arange(num_chance_slots + 1)
    starts = np.append(region_start[by_start], num_nodes)
    # decision nodes, grouped by player, by position within a player
    decisions = np.flatnonzero(tree.node_kind == DECISION)
    players = tree.node_player[decisions]
    decisions = decisions[np.lexsort((position[decisions], players))]
    players = tree.node_player[decisions]
    region_decisions = np.empty((tree.num_players, num_chance_slots + 2), dtype=np.int32)
    for p in range(tree.num_players):
        lo, hi = np.searchsorted(players, [p, p + 1])
        region_decisions[p] = lo + np.searchsorted(position[decisions[lo:hi]], starts)
    # what each player's pass needs: reach above its decision nodes, values below them
    above, below = _around_decisions(tree)
    # internal nodes but the regions' first (whose reach comes from a chance node), by position
    internal = node[np.flatnonzero(tree.node_kind[node] != TERMINAL)]
    internal = internal[tree.edge_player[internal] >= 0]
    groups = [internal[above[p, internal]] for p in range(tree.num_players)]
    groups.append(internal[above[:, internal].any(axis=0)])
    inner = np.concatenate(groups)
    region_inner = np.empty((tree.num_players + 1, num_chance_slots + 2), dtype=np.int32)
    offset = 0
    for p, group in enumerate(groups):
        region_inner[p] = offset + np.searchsorted(position[group], starts)
        offset += group.shape[0]
    # the backward loop of a region: whole when the region hangs below a decision node of the
    # player (its value is read), else from the first child of its first decision node of the
    # player (the edges after are exactly those from nodes at or below one), else empty
    region_values = np.empty((tree.num_players, num_chance_slots + 1), dtype=np.int32)
    first_nodes = node[starts[:-1]]
    hangs = np.zeros((tree.num_players, first_nodes.shape[0]), dtype=np.bool_)
    hangs[:, 1:] = below[:, parent[first_nodes[1:]]]  # (region 0 is the root's)
    for p in range(tree.num_players):
        lo, hi = np.searchsorted(players, [p, p + 1])
        mine = position[decisions[lo:hi]]  # in position order
        first = np.searchsorted(mine, starts[:-1])  # the first at or after each region's start
        has = first < mine.shape[0]
        has[has] = mine[first[has]] < starts[1:][has]  # ... and inside the region
        start = starts[1:].copy()
        start[has] = position[first_child[decisions[lo:hi][first[has]]]]
        region_values[p] = np.where(hangs[p], starts[:-1] + 1, start)
    chance_position = np.append(position[chance_nodes], num_nodes).astype(np.int32)
    by_position = np.argsort(chance_position[:-1], kind="stable")
    first_at_or_after = np.searchsorted(
        chance_position[:-1][by_position], np.arange(num_nodes + 1), side="left"
    )
    num_chance = chance_nodes.shape[0]
    next_chance = np.append(by_position, num_chance)[first_at_or_after].astype(np.int32)
    below = region[chance_nodes]
    chance_below = np.argsort(below, kind="stable").astype(np.int32)  # by chance index in a group
    chance_below_start = np.zeros(num_chance_slots + 2, dtype=np.int32)
    np.cumsum(np.bincount(below, minlength=num_chance_slots + 1), out=chance_below_start[1:])
    return dict(
        position_node=node,
        position_utility=np.ascontiguousarray(tree.utility[:, node]),
        position_edge=_rows(
            {EDGE_SLOT: tree.edge_slot[node],
             EDGE_FAMILY: np.where(tree.edge_last[node], position[np.maximum(parent[node], 0)], -1)}
        ),
        region_start=starts.astype(np.int32),
        region_inner=region_inner,
        inner=_rows(
            {INNER_POSITION: position[inner], INNER_PARENT: position[parent[inner]],
             INNER_SLOT: tree.edge_slot[inner], INNER_PLAYER: tree.edge_player[inner]}
        ),
        region_values=region_values,
        region_decisions=region_decisions,
        decisions=_rows(
            {DECISION_POSITION: position[decisions],
             DECISION_FIRST_CHILD: position[first_child[decisions]],
             DECISION_SLOT: tree.node_slot[decisions],
             DECISION_ACTIONS: num_children[decisions],
             DECISION_INFOSET: tree.node_infoset[decisions]}
        ),
        infoset_once=_met_once(tree, size),
        next_chance=next_chance,
        chance_position=chance_position,
        chance_slot_start=np.append(
            tree.node_slot[chance_nodes] - num_slots, num_chance_slots
        ).astype(np.int32),
        chance_child_region=region_rank[:-1].astype(np.int32),
        chance_below_start=chance_below_start,
        chance_below=chance_below,
    )


def _around_decisions(tree: GameTree) -> tuple:
    """``(above, below)``, bool[P, N]: whether a node is, or has below it, a decision node of
    player ``p``; whether it is, or hangs below, one."""
    num_nodes = tree.node_kind.shape[0]
    above = np.zeros((tree.num_players, num_nodes), dtype=np.bool_)
    decision = np.flatnonzero(tree.node_kind == DECISION)
    above[tree.node_player[decision], decision] = True
    below = above.copy()
    tree_loops.around_decisions(tree.node_parent, above, below)
    return above, below


def _met_once(tree: GameTree, size: np.ndarray) -> np.ndarray:
    """Whether no chance sample reaches two histories of each infoset.

    A sample reaches two nodes together only if the paths to them part at a decision node
    (where every action is walked; at a chance node only one outcome is drawn). Among the
    histories of one infoset in depth-first pre-order, the lowest common ancestor of any two
    is that of some two consecutive ones (the shallowest of the consecutive pairs' between
    them), so checking consecutive pairs is enough. Conservative where an outcome has
    probability 0 (it is never drawn, but the infoset is still marked).
    """
    num_nodes = tree.node_kind.shape[0]
    preorder = np.zeros(num_nodes, dtype=np.int64)
    depth = np.zeros(num_nodes, dtype=np.int64)
    tree_loops.preorder_and_depth(tree.node_first_child, tree.node_num_children, size, preorder,
                                  depth)
    decisions = np.flatnonzero(tree.node_kind == DECISION)
    infoset = tree.node_infoset[decisions]
    decisions = decisions[np.lexsort((preorder[decisions], infoset))]
    infoset = tree.node_infoset[decisions]
    pair = infoset[1:] == infoset[:-1]
    u, v = decisions[:-1][pair], decisions[1:][pair]
    tree_loops.common_ancestors(tree.node_parent, depth, u, v)
    once = np.ones(tree.infoset_player.shape[0], dtype=np.bool_)
    once[infoset[1:][pair][tree.node_kind[u] == DECISION]] = False
    return once
