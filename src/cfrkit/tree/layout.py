"""The compiled game's layout: :class:`GameTree` arrays and the :class:`CompiledGame` record.

The tree is laid out breadth-first: the root is node 0, every node's children are contiguous
(``first_child[n] .. first_child[n] + num_children[n]``) and come after their parent, so a
forward loop over the nodes visits parents before children and a backward loop visits
children before parents -- all the kernels need (the pynndescent ``FlatTree`` idea).

Action probabilities live in one flat *slot* array: information set ``I`` owns the slots
``first_slot[I] .. first_slot[I] + num_actions[I]`` (its actions, in the game's order), and the
chance outcomes of every chance node follow after the ``num_action_slots`` decision slots. A
node's ``node_slot`` points at the first slot of its outgoing edges, so the kernels find the
probability of the edge to child ``j`` at ``probs[node_slot[n] + j]`` whatever the node kind.

Information sets are numbered grouped by player (player 0's first), and within a player in
order of discovery, so a player's sets and slots are contiguous and every set comes after the
set where that player last acted before reaching it.
"""

from __future__ import annotations

import copy
import hashlib
import numbers
import os
import threading
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

import numpy as np

from .._text import short_repr
from ..game import Game, InfoSet
from .check import previous_own_slots, tree_problem
from .preorder import narrow_keys, preorder_depths
from .walk import CHANCE, CHANCE_CODE, DECISION, TERMINAL, TERMINAL_CODE, label_problem

if TYPE_CHECKING:
    from .walk import Walk

__all__ = [
    "CHANCE", "DECISION", "TERMINAL", "TREE_SCHEMA", "CompiledGame", "GameTree", "flatten",
    "schema_mismatch", "tree_sizes",
]

#: Utilities sum to zero at a terminal when their sum is within this share of the terminal's
#: largest |utility| (relative, so tiny payoffs are judged as well as large ones).
ZERO_SUM_TOLERANCE = 1e-9


_INT8, _INT32, _BOOL, _FLOAT64 = (np.dtype(t) for t in ("int8", "int32", "bool", "float64"))

#: Each :class:`GameTree` array's dtype and shape, the shape in the tree's sizes: ``N`` nodes,
#: ``M`` internal nodes, ``D`` decision nodes, ``S`` infosets, ``A`` decision slots, ``C``
#: chance slots, ``P`` players (``S+1``: one more than ``S``).
TREE_SCHEMA: dict[str, tuple[np.dtype, tuple[str, ...]]] = {
    "node_kind": (_INT8, ("N",)),
    "node_player": (_INT32, ("N",)),
    "node_infoset": (_INT32, ("N",)),
    "node_slot": (_INT32, ("N",)),
    "node_first_child": (_INT32, ("N",)),
    "node_num_children": (_INT32, ("N",)),
    "node_parent": (_INT32, ("N",)),
    "edge_slot": (_INT32, ("N",)),
    "edge_player": (_INT32, ("N",)),
    "edge_last": (_BOOL, ("N",)),
    "internal_nodes": (_INT32, ("M",)),
    "utility": (_FLOAT64, ("P", "N")),
    "chance_prob": (_FLOAT64, ("C",)),
    "infoset_player": (_INT32, ("S",)),
    "infoset_first_slot": (_INT32, ("S",)),
    "infoset_num_actions": (_INT32, ("S",)),
    "infoset_parent": (_INT32, ("S",)),
    "infoset_parent_slot": (_INT32, ("S",)),
    "infoset_node_start": (_INT32, ("S+1",)),
    "infoset_nodes": (_INT32, ("D",)),
    "player_infoset_start": (_INT32, ("P+1",)),
    "slot_infoset": (_INT32, ("A",)),
}


def tree_sizes(arrays: Mapping[str, object], num_players: int, num_action_slots: int,
               num_infosets: int) -> dict[str, int]:
    """The sizes :data:`TREE_SCHEMA` names, those of the arrays read from the arrays that set
    them (-1 where such an array is not a one-dimensional numpy array)."""

    def length(name: str) -> int:
        array = arrays[name]
        return array.shape[0] if isinstance(array, np.ndarray) and array.ndim == 1 else -1

    kind = arrays["node_kind"]
    decisions = (int(np.count_nonzero(kind == DECISION))
                 if isinstance(kind, np.ndarray) and kind.ndim == 1 else -1)
    return {"N": length("node_kind"), "M": length("internal_nodes"), "D": decisions,
            "S": num_infosets, "A": num_action_slots, "C": length("chance_prob"),
            "P": num_players}


def schema_mismatch(arrays: Mapping[str, object], sizes: Mapping[str, int]) -> str | None:
    """The first tree array whose type, dtype or shape is not :data:`TREE_SCHEMA`'s, said in
    a few words; ``None`` if every one fits."""
    for name, (dtype, dims) in TREE_SCHEMA.items():
        array = arrays[name]
        if not isinstance(array, np.ndarray):
            return f"{name!r} is a {type(array).__name__}, not a numpy array"
        if array.dtype != dtype:
            return f"array {name!r} is {array.dtype}, expected {dtype}"
        shape = tuple(sizes[dim[0]] + (1 if dim.endswith("+1") else 0) for dim in dims)
        if array.shape != shape:
            return f"array {name!r} has shape {array.shape}, expected {shape}"
    return None


class GameTree(NamedTuple):
    """A game tree as contiguous arrays: the only thing the numba kernels ever see.

    ``N`` nodes, ``S`` information sets, ``A`` decision slots (one per infoset-action pair),
    ``C`` chance slots, ``P`` players.
    """

    num_players: int
    num_action_slots: int
    node_kind: np.ndarray  # int8[N]: TERMINAL, CHANCE or DECISION
    node_player: np.ndarray  # int32[N]: acting player, -1 at chance and terminal nodes
    node_infoset: np.ndarray  # int32[N]: infoset index at decision nodes, else -1
    node_slot: np.ndarray  # int32[N]: first slot of the outgoing edges, else -1
    node_first_child: np.ndarray  # int32[N]: index of the first child, else -1
    node_num_children: np.ndarray  # int32[N]
    node_parent: np.ndarray  # int32[N]: -1 at the root
    # the edge from each node's parent, for the edge-by-edge loops of full passes
    edge_slot: np.ndarray  # int32[N]: slot of the edge into the node (its probability), -1 at the root
    edge_player: np.ndarray  # int32[N]: player acting at the parent, -1 chance, -2 at the root
    edge_last: np.ndarray  # bool[N]: whether the node is its parent's last child
    internal_nodes: np.ndarray  # int32[M]: the non-terminal nodes, in breadth-first order
    utility: np.ndarray  # float64[P, N]: payoffs at terminal nodes, 0 elsewhere
    chance_prob: np.ndarray  # float64[C]: the chance slots' probabilities
    infoset_player: np.ndarray  # int32[S]
    infoset_first_slot: np.ndarray  # int32[S]
    infoset_num_actions: np.ndarray  # int32[S]
    infoset_parent: np.ndarray  # int32[S]: the player's previous infoset, -1 if none
    infoset_parent_slot: np.ndarray  # int32[S]: the player's previous action slot, -1 if none
    infoset_node_start: np.ndarray  # int32[S+1]: CSR offsets into infoset_nodes
    infoset_nodes: np.ndarray  # int32[N_decision]: the histories of each infoset
    player_infoset_start: np.ndarray  # int32[P+1]: player p owns infosets [start[p], start[p+1])
    slot_infoset: np.ndarray  # int32[A]: owning infoset of each decision slot

    def __repr__(self) -> str:  # the arrays' own reprs would run to tens of thousands of chars
        return (
            f"GameTree(num_players={self.num_players}, num_action_slots={self.num_action_slots}, "
            f"nodes={self.node_kind.shape[0]}, infosets={self.infoset_player.shape[0]}, "
            f"chance_slots={self.chance_prob.shape[0]})"
        )


@dataclass(frozen=True, eq=False)
class CompiledGame:
    """A game compiled once: the :class:`GameTree` arrays plus the names that map back to them.

    Attributes
    ----------
    game : Game
        The game this was compiled from.
    tree : GameTree
        The arrays the kernels work on.
    infoset_keys : tuple of str
        Key of each infoset, indexed like the tree's infoset arrays.
    infoset_actions : tuple of tuple
        Action labels of each infoset, in slot order.
    key_index : Mapping[str, int]
        Infoset key -> infoset index. Made from ``infoset_keys``, not passed in.
    infosets : Mapping[str, InfoSet]
        Infoset key -> read-only record, in index order. Made from the keys, the actions and
        ``tree.infoset_player``, not passed in.
    zero_sum : bool
        Whether the utilities sum to zero at every terminal: within 1e-9 times that terminal's
        largest absolute utility. Computed from ``tree.utility``, not passed in.

    Notes
    -----
    :func:`cfrkit.compile_game` and :func:`cfrkit.load_compiled` make these. One made another
    way -- ``dataclasses.replace(compiled, tree=compiled.tree._replace(utility=...))`` to try
    other payoffs, say -- gets the same treatment: every tree array must have the dtype and
    shape the tree's sizes call for, and the keys must be distinct (else ``ValueError``); an
    array that can still change is copied (the tree's arrays are read-only, so nothing changes
    them under a trainer); ``key_index``, ``infosets``, ``zero_sum`` and :attr:`fingerprint`
    are made afresh, and nothing cached on the original (sampling layouts, evaluation tables)
    carries over. Copies and pickles are made the same way. The arrays must also describe a
    tree :func:`cfrkit.compile_game` could have made -- breadth-first numbering, one block of
    slots per infoset and chance node, perfect recall, utilities within
    ``cfrkit.limits.MAX_ABS_UTILITY`` (else ``ValueError`` naming what is wrong): the kernels
    do not check indices, and trust that layout.
    """

    game: Game
    tree: GameTree
    infoset_keys: tuple[str, ...]
    infoset_actions: tuple[tuple[Hashable, ...], ...]
    key_index: Mapping[str, int] = field(init=False)
    infosets: Mapping[str, InfoSet] = field(init=False)
    zero_sum: bool = field(init=False)
    # not an __init__ argument, so dataclasses.replace() starts an empty one: what is cached
    # (the fingerprint, layouts holding copies of the utilities) belongs to this tree alone
    _cache: dict = field(default_factory=dict, init=False, repr=False)

    def __post_init__(self) -> None:
        tree = self.tree
        if not isinstance(tree, GameTree):
            raise TypeError(f"CompiledGame: tree must be a GameTree, got {type(tree).__name__}")
        vouched = getattr(_vouched, "tree", None) is tree  # the tree of a checked game
        for name, least in (("num_players", 1), ("num_action_slots", 0)):
            # the kernels size arrays by them: a float or a bool would fail deep inside numpy
            value = getattr(tree, name)
            if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Integral):
                raise ValueError(f"CompiledGame: tree.{name} must be an int, got "
                                 f"{short_repr(value)}")
            if value < least:
                raise ValueError(f"CompiledGame: tree.{name} must be >= {least}, got {value}")
        if type(tree.num_players) is not int or type(tree.num_action_slots) is not int:
            tree = tree._replace(num_players=int(tree.num_players),
                                 num_action_slots=int(tree.num_action_slots))
            object.__setattr__(self, "tree", tree)
        arrays = tree._asdict()
        for name in ("infoset_keys", "infoset_actions"):  # a list given would stay changeable
            object.__setattr__(self, name, tuple(getattr(self, name)))
        num_infosets = len(self.infoset_keys)
        sizes = tree_sizes(arrays, tree.num_players, tree.num_action_slots, num_infosets)
        problem = schema_mismatch(arrays, sizes)
        if problem is None and len(self.infoset_actions) != num_infosets:
            problem = (f"{len(self.infoset_actions)} action tuples for {num_infosets} infoset "
                       "keys")
        key_index = dict(zip(self.infoset_keys, range(num_infosets)))
        if problem is None and len(key_index) != num_infosets:
            problem = "infoset keys repeat"  # the second's key would name the first
        if problem is None and any(len(labels) != count for labels, count in zip(
                self.infoset_actions, tree.infoset_num_actions.tolist())):
            problem = "an infoset's action labels do not match 'infoset_num_actions'"
        if problem is not None:
            raise ValueError(f"CompiledGame: {problem}")
        # compile_game and load_compiled hand over read-only C-contiguous arrays, taken as
        # they are; any other is copied
        fresh = {
            name: np.array(array, order="C")
            for name, array in arrays.items()
            if isinstance(array, np.ndarray)
            and (_writable_memory(array) or not array.flags.c_contiguous)
        }
        if fresh:
            for array in fresh.values():
                array.setflags(write=False)
            object.__setattr__(self, "tree", tree._replace(**fresh))
        if not vouched:
            problem = tree_problem(self.tree._asdict(), sizes) or _labels_problem(
                self.infoset_keys, self.infoset_actions)
            if problem is not None:
                raise ValueError(f"CompiledGame: {problem}")
        object.__setattr__(self, "key_index", _ReadOnlyDict(key_index))
        object.__setattr__(self, "infosets", _InfoSets(
            key_index, self.tree.infoset_player, self.infoset_actions
        ))
        # the non-terminal columns are all 0, which passes the test
        object.__setattr__(self, "zero_sum", _zero_sum(self.tree.utility.T))

    def __reduce__(self) -> tuple:
        # copies and pickles are made again by __init__: read-only arrays, a cache of their own
        return type(self), (self.game, self.tree, self.infoset_keys, self.infoset_actions)

    def __copy__(self) -> CompiledGame:
        # the same tree, already checked: a cache of its own, no second check
        return _checked_game(type(self), self.game, self.tree, self.infoset_keys,
                             self.infoset_actions)

    def __deepcopy__(self, memo: dict) -> CompiledGame:
        # the tree and the names cannot change: shared, not copied (a copy of a game of millions
        # of nodes would double its memory); the game can, and is copied
        return _checked_game(type(self), copy.deepcopy(self.game, memo), self.tree,
                             self.infoset_keys, self.infoset_actions)

    @property
    def num_players(self) -> int:
        """The number of players (chance not counted)."""
        return self.tree.num_players

    @property
    def num_nodes(self) -> int:
        """The number of histories: decision, chance and terminal nodes."""
        return int(self.tree.node_kind.shape[0])

    @property
    def num_infosets(self) -> int:
        """The number of information sets, every player's."""
        return len(self.infoset_keys)

    @property
    def num_terminals(self) -> int:
        """The number of terminal histories."""
        return int(np.count_nonzero(self.tree.node_kind == TERMINAL))

    @property
    def fingerprint(self) -> str:
        """A SHA-256 of the compiled tree and its names (hex): equal for equal games.

        It covers every array of the :class:`GameTree` (values, dtypes and shapes), the infoset
        keys and the action labels (their ``repr``), so two compilations of one game agree and
        any change to the rules, payoffs, probabilities or names changes it. Checkpoints and
        policy files carry it to refuse a file made for another game.
        """
        cached = self._cache.get("fingerprint")
        if cached is None:
            cached = self._cache["fingerprint"] = fingerprint(
                self.tree, self.infoset_keys, self.infoset_actions
            )
        return cached

    def save(self, path: str | os.PathLike[str], *, compress: bool = False) -> Path:
        """Write the compiled game to one ``.npz`` file; read it back with
        :func:`cfrkit.load_compiled`.

        The file holds every :class:`GameTree` array as it is in memory and a JSON document:
        format name and version, cfrkit version, the
        :attr:`fingerprint`, the number of players, the game's ``repr``,
        :attr:`~cfrkit.Game.identity` and ``name``, the zero-sum flag, the infoset keys and the
        action labels. Nothing is pickled. Labels keep their exact type and value: ``str``,
        ``int``, ``float`` (``inf`` and ``nan`` too), ``bool``, ``None``, ``bytes``, NumPy
        scalars and tuples of these; any other label makes it raise. The file is written to a
        temporary file in the same directory, then renamed over ``path``, so ``path`` never
        holds half a file. The format is described in :mod:`cfrkit.tree.store`.

        Parameters
        ----------
        path : str or os.PathLike
            Where to write (used as given; conventionally ending in ``.npz``). An existing file
            is replaced.
        compress : bool, optional
            Deflate the arrays (``np.savez_compressed``). Default ``False``: trees compress
            about 13-fold, but their arrays then read about 2.5 times slower
            (``python benchmarks/compiled_cache.py``), and the compile cache is for loading
            fast. Compress a file to archive or send it; :func:`cfrkit.load_compiled` reads both.

        Returns
        -------
        pathlib.Path
            ``path``.

        Raises
        ------
        ValueError
            If an action label is of another type (naming the label and its infoset), or an
            infoset key is not exactly a ``str``.
        OSError
            If the file cannot be written.
        """
        from .store import save

        return save(self, path, compress=compress)

    def __repr__(self) -> str:
        return (
            f"CompiledGame({self.game!r}, nodes={self.num_nodes}, "
            f"infosets={self.num_infosets}, players={self.num_players})"
        )


def flatten(walk: Walk) -> CompiledGame:
    """Lay the records of a finished walk out as a :class:`CompiledGame` (checking perfect
    recall on the way).

    The walk numbers nodes depth first and records each node's code, from which its number of
    children and so every node's depth follow (``preorder_depths``); within one depth that order
    is the breadth-first order, so a stable sort by depth gives the breadth-first numbering,
    and children come out contiguous. Information sets are renumbered by player, then by their
    first node in breadth-first order. Everything is numpy over whole arrays (perfect recall:
    :func:`.check.previous_own_slots`).
    """
    num_players = walk.num_players
    child_counts = walk.child_counts()  # in visiting order (run() flushed the codes)
    depths = preorder_depths(child_counts)
    if depths[-1] != 0:  # the walk stopped inside the tree: a bug, never the game's fault
        raise AssertionError("the walk's records do not describe a whole tree")
    depths = depths[:-1]
    codes = np.frombuffer(walk.code, dtype=np.int32)
    num_nodes = len(codes)
    # breadth-first position -> walk number
    order = np.argsort(narrow_keys(depths), kind="stable")
    code = codes[order]
    kind = np.minimum(code + 2, DECISION).astype(np.int8)  # TERMINAL_CODE -> 0, CHANCE_CODE -> 1
    decision_nodes = np.flatnonzero(code >= 0)
    raw_set = code[decision_nodes]
    del code

    # infosets grouped by player, each player's by first breadth-first node
    num_sets = len(walk.set_player)
    set_player = np.array(walk.set_player, dtype=np.int32)
    set_actions = walk.action_counts()
    first_node = np.full(num_sets, num_nodes, dtype=np.int64)
    np.minimum.at(first_node, raw_set, decision_nodes)
    by_set = np.lexsort((first_node, set_player))  # new id -> walk's id
    new_id = np.empty(num_sets, dtype=np.int32)
    new_id[by_set] = np.arange(num_sets, dtype=np.int32)
    num_actions = set_actions[by_set]
    first_slot = np.zeros(num_sets, dtype=np.int32)
    if num_sets:
        np.cumsum(num_actions[:-1], out=first_slot[1:])
    num_action_slots = int(num_actions.sum())
    infoset_player = set_player[by_set]
    player_infoset_start = np.searchsorted(
        infoset_player, np.arange(num_players + 1), side="left"
    ).astype(np.int32)
    slot_infoset = np.repeat(np.arange(num_sets, dtype=np.int32), num_actions)

    infoset = np.full(num_nodes, -1, dtype=np.int32)
    infoset[decision_nodes] = new_id[raw_set]
    player = np.full(num_nodes, -1, dtype=np.int32)
    player[decision_nodes] = set_player[raw_set]
    num_children = child_counts[order]
    del child_counts
    node_slot = np.full(num_nodes, -1, dtype=np.int32)
    node_slot[decision_nodes] = first_slot[infoset[decision_nodes]]
    # chance nodes: counts and probabilities from visiting order to breadth-first order
    chance_nodes = np.flatnonzero(kind == CHANCE)
    visited = np.searchsorted(np.flatnonzero(codes == CHANCE_CODE), order[chance_nodes])
    counts = np.frombuffer(walk.chance_counts, dtype=np.int32)
    starts = np.zeros(len(counts), dtype=np.int64)
    np.cumsum(counts[:-1], out=starts[1:])
    chance_counts = counts[visited]
    probs = np.frombuffer(walk.chance_probs, dtype=np.float64)
    chance_prob = probs[_segments(starts[visited], chance_counts)]
    chance_offsets = np.zeros(len(chance_nodes), dtype=np.int64)
    np.cumsum(chance_counts[:-1], out=chance_offsets[1:])
    node_slot[chance_nodes] = num_action_slots + chance_offsets
    del visited, starts, chance_offsets
    # children are contiguous, in breadth-first order, from node 1 on
    ends = np.cumsum(num_children, dtype=np.int64)
    first_child = np.where(num_children > 0, ends - num_children + 1, -1).astype(np.int32)
    del ends
    parent = np.empty(num_nodes, dtype=np.int32)
    parent[0] = -1
    parent[1:] = np.repeat(np.arange(num_nodes, dtype=np.int32), num_children)
    has_parent = parent >= 0
    up = np.maximum(parent, 0)
    rank = np.arange(num_nodes, dtype=np.int32) - first_child[up]  # child index j
    edge_slot = np.where(has_parent, node_slot[up] + rank, -1).astype(np.int32)
    edge_player = np.where(has_parent, player[up], -2).astype(np.int32)
    edge_last = has_parent & (rank == num_children[up] - 1)
    del up, rank, has_parent
    # terminals: utilities from visiting order to breadth-first order
    position = np.empty(num_nodes, dtype=np.int32)  # walk number -> breadth-first position
    position[order] = np.arange(num_nodes, dtype=np.int32)
    terminals = position[np.flatnonzero(codes == TERMINAL_CODE)]
    payoffs = np.frombuffer(walk.utilities, dtype=np.float64).reshape(-1, num_players)
    utility = np.zeros((num_players, num_nodes), dtype=np.float64)
    for p in range(num_players):
        utility[p, terminals] = payoffs[:, p]
    del position, terminals

    internal_nodes = np.flatnonzero(kind != TERMINAL).astype(np.int32)
    arrays = {"node_kind": kind, "node_parent": parent, "node_player": player,
              "edge_slot": edge_slot, "edge_player": edge_player, "internal_nodes": internal_nodes}
    infoset_parent, infoset_parent_slot = _previous_actions(
        walk, order, arrays, decision_nodes, raw_set, first_node, first_slot, slot_infoset,
        new_id, by_set,
    )
    del order, raw_set, first_node
    # CSR list of the histories in each infoset, in breadth-first order
    in_order = decision_nodes[np.argsort(narrow_keys(infoset[decision_nodes]), kind="stable")]
    infoset_node_start = np.zeros(num_sets + 1, dtype=np.int32)
    infoset_node_start[1:] = np.cumsum(np.bincount(infoset[decision_nodes], minlength=num_sets))

    tree = GameTree(
        num_players=num_players,
        num_action_slots=num_action_slots,
        node_kind=kind,
        node_player=player,
        node_infoset=infoset,
        node_slot=node_slot,
        node_first_child=first_child,
        node_num_children=num_children,
        node_parent=parent,
        edge_slot=edge_slot,
        edge_player=edge_player,
        edge_last=edge_last,
        internal_nodes=internal_nodes,
        utility=utility,
        chance_prob=chance_prob,
        infoset_player=infoset_player,
        infoset_first_slot=first_slot,
        infoset_num_actions=num_actions,
        infoset_parent=infoset_parent,
        infoset_parent_slot=infoset_parent_slot,
        infoset_node_start=infoset_node_start,
        infoset_nodes=in_order.astype(np.int32),
        player_infoset_start=player_infoset_start,
        slot_infoset=slot_infoset,
    )
    for array in tree:
        if isinstance(array, np.ndarray):
            array.setflags(write=False)
    new_order = by_set.tolist()  # C-level loops below: a game may have millions of infosets
    keys = tuple(map(walk.keys.__getitem__, new_order))
    actions = tuple(map(walk.set_actions.__getitem__, new_order))
    return _checked_game(CompiledGame, walk.game, tree, keys, actions)  # laid out right here


#: The tree a :func:`_checked_game` call vouches for, on this thread
_vouched = threading.local()


def _labels_problem(keys: Sequence[str], actions: Sequence[tuple]) -> str | None:
    """What ``compile_game`` would have refused in these action labels: a label repeated in
    one infoset (``1`` and ``True`` are one label), an unhashable one, a NaN, or None."""
    checked: set[int] = set()  # games share a handful of tuples among their infosets
    for key, labels in zip(keys, actions):
        if id(labels) in checked:
            continue
        checked.add(id(labels))
        try:
            problem = None if len(set(labels)) == len(labels) else "its action labels repeat"
        except TypeError:
            problem = "an action label is unhashable"
        problem = problem or label_problem(labels)
        if problem is not None:
            return f"infoset {short_repr(key, 40)}: {problem}"
    return None


def _checked_game(cls: type[CompiledGame], game: Game, tree: GameTree, keys: Sequence[str],
                  actions: Sequence[tuple]) -> CompiledGame:
    """``cls(game, tree, keys, actions)`` for a ``tree`` known to pass :func:`.tree_problem`
    (laid out by :func:`flatten`, or another game's): the constructor skips checking it, which
    costs about as much as loading the tree from a file."""
    _vouched.tree = tree
    try:
        return cls(game=game, tree=tree, infoset_keys=keys, infoset_actions=actions)
    finally:
        _vouched.tree = None


def _segments(starts: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """The indices ``starts[i] .. starts[i] + lengths[i]``, concatenated."""
    total = int(lengths.sum())
    offsets = np.zeros(len(lengths), dtype=np.int64)
    np.cumsum(lengths[:-1], out=offsets[1:])
    return np.repeat(starts - offsets, lengths) + np.arange(total, dtype=np.int64)


def _previous_actions(walk, order, arrays, decision_nodes, raw_set, first_node, first_slot,
                      slot_infoset, new_id, by_set):
    """Each infoset's previous own action slot and infoset (-1 if none), checking perfect
    recall: every history of an infoset comes after the same last action of its player.
    ``arrays`` holds the breadth-first tree arrays :func:`.check.previous_own_slots` reads.
    """
    previous = previous_own_slots(arrays, walk.num_players)  # per decision node
    # every history of an infoset against its first one in breadth-first order
    slots = previous[np.searchsorted(decision_nodes, first_node)]
    wrong = previous != slots[raw_set]
    if wrong.any():
        _report_imperfect_recall(walk, order, decision_nodes, raw_set, previous, first_slot,
                                 slot_infoset, by_set)
    parent_slot = np.empty(len(new_id), dtype=np.int32)
    parent_slot[new_id] = slots
    parent_set = np.where(parent_slot >= 0, slot_infoset[np.maximum(parent_slot, 0)], -1)
    return parent_set.astype(np.int32), parent_slot


def _report_imperfect_recall(walk, order, decision_nodes, raw_set, previous, first_slot,
                             slot_infoset, by_set):
    """Raise the walk's message for the first history, in visiting order, whose previous own
    action differs from that of its infoset's first history in visiting order."""
    position = np.empty(len(order), dtype=np.int64)
    position[order] = np.arange(len(order))
    first = previous[np.searchsorted(decision_nodes, position[walk.first_nodes()])]
    wrong = np.flatnonzero(previous != first[raw_set])
    culprit = wrong[np.argmin(order[decision_nodes[wrong]])]
    set_id = int(raw_set[culprit])

    def action(slot: int):
        if slot < 0:
            return None
        infoset = int(slot_infoset[slot])
        return int(by_set[infoset]), slot - int(first_slot[infoset])

    raise walk.imperfect_recall(int(order[decision_nodes[culprit]]), set_id,
                                action(int(previous[culprit])), action(int(first[set_id])))


def fingerprint(tree: GameTree, keys: Sequence[str], actions: Sequence[tuple]) -> str:
    """:attr:`CompiledGame.fingerprint` of these parts: SHA-256 over every array (name, dtype,
    shape and values), the scalars, and each infoset's key and action labels (their ``repr``,
    or where that differs between processes or NumPy versions a text that does not)."""
    digest = hashlib.sha256()
    digest.update(f"{tree.num_players} {tree.num_action_slots}".encode())
    for name, value in zip(GameTree._fields, tree):
        if isinstance(value, np.ndarray):
            digest.update(f"{name} {value.dtype.str} {value.shape}".encode())
            # the buffer itself, not a tobytes() copy (same digest, half the time)
            digest.update(np.ascontiguousarray(value).data)
    for key, labels in zip(keys, actions):
        if type(key) is str and plain_labels(labels):
            text = repr((key, labels))  # the common case, fast
        else:
            text = f"({repr(str(key))}, {_stable_text(labels)})"
        digest.update(text.encode())
    return digest.hexdigest()


def plain_labels(labels: tuple) -> bool:
    """Whether every label is exactly a str or an int: the common case, whose ``repr`` is the
    same everywhere and which no other label of another type equals."""
    for label in labels:
        if type(label) is not str and type(label) is not int:
            return False
    return True


def _stable_text(label: object) -> str:
    """``repr(label)`` where that is the same in every process and with every NumPy, and
    otherwise a text that is: the fingerprint must not change with a hash seed (the order of a
    frozenset), an object's address (the default ``repr``) or NumPy's printing of scalars
    (``np.int64(1)`` since NumPy 2, ``1`` before or under ``legacy`` print options). Plain
    labels give ``repr``'s text, so their games keep their fingerprints."""
    kind = type(label)
    if kind is tuple:
        items = [_stable_text(item) for item in label]
        return f"({items[0]},)" if len(items) == 1 else f"({', '.join(items)})"
    if isinstance(label, np.generic):
        value = label.item()  # a Python scalar, except for types Python has none of
        text = str(value) if isinstance(value, np.generic) else _stable_text(value)
        return f"numpy.{label.dtype.str}({text})"
    if isinstance(label, frozenset):  # (a set is no label: unhashable)
        return f"{kind.__name__}({{{', '.join(sorted(map(_stable_text, label)))}}})"
    if kind.__repr__ is object.__repr__:  # "<module.Class object at 0x...>": an address
        return f"<{kind.__module__}.{kind.__qualname__} object>"
    return repr(label)


def _writable_memory(array: np.ndarray) -> bool:
    """Whether ``array``'s values can still change: it is writable, or it views memory that is
    (another array, a ``bytearray``, ...). An array over ``bytes`` (as ``np.load`` reads a
    file's member) cannot. A read-only view says nothing of what it views (a read-only
    ``memoryview`` of a ``bytearray``), so any other owner counts as changeable."""
    owner: object = array
    while isinstance(owner, np.ndarray):
        if owner.flags.writeable:
            return True
        owner = owner.base
    return owner is not None and type(owner) is not bytes


def _zero_sum(payoffs: np.ndarray) -> bool:
    """Whether every terminal's utilities (one row per terminal) sum to zero, relative to
    that terminal's largest |utility| (a terminal of all zeros is zero-sum)."""
    if payoffs.size == 0:
        return True
    # column by column: numpy reduces a short row axis slowly
    totals = payoffs[:, 0].copy()
    scale = np.abs(payoffs[:, 0])
    for p in range(1, payoffs.shape[1]):
        totals += payoffs[:, p]
        np.maximum(scale, np.abs(payoffs[:, p]), out=scale)
    return bool(np.all(np.abs(totals) <= ZERO_SUM_TOLERANCE * scale))


class _InfoSets(Mapping):
    """Infoset key -> :class:`InfoSet`, each record made when first asked for (a game of
    24,576 infosets spent 17 ms making them all up front, for callers that look at a few)."""

    __slots__ = ("_index", "_players", "_actions", "_made")

    def __init__(self, index: dict, players: np.ndarray, actions: tuple) -> None:
        self._index, self._players, self._actions = index, players, actions
        self._made: dict = {}

    def __getitem__(self, key):
        record = self._made.get(key)
        if record is None:
            i = self._index[key]
            record = self._made[key] = InfoSet(key=key, player=int(self._players[i]),
                                               actions=self._actions[i])
        return record

    def __iter__(self):
        return iter(self._index)

    def __len__(self) -> int:
        return len(self._index)

    def __contains__(self, key) -> bool:
        return key in self._index

    def __repr__(self) -> str:
        return _preview(self)


class _ReadOnlyDict(Mapping):
    """A dict behind a read-only Mapping face (hashable-free, cheap, ordered)."""

    __slots__ = ("_data",)

    def __init__(self, data: dict) -> None:
        self._data = data

    def __getitem__(self, key):
        return self._data[key]

    def get(self, key, default=None):  # the dict's own: Mapping.get goes through a try
        return self._data.get(key, default)

    def __iter__(self):
        return iter(self._data)

    def __len__(self) -> int:
        return len(self._data)

    def __contains__(self, key) -> bool:
        return key in self._data

    def __repr__(self) -> str:
        return _preview(self)


#: Entries a read-only mapping's repr shows before it says how many more there are.
PREVIEW_ITEMS = 3


def _preview(mapping: Mapping) -> str:
    """``{k: v, ..., (n more)}``: a big game's mapping printed whole would run to megabytes."""
    shown = [f"{key!r}: {mapping[key]!r}" for key, _ in zip(mapping, range(PREVIEW_ITEMS))]
    rest = len(mapping) - len(shown)
    if rest:
        shown.append(f"... ({rest} more)")
    return "{" + ", ".join(shown) + "}"
