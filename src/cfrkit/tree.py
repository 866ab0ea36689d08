"""Compile a :class:`~cfrkit.game.Game` once into flat numpy arrays, validating it on the way.

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

import gc
import hashlib
import math
import os
import sys
import weakref
from collections.abc import Hashable, Mapping
from dataclasses import dataclass, field
from typing import Any, NamedTuple

import numpy as np

from .game import Game, GameError, History, InfoSet

__all__ = [
    "CHANCE",
    "DECISION",
    "DEFAULT_MAX_NODES",
    "TERMINAL",
    "CompiledGame",
    "GameTree",
    "compile_game",
]

TERMINAL, CHANCE, DECISION = 0, 1, 2
DEFAULT_MAX_NODES = 20_000_000
_PROB_TOLERANCE = 1e-9


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
        Whether every terminal's utilities sum to zero (within 1e-9 of the payoff scale).
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
                    digest.update(np.ascontiguousarray(value).tobytes())
            for key, actions in zip(self.infoset_keys, self.infoset_actions):
                digest.update(repr((key, actions)).encode())
            cached = self._cache["fingerprint"] = digest.hexdigest()
        return cached

    def __repr__(self) -> str:
        return (
            f"CompiledGame({self.game!r}, nodes={self.num_nodes}, "
            f"infosets={self.num_infosets}, players={self.num_players})"
        )


_compiled: "weakref.WeakKeyDictionary[Game, CompiledGame]" = weakref.WeakKeyDictionary()


def compile_game(
    game: Game | CompiledGame, *, max_nodes: int = DEFAULT_MAX_NODES, progress: bool | None = None
) -> CompiledGame:
    """Walk ``game`` once, validate it, and flatten it into a :class:`CompiledGame`.

    The result is cached per game object, so every trainer and evaluation call on the same game
    shares one tree; a :class:`CompiledGame` passed in is returned as it is.

    Parameters
    ----------
    game : Game or CompiledGame
        The game to compile.
    max_nodes : int, optional
        Stop with :class:`GameError` once the tree has more nodes than this, instead of running
        out of memory on a game that is too large (default 20 million).
    progress : bool or None, optional
        Report the nodes walked on stderr (a tqdm bar). ``None`` (default): once the walk
        passes 100,000 nodes, if tqdm is installed and ``CFRKIT_QUIET`` is not set; ``True``:
        from the start; ``False``: never.

    Returns
    -------
    CompiledGame

    Raises
    ------
    GameError
        If the game is malformed; the message names the offending history (its action path from
        the root and its ``repr``): chance probabilities negative or not summing to 1 (within
        1e-9), a decision node with no or duplicate actions, an infoset key reached with other
        actions or another player, imperfect recall, non-finite utilities or the wrong number of
        them, a player index out of range, or more than ``max_nodes`` nodes.
    """
    if isinstance(game, CompiledGame):
        return game
    if not isinstance(game, Game):
        raise TypeError(f"expected a cfrkit.Game, got {type(game).__name__}")
    if isinstance(max_nodes, bool) or not isinstance(max_nodes, int) or max_nodes < 1:
        raise ValueError(f"max_nodes must be a positive integer, got {max_nodes!r}")
    if progress is not None and not isinstance(progress, (bool, np.bool_)):
        raise ValueError(f"progress must be a bool or None, got {progress!r}")
    try:
        cached = _compiled.get(game)
    except TypeError:  # an unhashable game object: compile without caching
        return _walk(game, max_nodes, progress)
    if cached is None:
        cached = _walk(game, max_nodes, progress)
        _compiled[game] = cached
    return cached


def _walk(game: Game, max_nodes: int, progress: bool | None) -> CompiledGame:
    """Compile with the cyclic garbage collector paused.

    The walk keeps a whole breadth-first level of histories alive; the collector would rescan
    them again and again while finding nothing (about 40% of the time on OpenSpiel's
    liars_dice).
    """
    was_enabled = gc.isenabled()
    gc.disable()
    reporter = _WalkProgress(game, progress)
    try:
        return _Compiler(game, max_nodes, reporter).run()
    finally:
        reporter.close()
        if was_enabled:
            gc.enable()


class _WalkProgress:
    """Nodes walked, on a tqdm bar that appears once a walk gets long (see compile_game)."""

    EVERY = 1 << 16  # nodes between updates: the check is one bit test per node
    AUTO_FROM = 100_000

    def __init__(self, game: Game, progress: bool | None) -> None:
        self.game = game
        quiet = bool(os.environ.get("CFRKIT_QUIET"))
        self.wanted = progress if progress is not None else not quiet
        self.start_at = 0 if progress else self.AUTO_FROM
        self.bar = None
        self.shown = 0

    def tick(self, nodes: int) -> None:
        if not self.wanted or nodes < self.start_at:
            return
        if self.bar is None:
            try:
                from tqdm.auto import tqdm
            except ImportError:
                self.wanted = False  # progress is an optional extra
                return
            self.bar = tqdm(desc=f"compiling {self.game!r}", unit=" nodes", unit_scale=True,
                            file=sys.stderr, mininterval=0.5, initial=nodes)
        else:
            self.bar.update(nodes - self.shown)
        self.shown = nodes

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


class _Compiler:
    """One breadth-first walk of a game, collecting node records and checking every rule."""

    def __init__(self, game: Game, max_nodes: int, progress: _WalkProgress) -> None:
        self.game = game
        self.max_nodes = max_nodes
        self.progress = progress
        num_players = getattr(game, "num_players", None)
        if isinstance(num_players, bool) or not isinstance(num_players, int) or num_players < 1:
            raise GameError(f"{game!r}: num_players must be a positive int, got {num_players!r}")
        self.num_players = num_players
        # per node, in breadth-first order
        self.kind: list[int] = []
        self.player: list[int] = []
        self.infoset: list[int] = []  # discovery-order infoset id, remapped at the end
        self.parent: list[int] = []
        self.label: list[Any] = []  # the action on the edge from the parent
        self.first_child: list[int] = []
        self.num_children: list[int] = []
        self.edge_probs: list[list[float] | None] = []  # chance probabilities per node
        self.utilities: dict[int, tuple[float, ...]] = {}
        # per infoset, in discovery order
        self.key_to_id: dict[str, int] = {}
        self.keys: list[str] = []
        self.set_player: list[int] = []
        self.set_actions: list[tuple[Hashable, ...]] = []
        self.set_previous: list[tuple[int, int] | None] = []  # (infoset id, action index)
        self.set_first_node: list[int] = []

    # -- error reporting -------------------------------------------------------------------
    def path(self, node: int) -> list[Any]:
        labels = []
        while node > 0:
            labels.append(self.label[node])
            node = self.parent[node]
        return labels[::-1]

    def error(self, node: int, history: History, message: str) -> GameError:
        return GameError(
            f"{self.game!r}: history {self.path(node)!r} ({history!r}): {message}"
        )

    # -- the walk --------------------------------------------------------------------------
    def run(self) -> CompiledGame:
        root = self.game.root()
        if not isinstance(root, History):
            raise GameError(f"{self.game!r}: root() must return a cfrkit.History, got {root!r}")
        no_previous: tuple[tuple[int, int] | None, ...] = (None,) * self.num_players
        self._add_node(parent=-1, label=None)
        # the frontier holds (node index, history, each player's last own (infoset, action))
        frontier = [(0, root, no_previous)]
        while frontier:
            next_frontier = []
            for node, history, previous in frontier:
                for child in self._expand(node, history, previous):
                    next_frontier.append(child)
            frontier = next_frontier
        self.progress.tick(len(self.kind))  # the final count on the bar, if one is shown
        return self._finish()

    def _add_node(self, parent: int, label: Any) -> int:
        index = len(self.kind)
        if not index & (_WalkProgress.EVERY - 1):
            self.progress.tick(index)
        if index >= self.max_nodes:
            raise GameError(
                f"{self.game!r}: the tree has more than max_nodes={self.max_nodes} nodes "
                f"(reached at history {self.path(parent) + [label]!r}); pass a larger "
                "max_nodes to compile_game() if this is intended"
            )
        self.kind.append(TERMINAL)
        self.player.append(-1)
        self.infoset.append(-1)
        self.parent.append(parent)
        self.label.append(label)
        self.first_child.append(-1)
        self.num_children.append(0)
        self.edge_probs.append(None)
        return index

    def _expand(self, node: int, history: History, previous: tuple) -> list:
        if history.is_terminal():
            self._terminal(node, history)
            return []
        if history.is_chance():
            outcomes = self._chance(node, history)
            labels = [action for action, _ in outcomes]
            self.kind[node] = CHANCE
            self.edge_probs[node] = [prob for _, prob in outcomes]
            child_previous = [previous] * len(labels)
        else:
            labels = self._decision(node, history, previous)
            set_id = self.infoset[node]
            player = self.player[node]
            child_previous = []
            for j in range(len(labels)):
                updated = list(previous)
                updated[player] = (set_id, j)
                child_previous.append(tuple(updated))
        self.first_child[node] = len(self.kind)
        self.num_children[node] = len(labels)
        expanded = []
        for label, prev in zip(labels, child_previous):
            try:
                child_history = history.child(label)
            except GameError:
                raise
            except Exception as exc:  # name the history whose child() failed
                raise self.error(node, history, f"child({label!r}) raised {exc!r}") from exc
            if not isinstance(child_history, History):
                raise self.error(
                    node, history, f"child({label!r}) returned {child_history!r}, not a History"
                )
            child = self._add_node(node, label)
            expanded.append((child, child_history, prev))
        return expanded

    def _terminal(self, node: int, history: History) -> None:
        try:
            raw = tuple(history.utilities())
        except TypeError as exc:
            raise self.error(node, history, f"utilities() is not a sequence: {exc}") from exc
        if len(raw) != self.num_players:
            raise self.error(
                node, history,
                f"utilities() gave {len(raw)} values for {self.num_players} players",
            )
        try:
            values = tuple(float(u) for u in raw)
        except (TypeError, ValueError) as exc:
            raise self.error(node, history, f"utilities() are not numbers: {raw!r}") from exc
        if not all(math.isfinite(u) for u in values):
            raise self.error(node, history, f"utilities() are not all finite: {values!r}")
        self.utilities[node] = values

    def _chance(self, node: int, history: History) -> list[tuple[Hashable, float]]:
        outcomes = list(history.chance_outcomes())
        if not outcomes:
            raise self.error(node, history, "chance node with no outcomes")
        labels = []
        probs = []
        for item in outcomes:
            try:
                label, prob = item
                prob = float(prob)
            except (TypeError, ValueError) as exc:
                raise self.error(
                    node, history, f"chance outcome {item!r} is not an (action, probability) pair"
                ) from exc
            if not math.isfinite(prob) or prob < 0.0:
                raise self.error(
                    node, history, f"chance outcome {label!r} has probability {prob!r}"
                )
            labels.append(label)
            probs.append(prob)
        self._check_labels(node, history, labels, "chance outcome")
        total = math.fsum(probs)
        if abs(total - 1.0) > _PROB_TOLERANCE:
            raise self.error(
                node, history, f"chance probabilities sum to {total!r}, not 1 (tolerance 1e-9)"
            )
        return list(zip(labels, probs))

    def _check_labels(self, node: int, history: History, labels: list, what: str) -> None:
        try:
            distinct = len(set(labels))
        except TypeError as exc:
            raise self.error(node, history, f"{what}s must be hashable: {labels!r}") from exc
        if distinct != len(labels):
            duplicate = next(x for i, x in enumerate(labels) if x in labels[:i])
            raise self.error(node, history, f"duplicate {what} {duplicate!r} in {labels!r}")

    def _decision(self, node: int, history: History, previous: tuple) -> list[Hashable]:
        player = history.current_player()
        if isinstance(player, bool) or not isinstance(player, (int, np.integer)):
            raise self.error(node, history, f"current_player() returned {player!r}, not an int")
        player = int(player)
        if not 0 <= player < self.num_players:
            raise self.error(
                node, history,
                f"current_player() is {player}, out of range for {self.num_players} players",
            )
        actions = tuple(history.actions())
        if not actions:
            raise self.error(node, history, "decision node with no actions")
        self._check_labels(node, history, list(actions), "action")
        key = history.infoset_key()
        if not isinstance(key, str):
            raise self.error(node, history, f"infoset_key() returned {key!r}, not a str")
        set_id = self.key_to_id.get(key)
        if set_id is None:
            set_id = len(self.keys)
            self.key_to_id[key] = set_id
            self.keys.append(key)
            self.set_player.append(player)
            self.set_actions.append(actions)
            self.set_previous.append(previous[player])
            self.set_first_node.append(node)
        else:
            first = self.set_first_node[set_id]
            if self.set_player[set_id] != player:
                raise self.error(
                    node, history,
                    f"infoset {key!r} is player {player}'s here but player "
                    f"{self.set_player[set_id]}'s at history {self.path(first)!r}",
                )
            if self.set_actions[set_id] != actions:
                raise self.error(
                    node, history,
                    f"infoset {key!r} has actions {actions!r} here but "
                    f"{self.set_actions[set_id]!r} at history {self.path(first)!r}",
                )
            if self.set_previous[set_id] != previous[player]:
                raise self.error(
                    node, history,
                    f"imperfect recall: player {player} reaches infoset {key!r} after "
                    f"{self._describe(previous[player])} here but after "
                    f"{self._describe(self.set_previous[set_id])} at history "
                    f"{self.path(first)!r}",
                )
        self.kind[node] = DECISION
        self.player[node] = player
        self.infoset[node] = set_id
        return list(actions)

    def _describe(self, previous: tuple[int, int] | None) -> str:
        if previous is None:
            return "no earlier action of its own"
        set_id, action = previous
        return f"its action {self.set_actions[set_id][action]!r} at infoset {self.keys[set_id]!r}"

    # -- flattening --------------------------------------------------------------------------
    def _finish(self) -> CompiledGame:
        num_nodes = len(self.kind)
        num_players = self.num_players
        # number infosets grouped by player, discovery order within a player
        order = sorted(range(len(self.keys)), key=lambda s: (self.set_player[s], s))
        new_id = np.empty(len(order), dtype=np.int64)
        new_id[order] = np.arange(len(order))
        num_actions = np.array([len(self.set_actions[s]) for s in order], dtype=np.int32)
        first_slot = np.zeros(len(order), dtype=np.int32)
        if len(order):
            first_slot[1:] = np.cumsum(num_actions)[:-1]
        num_action_slots = int(num_actions.sum())
        infoset_player = np.array([self.set_player[s] for s in order], dtype=np.int32)
        infoset_parent = np.full(len(order), -1, dtype=np.int32)
        infoset_parent_slot = np.full(len(order), -1, dtype=np.int32)
        for i, s in enumerate(order):
            prev = self.set_previous[s]
            if prev is not None:
                infoset_parent[i] = new_id[prev[0]]
                infoset_parent_slot[i] = first_slot[new_id[prev[0]]] + prev[1]
        player_infoset_start = np.searchsorted(
            infoset_player, np.arange(num_players + 1), side="left"
        ).astype(np.int32)
        slot_infoset = np.repeat(np.arange(len(order), dtype=np.int32), num_actions)

        kind = np.array(self.kind, dtype=np.int8)
        player = np.array(self.player, dtype=np.int32)
        raw_set = np.array(self.infoset, dtype=np.int64)
        infoset = np.full(num_nodes, -1, dtype=np.int32)
        infoset[raw_set >= 0] = new_id[raw_set[raw_set >= 0]]
        node_slot = np.full(num_nodes, -1, dtype=np.int32)
        decision = kind == DECISION
        node_slot[decision] = first_slot[infoset[decision]]
        chance_probs: list[float] = []
        for n in np.flatnonzero(kind == CHANCE):
            node_slot[n] = num_action_slots + len(chance_probs)
            chance_probs.extend(self.edge_probs[n])
        parent = np.array(self.parent, dtype=np.int32)
        first_child = np.array(self.first_child, dtype=np.int32)
        num_children = np.array(self.num_children, dtype=np.int32)
        has_parent = parent >= 0
        rank = np.arange(num_nodes) - first_child[np.maximum(parent, 0)]  # child index j
        edge_slot = np.where(has_parent, node_slot[np.maximum(parent, 0)] + rank, -1).astype(np.int32)
        edge_player = np.where(has_parent, player[np.maximum(parent, 0)], -2).astype(np.int32)
        edge_last = has_parent & (rank == num_children[np.maximum(parent, 0)] - 1)
        utility = np.zeros((num_players, num_nodes), dtype=np.float64)
        for n, values in self.utilities.items():
            utility[:, n] = values
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
            chance_prob=np.array(chance_probs, dtype=np.float64),
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
        keys = tuple(self.keys[s] for s in order)
        actions = tuple(self.set_actions[s] for s in order)
        key_index = {key: i for i, key in enumerate(keys)}
        infosets = {
            key: InfoSet(key=key, player=int(infoset_player[i]), actions=actions[i])
            for i, key in enumerate(keys)
        }
        terminal = kind == TERMINAL
        totals = utility[:, terminal].sum(axis=0)
        scale = max(1.0, float(np.abs(utility).max(initial=0.0)))
        zero_sum = bool(np.all(np.abs(totals) <= 1e-9 * scale))
        return CompiledGame(
            game=self.game,
            tree=tree,
            infoset_keys=keys,
            infoset_actions=actions,
            key_index=_ReadOnlyDict(key_index),
            infosets=_ReadOnlyDict(infosets),
            zero_sum=zero_sum,
        )


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
