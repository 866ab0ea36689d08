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

import hashlib
import os
from collections.abc import Hashable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, NamedTuple

import numpy as np

from ..game import Game, InfoSet
from .walk import CHANCE, DECISION, TERMINAL

if TYPE_CHECKING:
    from pathlib import Path

    from .walk import Walk

__all__ = ["CHANCE", "DECISION", "TERMINAL", "CompiledGame", "GameTree", "flatten"]

#: Utilities sum to zero at a terminal when their sum is within this share of the terminal's
#: largest |utility| (relative, so tiny payoffs are judged as well as large ones).
ZERO_SUM_TOLERANCE = 1e-9


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
        Infoset key -> infoset index.
    infosets : Mapping[str, InfoSet]
        Infoset key -> read-only record, in index order.
    zero_sum : bool
        Whether the utilities sum to zero at every terminal: within 1e-9 times that terminal's
        largest absolute utility.
    """

    game: Game
    tree: GameTree
    infoset_keys: tuple[str, ...]
    infoset_actions: tuple[tuple[Hashable, ...], ...]
    key_index: Mapping[str, int]
    infosets: Mapping[str, InfoSet]
    zero_sum: bool
    _cache: dict = field(default_factory=dict, repr=False)

    @property
    def num_players(self) -> int:
        return self.tree.num_players

    @property
    def num_nodes(self) -> int:
        return int(self.tree.node_kind.shape[0])

    @property
    def num_infosets(self) -> int:
        return len(self.infoset_keys)

    @property
    def num_terminals(self) -> int:
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
            digest = hashlib.sha256()
            digest.update(f"{self.tree.num_players} {self.tree.num_action_slots}".encode())
            for name, value in zip(GameTree._fields, self.tree):
                if isinstance(value, np.ndarray):
                    digest.update(f"{name} {value.dtype.str} {value.shape}".encode())
                    # the buffer itself, not a tobytes() copy (same digest, half the time)
                    digest.update(np.ascontiguousarray(value).data)
            for key, actions in zip(self.infoset_keys, self.infoset_actions):
                digest.update(repr((key, actions)).encode())
            cached = self._cache["fingerprint"] = digest.hexdigest()
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
    """Lay the records of a finished walk out as a :class:`CompiledGame`."""
    num_nodes = len(walk.parent)
    num_players = walk.num_players
    # number infosets grouped by player, discovery order within a player
    order = sorted(range(len(walk.keys)), key=lambda s: (walk.set_player[s], s))
    new_id = np.empty(len(order), dtype=np.int64)
    new_id[order] = np.arange(len(order))
    num_actions = np.array([len(walk.set_actions[s]) for s in order], dtype=np.int32)
    first_slot = np.zeros(len(order), dtype=np.int32)
    if len(order):
        first_slot[1:] = np.cumsum(num_actions)[:-1]
    num_action_slots = int(num_actions.sum())
    infoset_player = np.array([walk.set_player[s] for s in order], dtype=np.int32)
    infoset_parent = np.full(len(order), -1, dtype=np.int32)
    infoset_parent_slot = np.full(len(order), -1, dtype=np.int32)
    for i, s in enumerate(order):
        code = walk.set_previous[s]
        if code >= 0:
            parent_set, action = walk.slot_of(code)
            infoset_parent[i] = new_id[parent_set]
            infoset_parent_slot[i] = first_slot[new_id[parent_set]] + action
    player_infoset_start = np.searchsorted(
        infoset_player, np.arange(num_players + 1), side="left"
    ).astype(np.int32)
    slot_infoset = np.repeat(np.arange(len(order), dtype=np.int32), num_actions)

    # the walk's typed columns, read without a copy
    kind = np.frombuffer(walk.kind, dtype=np.int8)
    player = np.frombuffer(walk.player, dtype=np.int32)
    raw_set = np.frombuffer(walk.infoset, dtype=np.int32)
    parent = np.frombuffer(walk.parent, dtype=np.int32)
    first_child = np.frombuffer(walk.first_child, dtype=np.int32)
    num_children = np.frombuffer(walk.num_children, dtype=np.int32)
    decision = kind == DECISION
    infoset = np.full(num_nodes, -1, dtype=np.int32)
    infoset[decision] = new_id[raw_set[decision]]
    node_slot = np.full(num_nodes, -1, dtype=np.int32)
    node_slot[decision] = first_slot[infoset[decision]]
    chance_nodes = np.flatnonzero(kind == CHANCE)
    chance_offsets = np.zeros(len(chance_nodes), dtype=np.int64)
    np.cumsum(num_children[chance_nodes][:-1], out=chance_offsets[1:])
    node_slot[chance_nodes] = num_action_slots + chance_offsets
    has_parent = parent >= 0
    up = np.maximum(parent, 0)
    rank = np.arange(num_nodes, dtype=np.int32) - first_child[up]  # child index j
    edge_slot = np.where(has_parent, node_slot[up] + rank, -1).astype(np.int32)
    edge_player = np.where(has_parent, player[up], -2).astype(np.int32)
    edge_last = has_parent & (rank == num_children[up] - 1)
    del up, rank
    terminals = np.frombuffer(walk.terminals, dtype=np.int32)
    payoffs = np.frombuffer(walk.utilities, dtype=np.float64).reshape(-1, num_players)
    utility = np.zeros((num_players, num_nodes), dtype=np.float64)
    utility[:, terminals] = payoffs.T
    # CSR list of the histories in each infoset, in breadth-first order
    decision_nodes = np.flatnonzero(decision).astype(np.int32)
    by_set = decision_nodes[np.argsort(infoset[decision_nodes], kind="stable")]
    infoset_node_start = np.zeros(len(order) + 1, dtype=np.int32)
    infoset_node_start[1:] = np.cumsum(np.bincount(infoset[decision_nodes], minlength=len(order)))

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
        internal_nodes=np.flatnonzero(kind != TERMINAL).astype(np.int32),
        utility=utility,
        chance_prob=np.frombuffer(walk.chance_probs, dtype=np.float64),
        infoset_player=infoset_player,
        infoset_first_slot=first_slot,
        infoset_num_actions=num_actions,
        infoset_parent=infoset_parent,
        infoset_parent_slot=infoset_parent_slot,
        infoset_node_start=infoset_node_start,
        infoset_nodes=by_set.astype(np.int32),
        player_infoset_start=player_infoset_start,
        slot_infoset=slot_infoset,
    )
    for array in tree:
        if isinstance(array, np.ndarray):
            array.setflags(write=False)
    keys = tuple(walk.keys[s] for s in order)
    actions = tuple(walk.set_actions[s] for s in order)
    key_index = {key: i for i, key in enumerate(keys)}
    infosets = {
        key: InfoSet(key=key, player=int(infoset_player[i]), actions=actions[i])
        for i, key in enumerate(keys)
    }
    return CompiledGame(
        game=walk.game,
        tree=tree,
        infoset_keys=keys,
        infoset_actions=actions,
        key_index=_ReadOnlyDict(key_index),
        infosets=_ReadOnlyDict(infosets),
        zero_sum=_zero_sum(payoffs),
    )


def _zero_sum(payoffs: np.ndarray) -> bool:
    """Whether every terminal's utilities (one row per terminal) sum to zero, relative to
    that terminal's largest |utility| (a terminal of all zeros is zero-sum)."""
    if payoffs.size == 0:
        return True
    totals = np.abs(payoffs.sum(axis=1))
    scale = np.abs(payoffs).max(axis=1)
    return bool(np.all(totals <= ZERO_SUM_TOLERANCE * scale))


class _ReadOnlyDict(Mapping):
    """A dict behind a read-only Mapping face (hashable-free, cheap, ordered)."""

    __slots__ = ("_data",)

    def __init__(self, data: dict) -> None:
        self._data = data

    def __getitem__(self, key):
        return self._data[key]

    def __iter__(self):
        return iter(self._data)

    def __len__(self) -> int:
        return len(self._data)

    def __contains__(self, key) -> bool:
        return key in self._data

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self._data!r})"
