"""What a :class:`~cfrkit.tree.GameTree` must be for the kernels to run on it: the layout
:func:`~cfrkit.tree.layout.flatten` makes, checked array by array.

The kernels index without bounds checks and trust the layout: children after their parent,
in one contiguous block per node, infosets numbered after the infoset of their player's
previous action, slots partitioned among infosets and chance nodes. A tree that breaks any of
this -- from a hand-made or damaged file, or arrays put together by hand -- can send a sampled
pass round a cycle, a kernel past the end of an array or a regret-pruning walk into an endless
loop. :func:`tree_problem` finds any such break in numpy passes over whole arrays and names
it, so that loading the file or building the :class:`~cfrkit.tree.CompiledGame` refuses it
instead.

Every derived array (children, parents, edges, slots, the infoset lists and offsets, each
infoset's previous own action) is recomputed from the node kinds, child counts, players and
infosets, and must equal what the tree holds.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from ..limits import MAX_ABS_UTILITY
from .walk import CHANCE, DECISION, PROB_TOLERANCE, TERMINAL

__all__ = ["level_starts", "previous_own_slots", "tree_problem"]

_KINDS = (TERMINAL, CHANCE, DECISION)

#: Index arrays and the range ``[low, high)`` each must stay in, the bounds in the tree's
#: sizes (``slots``: decision and chance slots together).
_RANGES = (
    ("node_kind", min(_KINDS), "kinds"), ("node_player", -1, "P"), ("node_infoset", -1, "S"),
    ("node_slot", -1, "slots"),
    ("node_first_child", -1, "N"), ("node_num_children", 0, "N"), ("node_parent", -1, "N"),
    ("edge_slot", -1, "slots"), ("edge_player", -2, "P"), ("internal_nodes", 0, "N"),
    ("infoset_player", 0, "P"), ("infoset_first_slot", 0, "A"),
    ("infoset_num_actions", 1, "A+1"), ("infoset_parent", -1, "S"),
    ("infoset_parent_slot", -1, "A"), ("infoset_node_start", 0, "D+1"),
    ("infoset_nodes", 0, "N"), ("player_infoset_start", 0, "S+1"), ("slot_infoset", 0, "S"),
)


def tree_problem(t: Mapping[str, np.ndarray], sizes: Mapping[str, int]) -> str | None:
    """The first way the arrays ``t`` (by :class:`GameTree` field name, dtypes and shapes
    already checked against the schema) differ from a tree :func:`flatten` could make, as a
    short phrase; ``None`` if they do not. ``sizes`` are the tree's sizes (:func:`tree_sizes`).
    """
    n, a, c = sizes["N"], sizes["A"], sizes["C"]
    if n < 1:
        return "the tree has no nodes"
    bounds = {**sizes, "slots": a + c, "A+1": a + 1, "D+1": sizes["D"] + 1,
              "S+1": sizes["S"] + 1, "kinds": max(_KINDS) + 1}
    for field, low, size in _RANGES:
        high = bounds[size]
        array = t[field]
        if array.size and (int(array.min()) < low or int(array.max()) >= high):
            return f"array {field!r} holds values outside [{low}, {high})"
    probabilities = t["chance_prob"]
    # compile_game takes an outcome a rounding above 1 when its node's sum is within the
    # tolerance of 1 (the sums are checked below)
    if not np.all((probabilities >= 0.0) & (probabilities <= 1.0 + PROB_TOLERANCE)):  # NaN too
        return "array 'chance_prob' holds values outside [0, 1]"
    utility = t["utility"]
    # min and max are NaN if any entry is, and NaN fails both comparisons
    largest = MAX_ABS_UTILITY
    if utility.size and not (-largest <= utility.min() and utility.max() <= largest):
        return f"array 'utility' holds values beyond +-{MAX_ABS_UTILITY:.0e} or not finite"
    return _nodes_problem(t, n) or _slots_problem(t, sizes) or _infosets_problem(t, sizes)


def _nodes_problem(t: Mapping[str, np.ndarray], n: int) -> str | None:
    """Kinds, children, parents and edges: a tree numbered breadth first from the root."""
    kind, count = t["node_kind"], t["node_num_children"]
    player, infoset = t["node_player"], t["node_infoset"]
    internal = count > 0
    if np.any(internal != (kind != TERMINAL)):
        return "a terminal node has children, or a chance or decision node has none"
    decision = kind == DECISION
    if np.any(decision != (player >= 0)) or np.any(decision != (infoset >= 0)):
        return "a node's player or infoset does not match its kind"
    if np.any(~internal & ((t["node_slot"] != -1) | (t["node_first_child"] != -1))):
        return "a terminal node has a slot or a first child"
    internal_nodes = np.flatnonzero(internal).astype(np.int32)
    if not np.array_equal(t["internal_nodes"], internal_nodes):
        return "array 'internal_nodes' does not list the chance and decision nodes"
    # breadth first: the internal nodes' children, in node order, are nodes 1, 2, ..., n - 1,
    # and each node's come after it
    counts = count[internal_nodes]
    if int(counts.sum(dtype=np.int64)) != n - 1:
        return "the child counts do not add up to the nodes below the root"
    first = np.ones(len(internal_nodes), dtype=np.int32)
    np.cumsum(counts[:-1], out=first[1:])
    first[1:] += 1
    if np.any(t["node_first_child"][internal_nodes] != first) or np.any(first <= internal_nodes):
        return "the nodes are not a tree numbered breadth first (node_first_child)"
    parent = t["node_parent"]
    if parent[0] != -1 or not np.array_equal(parent[1:], np.repeat(internal_nodes, counts)):
        return "array 'node_parent' does not match the children"
    up = parent[1:]
    rank = np.arange(1, n, dtype=np.int32) - t["node_first_child"][up]
    edges_match = (
        t["edge_slot"][0] == -1 and t["edge_player"][0] == -2 and not t["edge_last"][0]
        and np.array_equal(t["edge_slot"][1:], t["node_slot"][up] + rank)
        and np.array_equal(t["edge_player"][1:], player[up])
        and np.array_equal(t["edge_last"][1:], rank == count[up] - 1)
    )
    if not edges_match:
        return "the edge arrays do not match the nodes"
    if any(np.count_nonzero(row.take(internal_nodes)) for row in t["utility"]):
        return "a chance or decision node has a utility"
    return None


def _slots_problem(t: Mapping[str, np.ndarray], sizes: Mapping[str, int]) -> str | None:
    """Slots: the infosets' actions, then the chance nodes' outcomes, each a block of its own."""
    a, c = sizes["A"], sizes["C"]
    num_actions = t["infoset_num_actions"].astype(np.int64)
    first_slot = np.zeros(len(num_actions), dtype=np.int64)
    np.cumsum(num_actions[:-1], out=first_slot[1:])
    if int(num_actions.sum()) != a or not np.array_equal(t["infoset_first_slot"], first_slot):
        return "the infosets' action slots are not laid out one after another"
    if not np.array_equal(t["slot_infoset"], np.repeat(np.arange(len(num_actions)), num_actions)):
        return "array 'slot_infoset' does not match the infosets' slots"
    kind, count, slot = t["node_kind"], t["node_num_children"], t["node_slot"]
    decision = np.flatnonzero(kind == DECISION)
    infoset = t["node_infoset"][decision]
    if (np.any(t["infoset_player"][infoset] != t["node_player"][decision])
            or np.any(slot[decision] != first_slot[infoset])
            or np.any(count[decision] != num_actions[infoset])):
        return "a decision node's player, slot or action count differs from its infoset's"
    chance = np.flatnonzero(kind == CHANCE)
    outcomes = count[chance].astype(np.int64)
    chance_slot = np.full(len(chance), a, dtype=np.int64)
    np.cumsum(outcomes[:-1], out=chance_slot[1:])
    chance_slot[1:] += a
    if int(outcomes.sum()) != c or not np.array_equal(slot[chance], chance_slot):
        return "the chance nodes' outcome slots are not laid out one after another"
    if len(chance):
        # compile_game's test is an exact sum (math.fsum) within PROB_TOLERANCE; numpy's
        # rounded sum of m terms at most 1 is within m units in the last place of it
        totals = np.add.reduceat(t["chance_prob"], chance_slot - a)
        slack = PROB_TOLERANCE + outcomes * np.finfo(np.float64).eps
        if np.any(np.abs(totals - 1.0) > slack):
            return "a chance node's probabilities do not sum to 1"
    return None


def _infosets_problem(t: Mapping[str, np.ndarray], sizes: Mapping[str, int]) -> str | None:
    """Each infoset's list of histories, the players' blocks of infosets, and perfect recall."""
    s, p = sizes["S"], sizes["P"]
    decision = np.flatnonzero(t["node_kind"] == DECISION)
    infoset = t["node_infoset"][decision]
    start = np.zeros(s + 1, dtype=np.int64)
    np.cumsum(np.bincount(infoset, minlength=s), out=start[1:])
    if not np.array_equal(t["infoset_node_start"], start) or np.any(np.diff(start) == 0):
        return "array 'infoset_node_start' does not count each infoset's histories"
    # each infoset's histories in node order, so all D decision nodes once (no sort needed)
    listed = t["infoset_nodes"]
    owner = np.repeat(np.arange(s, dtype=np.int32), np.diff(start))
    if (not np.array_equal(t["node_infoset"][listed], owner)
            or np.any((np.diff(listed) <= 0) & (np.diff(owner) == 0))):
        return "array 'infoset_nodes' does not list each infoset's histories in node order"
    infoset_player = t["infoset_player"]
    players = np.searchsorted(infoset_player, np.arange(p + 1), side="left")
    if (np.any(np.diff(infoset_player) < 0)
            or not np.array_equal(t["player_infoset_start"], players)):
        return "the infosets are not grouped by player (player_infoset_start)"
    # each player's infosets numbered by their first history: so an infoset's previous one,
    # which holds an ancestor of that history, has a smaller number
    first = t["infoset_nodes"][start[:-1]]
    if np.any((np.diff(first) <= 0) & (np.diff(infoset_player) == 0)):
        return "a player's infosets are not numbered by their first history"
    previous = previous_own_slots(t, p)
    parent_slot = t["infoset_parent_slot"]
    if np.any(parent_slot[infoset] != previous):
        return "perfect recall fails, or array 'infoset_parent_slot' does not match the tree"
    expected = np.where(parent_slot >= 0, t["slot_infoset"][np.maximum(parent_slot, 0)], -1)
    if not np.array_equal(t["infoset_parent"], expected):
        return "array 'infoset_parent' does not match 'infoset_parent_slot'"
    return None


def previous_own_slots(t: Mapping[str, np.ndarray], num_players: int) -> np.ndarray:
    """For each decision node, in node order, the slot of its player's last action above it
    (-1 if none), for a tree whose arrays ``t`` (by :class:`GameTree` field name) hold at least
    ``node_kind``, ``node_player``, ``node_parent``, ``edge_slot``, ``edge_player`` and
    ``internal_nodes``, with every node's parent before it.

    All decision nodes walk up together, a step at a time, each stopping at the first edge its
    own player took (``edge_player``, the player acting at the edge's upper end) or at the
    root: in most games players take turns, so a few steps settle every node. Nodes still
    walking after :data:`_STEPS` steps (a long stretch of other players' moves) finish by
    pointer jumping, in a number of passes logarithmic in the depth: a deep game costs no
    step per level.
    """
    parent, edge_player, edge_slot = t["node_parent"], t["edge_player"], t["edge_slot"]
    node = np.flatnonzero(t["node_kind"] == DECISION).astype(np.int32)
    player = t["node_player"][node]
    previous = np.full(len(node), -1, dtype=np.int32)
    walking = np.arange(len(node))  # the decision nodes still walking, and where they are
    for _ in range(_STEPS):
        found = edge_player[node] == player
        previous[walking[found]] = edge_slot[node[found]]
        going = ~found & (node != 0)  # at the root: no action of theirs above
        walking, node, player = walking[going], parent[node[going]], player[going]
        if not len(walking):
            return previous
    previous[walking] = _nearest_own_edges(t, node, player)
    return previous


#: Steps up the tree every decision node takes before the rest go by pointer jumping
_STEPS = 8


def _nearest_own_edges(t: Mapping[str, np.ndarray], node: np.ndarray,
                       player: np.ndarray) -> np.ndarray:
    """The slot of the nearest edge at or above each ``node`` (an internal node) taken by
    ``player``, -1 if none, by pointer jumping over the internal nodes: each points at itself
    if the edge into it is ``player``'s, else at its parent; squaring the pointers (``jump =
    jump[jump]``) doubles how far they reach, until every one asked about rests."""
    internal = t["internal_nodes"]
    m = len(internal)
    number = np.full(len(t["node_kind"]), m, dtype=np.int32)  # internal nodes counted; m: none
    number[internal] = np.arange(m, dtype=np.int32)
    up = np.full(m + 1, m, dtype=np.int32)  # each one's parent, the root's and m's: m
    up[1:m] = number[t["node_parent"][internal[1:]]]
    mover = np.append(t["edge_player"][internal], -2)
    slot = np.append(t["edge_slot"][internal], -1).astype(np.int32)
    itself = np.arange(m + 1, dtype=np.int32)
    start = number[node]
    result = np.empty(len(node), dtype=np.int32)
    for p in np.unique(player):
        asked = np.flatnonzero(player == p)
        rests = (mover == p) | (itself == m)
        jump = np.where(rests, itself, up)
        at = jump[start[asked]]
        while not rests[at].all():
            jump = jump[jump]
            at = jump[start[asked]]
        result[asked] = slot[at]
    return result


def level_starts(num_children: np.ndarray) -> np.ndarray:
    """The first node of each depth of a tree numbered breadth first, then the node count.

    A level's children are the next level, and end where the children of its last node end:
    ``1 + sum(num_children[:i + 1])`` for node ``i``. So a deep, narrow game costs one scalar
    look-up per level, not a few numpy calls.
    """
    ends = np.cumsum(num_children, dtype=np.int64) + 1
    starts = [0, 1]
    while starts[-1] < len(num_children):
        following = int(ends[starts[-1] - 1])
        if following == starts[-1]:  # nothing below: not a whole tree (tree_problem says so)
            break
        starts.append(following)
    return np.array(starts, dtype=np.int64)
