"""The one walk of a game: call the user's History methods, check every answer, record nodes.

The walk is depth first. Every call into the user's code is guarded: an exception raised by
it, or an answer of the wrong type or value, becomes a :class:`~cfrkit.GameError` naming the
method and the history (its action path from the root, trimmed, with its depth, and its
``repr``, trimmed -- or a placeholder if ``repr`` itself fails), with the original exception
chained. Messages stay short however large the game, and every check costs O(1) or O(number
of actions) per node.

Nodes are numbered in the order they are visited (pre-order: a node, then its first child's
whole subtree, then the next child's), and each leaves one integer, its *code*: the id of its
information set at a decision node, :data:`CHANCE_CODE` or :data:`TERMINAL_CODE` otherwise.
Chance nodes add their outcome count, probabilities and labels, terminals their utilities. A
node's code gives its number of children (its infoset's actions, its chance outcomes, or none),
and in pre-order the counts alone determine the tree (:mod:`cfrkit.tree.preorder` turns them
into depths), so that is all the layout needs (:func:`~cfrkit.tree.layout.flatten`): nodes of
one depth in pre-order are in breadth-first order, so a stable sort by depth gives the
breadth-first numbering, and every parent, child range and action follows from the codes.
Perfect recall, a property of whole paths, is checked there too, on the arrays. The walk itself
holds only the histories of the current path and their unvisited siblings, and a node's label
lives once, in its information set's actions (or the chance node's outcomes); the path of a
history named in a message is rebuilt from the codes.

Codes and utilities go first to Python lists, which append several times faster than typed
arrays, and every few thousand nodes into typed columns (``array.array``, grown in place); the
utilities' types are checked there, a few thousand at a time.

The loop takes the common answers as they come (a terminal's tuple of utilities, a decision
node of a known information set with the same player and actions) and hands every other node --
a new information set, a chance node, an answer of another type, an exception -- to
:meth:`Walk.visit`, which asks the history again; its checks and messages are the only ones. A
game may take over the walk for speed (:meth:`cfrkit.openspiel.OpenSpielGame._cfrkit_walk` does
for OpenSpiel's C++ states): it records nodes through the same buffers and methods, and hands
any answer it does not take as plainly right to :meth:`Walk.visit` in the same way.
"""

from __future__ import annotations

import math
import numbers
import os
import sys
from array import array
from collections.abc import Hashable, Mapping, Sequence, Set
from typing import Any

import numpy as np

from ..game import Game, GameError, History
from .._text import counted, short_repr
from ..limits import MAX_ABS_UTILITY
from .memory import MemoryGuard
from .preorder import preorder_depths

__all__ = ["CHANCE", "CHANCE_CODE", "DECISION", "TERMINAL", "TERMINAL_CODE", "Walk", "short_repr"]

TERMINAL, CHANCE, DECISION = 0, 1, 2
#: A node's code in the walk's records: its information set's id (>= 0) at a decision node,
#: else one of these.
CHANCE_CODE, TERMINAL_CODE = -1, -2
PROB_TOLERANCE = 1e-9

_NOT_SEQUENCES = (str, bytes, bytearray, memoryview, Mapping, Set)
_INT_LIMIT = int(MAX_ABS_UTILITY)  # ints within it convert to float exactly enough, and fast
_PLAIN_UTILITIES = frozenset((float, int))  # array("d") takes them as they are


class _Refused(Exception):
    """An answer refused: the message's text, for the caller to name the history."""


def _kind_of(obj: object) -> str:
    """``a str ('12')``: the type and the value, for messages about a wrong answer."""
    name = type(obj).__name__
    article = "an" if name[:1].lower() in "aeiou" else "a"
    return f"{article} {name} ({short_repr(obj, 40)})"


def _exception_text(exc: BaseException) -> str:
    try:
        text = str(exc)
    except Exception:
        text = ""
    text = text if len(text) <= 160 else text[:157] + "..."
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def label_problem(labels: tuple) -> str | None:
    """What makes one of ``labels`` unusable, or None.

    A NaN, also inside a tuple, never equals itself: the same infoset met again would have
    other actions, and no policy row could be looked up by it. An int too long for Python to
    write as text (``sys.get_int_max_str_digits()``) would train, then fail to be saved or
    printed."""
    for label in labels:
        if type(label) is str:
            continue
        if _holds_nan(label):
            verb = "holds a" if isinstance(label, tuple) else "is"
            return (f"the action label {short_repr(label, 24)} {verb} NaN, which never equals "
                    "itself; use another label")
        if _holds_long_int(label):
            return ("an action label holds an int too long for Python to write as text "
                    "(sys.get_int_max_str_digits()); use another label")
    return None


def _holds_nan(label: object) -> bool:
    if isinstance(label, (float, np.floating)):
        return label != label
    return isinstance(label, tuple) and any(map(_holds_nan, label))


def _holds_long_int(label: object) -> bool:
    if isinstance(label, int):
        if label.bit_length() < 2_000:  # 602 digits: under the lowest limit Python allows, 640
            return False
        try:
            repr(label)
        except ValueError:
            return True
        return False
    return isinstance(label, tuple) and any(map(_holds_long_int, label))


def _real(u: object) -> float:
    """A utility that is not a float: an int, a numpy scalar or another real number."""
    if type(u) is not int and (isinstance(u, (bool, np.bool_)) or not isinstance(u, numbers.Real)):
        raise _Refused(f"utilities() gave {_kind_of(u)}, not a real number")
    try:
        return float(u)
    except OverflowError:
        raise _Refused(f"utilities() gave {short_repr(u, 24)}, too large for a float64") from None
    except Exception as exc:
        raise _Refused(
            f"utilities() gave {short_repr(u, 24)}; float() of it raised {_exception_text(exc)}"
        ) from exc


class WalkProgress:
    """Nodes walked, on a tqdm bar that appears once a walk gets long (see compile_game)."""

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
            self.bar = tqdm(desc=f"compiling {short_repr(self.game, 60)}", unit=" nodes",
                            unit_scale=True, file=sys.stderr, mininterval=0.5, initial=nodes)
        else:
            self.bar.update(nodes - self.shown)
        self.shown = nodes

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


class Walk:
    """One depth-first walk of ``game``: the per-node columns and the per-infoset tables.

    After :meth:`run`, node ``n`` (in visiting order) has ``code[n]`` (its infoset's id in
    discovery order, :data:`CHANCE_CODE` or :data:`TERMINAL_CODE`), and :meth:`depths` gives
    every node's depth; the chance nodes, in the same order, have ``chance_counts`` outcomes
    whose probabilities and labels follow one another in ``chance_probs`` and
    ``chance_labels``; the terminals, in the same order, have ``num_players`` utilities each in
    ``utilities``. Infoset ``s`` has ``keys[s]``, ``set_player[s]`` and ``set_actions[s]``;
    :meth:`first_nodes` says where the walk met each first. During the walk the latest codes
    and utilities wait in ``code_buffer`` and ``utility_buffer`` (lists, appended to in place)
    until :meth:`flush`.
    """

    CHECK_EVERY = 1 << 13  # nodes between two progress and memory checks

    def __init__(
        self, game: Game, max_nodes: int, max_memory: int | None, progress: WalkProgress
    ) -> None:
        self.game = game
        self.game_text = short_repr(game, 60)
        self.max_nodes = max_nodes
        self.progress = progress
        try:
            num_players = game.num_players
        except Exception as exc:
            raise GameError(
                f"{self.game_text}: reading num_players raised {_exception_text(exc)}"
            ) from exc
        if isinstance(num_players, bool) or not isinstance(num_players, (int, np.integer)) \
                or num_players < 1:
            raise GameError(
                f"{self.game_text}: num_players must be a positive int, got {short_repr(num_players)}"
            )
        self.num_players = int(num_players)
        self.guard = MemoryGuard(max_memory, self.num_players)
        # per node, in visiting order: the codes flushed, then those since
        self.code = array("i")
        self.code_buffer: list[int] = []
        # per chance node, and per terminal, in visiting order
        self.chance_counts = array("i")
        self.chance_probs = array("d")
        self.chance_labels: list[Any] = []
        self.utilities = array("d")
        self.utility_buffer: list[Any] = []  # num_players per terminal, types not yet checked
        self.floats_only = False  # a walker that buffers only floats says so: flush() trusts it
        self.created = 1  # nodes made so far (visited or waiting), for max_nodes and the guard
        self.limit = min(max_nodes, self.CHECK_EVERY)  # the next count of nodes to look at
        self.history_types: set[type] = set()  # classes already found to be History subclasses
        # per infoset, in discovery order
        self.key_to_id: dict[str, int] = {}  # in insertion order: the ids are 0, 1, 2, ...
        self.set_player: list[int] = []
        self.set_actions: list[tuple[Hashable, ...]] = []
        self.set_num_actions = array("i")  # len(set_actions[s]): counting them afterwards cost more
        # rebuilds the history at an action path, for messages found after the walk
        self.replay = self.replay_histories

    @property
    def keys(self) -> list[str]:
        """Each infoset's key, by id."""
        return list(self.key_to_id)

    def first_nodes(self) -> np.ndarray:
        """int64[infosets]: the node where the walk met each infoset first (codes flushed)."""
        codes = np.frombuffer(self.code, dtype=np.int32)
        decision = np.flatnonzero(codes >= 0)
        first = np.full(len(self.set_player), len(codes), dtype=np.int64)
        np.minimum.at(first, codes[decision], decision)
        del codes
        return first

    @property
    def num_nodes(self) -> int:
        """Nodes recorded so far (the number of the node being visited, if any)."""
        return len(self.code) + len(self.code_buffer)

    def flush(self) -> None:
        """Move the buffered codes and utilities into their columns, checking the utilities'
        types (unless :attr:`floats_only`): plain floats and ints at once, anything else with
        :meth:`numbers`' checks."""
        self.flush_codes()
        buffer = self.utility_buffer
        if not buffer:
            return
        if self.floats_only or _PLAIN_UTILITIES.issuperset(map(type, buffer)):
            try:
                self.utilities.fromlist(buffer)  # unchanged if it raises
                buffer.clear()
                return
            except OverflowError:  # an int beyond a float64: numbers() names it
                pass
        players = self.num_players
        first = len(self.utilities) // players  # the buffer's first terminal
        values: list[float] = []
        for row in range(len(buffer) // players):
            raw = buffer[row * players : (row + 1) * players]
            try:
                values.extend(self.utility_values(raw))
            except _Refused as refused:
                node = self.terminal_node(first + row)
                raise self.error(node, self.history_at(node), str(refused)) from refused.__cause__
        self.utilities.fromlist(values)
        buffer.clear()

    def terminal_node(self, terminal: int) -> int:
        """The number of the ``terminal``-th terminal visited (its code flushed)."""
        codes = np.frombuffer(self.code, dtype=np.int32)
        node = int(np.flatnonzero(codes == TERMINAL_CODE)[terminal])
        del codes  # release the column's buffer (it may grow again)
        return node

    def child_counts(self) -> np.ndarray:
        """Each recorded node's number of children, from its code (the codes flushed)."""
        codes = np.frombuffer(self.code, dtype=np.int32)
        counts = np.zeros(len(codes), dtype=np.int32)
        decision = codes >= 0
        counts[decision] = self.action_counts()[codes[decision]]
        chance = codes == CHANCE_CODE
        counts[chance] = np.frombuffer(self.chance_counts, dtype=np.int32)[: int(chance.sum())]
        del codes
        return counts

    def action_counts(self) -> np.ndarray:
        """int32[infosets]: each infoset's number of actions (a copy: the column may grow)."""
        return np.frombuffer(self.set_num_actions, dtype=np.int32).copy()

    def flush_codes(self) -> None:
        """Move the buffered codes into their column (for a message, mid-walk)."""
        self.code.fromlist(self.code_buffer)
        self.code_buffer.clear()

    def depths(self) -> np.ndarray:
        """int32[num_nodes + 1]: every recorded node's depth, then the depth of the node the
        walk is at (or would visit next)."""
        self.flush_codes()
        return preorder_depths(self.child_counts())

    # -- error reporting -----------------------------------------------------------------
    def path_labels(self, node: int, limit: int | None = None) -> tuple[list, int]:
        """The last ``limit`` labels (all if ``None``) on the path to ``node``, root first,
        and ``node``'s depth: rebuilt from the codes, for messages only.

        In visiting order a node's parent is the last node before it one level up, and its
        earlier siblings are the nodes between them on its own level. Only the nodes before
        ``node`` need to be recorded (its own code may still be missing).
        """
        depths = self.depths()[: node + 1]
        codes = np.frombuffer(self.code, dtype=np.int32)
        counts = np.frombuffer(self.chance_counts, dtype=np.int32)
        depth = int(depths[node])
        labels = []
        level = depth
        while level > 0 and (limit is None or len(labels) < limit):
            up = np.flatnonzero(depths[:node] == level - 1)[-1]
            rank = int(np.count_nonzero(depths[up + 1 : node] == level))
            code = int(codes[up])
            if code >= 0:
                labels.append(self.set_actions[code][rank])
            else:  # a chance node: its outcomes follow those of the chance nodes before it
                before = int(np.count_nonzero(codes[:up] == CHANCE_CODE))
                labels.append(self.chance_labels[int(counts[:before].sum()) + rank])
            node, level = up, level - 1
        del codes, counts  # release the columns' buffers (they may grow again)
        return labels[::-1], depth

    def path_text(self, node: int) -> str:
        """The action path to ``node``: the last few labels, trimmed, and the depth when the
        path is long."""
        shown = 6
        labels, depth = self.path_labels(node, shown)
        items = [short_repr(x, 24) for x in labels]
        if depth <= shown:
            return "[" + ", ".join(items) + "]"
        return "[..., " + ", ".join(items) + f"] (depth {depth:,})"

    def error(self, node: int, history: History | None, message: str) -> GameError:
        where = f"history {self.path_text(node)}"
        if history is not None:
            where += f" ({short_repr(history, 80)})"
        return GameError(f"{self.game_text}: {where}: {message}")

    def raised(self, node: int, history: History | None, call: str, exc: Exception) -> GameError:
        if isinstance(exc, MemoryError):
            raise exc  # the walk as a whole ran out of memory: compile_game reports it
        return self.error(node, history, f"{call} raised {_exception_text(exc)}")

    def replay_histories(self, labels: list) -> History:
        """The game's history at the action path ``labels`` (root first)."""
        history = self.game.root()
        for label in labels:
            history = history.child(label)
        return history

    def history_at(self, node: int) -> History | None:
        """The history of an already visited node, built again from its path (for a message
        found after the walk), or ``None`` if the game's code fails doing it."""
        try:
            return self.replay(self.path_labels(node)[0])
        except Exception:
            return None

    # -- the walk ------------------------------------------------------------------------
    def run(self) -> Walk:
        # a game with a walk of its own (OpenSpiel's C++ states) says whether it took over
        walker = getattr(self.game, "_cfrkit_walk", None)
        if walker is None or not walker(self):
            self.walk_histories()
        self.flush()
        self.check_utilities()
        self.progress.tick(self.created)  # the final count on the bar, if one is shown
        return self

    def walk_histories(self) -> None:
        """Depth first through the game's History objects.

        The stack holds the histories still to visit, last first: the unvisited siblings of
        the current path's nodes, a few per level however large the game.
        """
        try:
            root = self.game.root()
        except Exception as exc:
            if isinstance(exc, MemoryError):
                raise
            raise GameError(f"{self.game_text}: root() raised {_exception_text(exc)}") from exc
        if not isinstance(root, History):
            raise GameError(
                f"{self.game_text}: root() returned {_kind_of(root)}, not a cfrkit.History"
            )
        players = self.num_players
        flushed, buffer = self.code, self.code_buffer
        record, add_utilities = buffer.append, self.utility_buffer.extend
        find, set_player, set_actions = self.key_to_id.get, self.set_player, self.set_actions
        add_infoset, visit, checked = self.add_infoset, self.visit, self.history_types
        checked.add(type(root))
        created, limit = self.created, self.limit
        stack = [root]
        pop, extend = stack.pop, stack.extend
        while stack:
            history = pop()
            labels = chance = None
            try:  # the common answers, taken as they come (see the module's docstring)
                terminal = history.is_terminal()
                if terminal is True:
                    raw = history.utilities()
                    kind = type(raw)
                    if (kind is tuple or kind is list) and len(raw) == players:
                        record(TERMINAL_CODE)
                        add_utilities(raw)  # their types are checked by flush()
                        continue
                elif terminal is False:
                    chance = history.is_chance()
                    if chance is False:
                        player = history.current_player()
                        actions = history.actions()
                        key = history.infoset_key()
                        if type(player) is int and type(actions) is tuple and type(key) is str:
                            set_id = find(key)
                            if set_id is not None:
                                if set_player[set_id] == player and set_actions[set_id] == actions:
                                    record(set_id)
                                    labels = actions
                            elif 0 <= player < players and actions \
                                    and len(set(actions)) == len(actions) \
                                    and label_problem(actions) is None:
                                record(add_infoset(key, player, actions))
                                labels = actions
            except MemoryError:
                raise  # the walk as a whole ran out: compile_game reports it
            except Exception:
                pass  # visit() asks again and names what failed
            if labels is None:
                node = len(flushed) + len(buffer)
                # a chance node has answered is_terminal() and is_chance() already
                labels = self.chance(node, history) if chance is True else visit(node, history)
                if not labels:
                    continue
            created += len(labels)
            if created > limit:
                limit = self.over_limit(len(flushed) + len(buffer) - 1, created)
            children: list = []
            add = children.append
            child = history.child
            try:
                for label in labels:  # not map(): a StopIteration raised in child() would end it
                    add(child(label))
            except Exception as exc:
                label = short_repr(labels[len(children)], 24)
                node = len(flushed) + len(buffer) - 1
                raise self.raised(node, history, f"child({label})", exc) from exc
            if not checked.issuperset(map(type, children)):
                self.check_children(len(flushed) + len(buffer) - 1, history, labels, children)
            children.reverse()  # last first: the first child is visited first
            extend(children)
        self.created = created

    def check_children(self, node: int, history: History, labels: tuple, children: list) -> None:
        """Every child a History (isinstance on an ABC once per class, not per node)."""
        for label, below in zip(labels, children):
            if type(below) not in self.history_types:
                if not isinstance(below, History):
                    raise self.error(
                        node, history,
                        f"child({short_repr(label, 24)}) returned {_kind_of(below)}, not a History",
                    )
                self.history_types.add(type(below))

    def visit(self, node: int, history: History) -> tuple:
        """Ask ``history`` what it is, check and record it; return the labels of its edges
        (empty at a terminal). ``node`` is its number (:attr:`num_nodes` before it is recorded).

        Every answer is checked here or in the helpers that say what is wrong, but for the
        types of a tuple or list of utilities, which :meth:`flush` checks a few thousand at a
        time.
        """
        try:
            terminal = history.is_terminal()
        except Exception as exc:
            raise self.raised(node, history, "is_terminal()", exc) from exc
        if terminal is not False and terminal is not True:
            terminal = self.boolean(node, history, "is_terminal()", terminal)
        if terminal:
            try:
                raw = history.utilities()
            except Exception as exc:
                raise self.raised(node, history, "utilities()", exc) from exc
            kind = type(raw)
            if (kind is tuple or kind is list) and len(raw) == self.num_players:
                self.utility_buffer.extend(raw)  # types checked by flush(), bounds after the walk
            else:
                self.utility_buffer.extend(self.numbers(node, history, raw))
            self.code_buffer.append(TERMINAL_CODE)
            return ()
        try:
            chance = history.is_chance()
        except Exception as exc:
            raise self.raised(node, history, "is_chance()", exc) from exc
        if chance is not False and chance is not True:
            chance = self.boolean(node, history, "is_chance()", chance)
        if chance:
            return self.chance(node, history)
        try:
            player = history.current_player()
        except Exception as exc:
            raise self.raised(node, history, "current_player()", exc) from exc
        if type(player) is not int:
            if isinstance(player, (bool, np.bool_)) or not isinstance(player, (int, np.integer)):
                raise self.error(
                    node, history, f"current_player() returned {_kind_of(player)}, not an int"
                )
            player = int(player)
        if not 0 <= player < self.num_players:
            raise self.error(
                node, history,
                f"current_player() is {player}, out of range for "
                f"{counted(self.num_players, 'player')}",
            )
        try:
            raw = history.actions()
        except Exception as exc:
            raise self.raised(node, history, "actions()", exc) from exc
        actions = raw if type(raw) is tuple else self.sequence(node, history, "actions()", raw)
        if not actions:
            raise self.error(node, history, "actions() returned no actions")
        try:
            key = history.infoset_key()
        except Exception as exc:
            raise self.raised(node, history, "infoset_key()", exc) from exc
        if type(key) is not str:
            if not isinstance(key, str):
                raise self.error(node, history, f"infoset_key() returned {_kind_of(key)}, not a str")
            # a subclass (numpy.str_) as the plain str it holds: saved files and policies
            # take keys of type str only
            key = str.__str__(key)
        set_id = self.key_to_id.get(key)
        if set_id is None:
            self.distinct(node, history, "actions()", "action", actions)
            problem = label_problem(actions)
            if problem is not None:
                raise self.error(node, history, f"infoset {short_repr(key, 40)}: {problem}")
            set_id = self.add_infoset(key, player, actions)
        else:
            try:
                same = self.set_player[set_id] == player and self.set_actions[set_id] == actions
            except Exception:
                same = False
            if not same:
                self.same_infoset(node, history, key, set_id, player, actions)
        self.code_buffer.append(set_id)
        return actions

    def over_limit(self, node: int, created: int) -> int:
        """Past ``max_nodes`` or the next check: stop with a GameError, or tick the progress
        bar, ask the memory guard, and return the next count at which to look again."""
        self.created = created
        if created > self.max_nodes:
            raise GameError(
                f"{self.game_text}: the tree has more than max_nodes={self.max_nodes} nodes "
                f"(reached below history {self.path_text(node)}); pass a larger max_nodes "
                "if this is intended"
            )
        self.progress.tick(created)
        over = self.guard.over(created)
        if over is not None:
            raise GameError(
                f"{self.game_text}: compiling stopped at {created:,} nodes (depth "
                f"{int(self.depths()[node]) + 1:,}): {over}"
            )
        self.flush()  # every few thousand nodes: the buffers stay small
        self.limit = min(self.max_nodes, (created // self.CHECK_EVERY + 1) * self.CHECK_EVERY)
        return self.limit

    def check_utilities(self) -> None:
        """Every utility (flushed) within +-MAX_ABS_UTILITY (for a walk that recorded them
        unchecked); the first one that is not gets :meth:`numbers`' message."""
        values = np.frombuffer(self.utilities, dtype=np.float64)
        good = np.abs(values) <= MAX_ABS_UTILITY  # NaN fails too
        if good.all():
            return
        terminal = int(np.flatnonzero(~good)[0]) // self.num_players
        del values
        node = self.terminal_node(terminal)
        start = terminal * self.num_players
        raw = self.utilities[start : start + self.num_players].tolist()
        self.numbers(node, self.history_at(node), raw)
        raise AssertionError("unreachable: numbers() refuses the value")  # pragma: no cover

    def boolean(self, node: int, history: History, call: str, value: object) -> bool:
        if isinstance(value, np.bool_):
            return bool(value)
        raise self.error(node, history, f"{call} returned {_kind_of(value)}, not a bool")

    # -- the three kinds of node ---------------------------------------------------------
    def numbers(self, node: int, history: History | None, raw: object) -> list[float]:
        """The utilities as floats: a sequence of ``num_players`` real numbers within
        ``MAX_ABS_UTILITY``; else a GameError naming ``history``."""
        try:
            return self.utility_values(raw)
        except _Refused as refused:
            raise self.error(node, history, str(refused)) from refused.__cause__

    def utility_values(self, raw: object) -> list[float]:
        """:meth:`numbers` without the history: raises :class:`_Refused` with the message."""
        players = self.num_players
        expected = f"expected a sequence of {players} numbers"
        kind = type(raw)
        if kind is tuple or kind is list:
            items = raw
        elif isinstance(raw, np.ndarray):
            if raw.ndim != 1 or raw.dtype.kind not in "iuf":
                raise _Refused(
                    f"utilities() returned an array of dtype {raw.dtype} and shape "
                    f"{raw.shape}; {expected}"
                )
            items = raw.tolist()
        elif isinstance(raw, Sequence) and not isinstance(raw, _NOT_SEQUENCES):
            items = list(raw)
        else:
            raise _Refused(f"utilities() returned {_kind_of(raw)}; {expected}")
        if len(items) != players:
            raise _Refused(
                f"utilities() gave {counted(len(items), 'value')} for {counted(players, 'player')}"
            )
        values = []
        for u in items:
            kind = type(u)
            if kind is float:
                value = u
            elif kind is int and -_INT_LIMIT <= u <= _INT_LIMIT:
                value = float(u)
            else:
                value = _real(u)
            if not -MAX_ABS_UTILITY <= value <= MAX_ABS_UTILITY:  # NaN fails too
                if not math.isfinite(value):
                    raise _Refused(f"utilities() gave {value!r}, not a finite number")
                raise _Refused(
                    f"utilities() gave {value:.3g}, beyond +-{MAX_ABS_UTILITY:.0e}, the most the "
                    "solvers can accumulate without overflow; rescale the payoffs"
                )
            values.append(value)
        return values

    def sequence(self, node: int, history: History, call: str, raw: object) -> tuple:
        """An ordered sequence the user returned, as a tuple; sets, dicts, strings and
        one-shot iterators are refused (no order, or not a list of items)."""
        kind = type(raw)
        if kind is tuple:
            return raw
        if kind is list:
            return tuple(raw)
        if isinstance(raw, np.ndarray) and raw.ndim == 1:
            return tuple(raw.tolist())
        if isinstance(raw, Sequence) and not isinstance(raw, _NOT_SEQUENCES):
            return tuple(raw)
        raise self.error(
            node, history, f"{call} returned {_kind_of(raw)}; expected a list or tuple"
        )

    def distinct(self, node: int, history: History, call: str, what: str, labels: tuple) -> None:
        """Labels must be hashable and distinct: one set, and one more pass on failure."""
        try:
            unique = len(set(labels))
        except Exception as exc:
            for label in labels:
                try:
                    hash(label)
                except Exception:
                    raise self.error(
                        node, history, f"{call} gave the unhashable label {_kind_of(label)}"
                    ) from exc
            raise self.error(node, history, f"{call}: comparing labels raised "
                             f"{_exception_text(exc)}") from exc
        if unique != len(labels):
            seen: set = set()
            for label in labels:
                if label in seen:
                    raise self.error(
                        node, history,
                        f"{call}: duplicate {what} {short_repr(label, 24)} (among {len(labels):,})",
                    )
                seen.add(label)

    def chance(self, node: int, history: History) -> tuple:
        try:
            raw = history.chance_outcomes()
        except Exception as exc:
            raise self.raised(node, history, "chance_outcomes()", exc) from exc
        outcomes = self.sequence(node, history, "chance_outcomes()", raw)
        if not outcomes:
            raise self.error(node, history, "chance_outcomes() returned no outcomes")
        labels = []
        probs = []
        for item in outcomes:
            kind = type(item)
            if not (kind is tuple or kind is list or (
                    isinstance(item, Sequence) and not isinstance(item, _NOT_SEQUENCES))) \
                    or len(item) != 2:
                raise self.error(
                    node, history,
                    f"chance_outcomes() gave {_kind_of(item)}, not a (label, probability) pair",
                )
            label, prob = item[0], item[1]
            kind = type(prob)
            if kind is not float and kind is not int and (
                    isinstance(prob, (bool, np.bool_)) or not isinstance(prob, numbers.Real)):
                raise self.error(
                    node, history,
                    f"chance_outcomes(): outcome {short_repr(label, 24)} has probability "
                    f"{_kind_of(prob)}, not a real number",
                )
            try:
                value = float(prob)
            except Exception as exc:
                raise self.error(
                    node, history,
                    f"chance_outcomes(): outcome {short_repr(label, 24)}: float() of its "
                    f"probability raised {_exception_text(exc)}",
                ) from exc
            if not 0.0 <= value < math.inf:  # NaN fails too; the sum bounds the rest
                raise self.error(
                    node, history,
                    f"chance_outcomes(): outcome {short_repr(label, 24)} has probability {value!r}",
                )
            labels.append(label)
            probs.append(value)
        labels_tuple = tuple(labels)
        self.distinct(node, history, "chance_outcomes()", "chance outcome", labels_tuple)
        total = math.fsum(probs)
        if abs(total - 1.0) > PROB_TOLERANCE:
            raise self.error(
                node, history,
                f"chance_outcomes(): probabilities sum to {total!r}, not 1 (tolerance "
                f"{PROB_TOLERANCE:g})",
            )
        self.code_buffer.append(CHANCE_CODE)
        self.chance_counts.append(len(labels_tuple))
        self.chance_probs.extend(probs)
        self.chance_labels.extend(labels_tuple)
        return labels_tuple

    def add_infoset(self, key: str, player: int, actions: tuple) -> int:
        """A new infoset (its actions checked): its id."""
        set_id = len(self.set_player)
        self.set_player.append(player)
        self.set_actions.append(actions)
        self.set_num_actions.append(len(actions))
        self.key_to_id[key] = set_id  # last: a key is known only with its rows
        return set_id

    def same_infoset(self, node: int, history: History, key: str, set_id: int, player: int,
                     actions: tuple) -> None:
        """A known key: same player, same actions (perfect recall is checked by the layout,
        on whole paths)."""
        if self.set_player[set_id] != player:
            raise self.error(
                node, history,
                f"infoset {short_repr(key, 40)} is player {player}'s here but player "
                f"{self.set_player[set_id]}'s {self.first_seen(set_id)}",
            )
        try:
            same = self.set_actions[set_id] == actions
        except Exception as exc:
            raise self.error(node, history, f"actions(): comparing labels raised "
                             f"{_exception_text(exc)}") from exc
        if not same:
            raise self.error(
                node, history,
                f"infoset {short_repr(key, 40)} has actions {short_repr(actions, 60)} here but "
                f"{short_repr(self.set_actions[set_id], 60)} {self.first_seen(set_id)}",
            )

    def imperfect_recall(self, node: int, set_id: int, here: tuple[int, int] | None,
                         first: tuple[int, int] | None) -> GameError:
        """The message for ``node``, whose player reaches infoset ``set_id`` after its own
        action ``here`` while the infoset's first history came after ``first`` (each an
        (infoset id, action index) pair, or None for no earlier action of its own)."""
        return self.error(
            node, self.history_at(node),
            f"imperfect recall: player {self.set_player[set_id]} reaches infoset "
            f"{short_repr(self.keys[set_id], 40)} after {self.describe(here)} here but after "
            f"{self.describe(first)} {self.first_seen(set_id)}",
        )

    def first_seen(self, set_id: int) -> str:
        self.flush_codes()
        return f"at history {self.path_text(int(self.first_nodes()[set_id]))}"

    def describe(self, action: tuple[int, int] | None) -> str:
        if action is None:
            return "no earlier action of its own"
        set_id, index = action
        return (f"its action {short_repr(self.set_actions[set_id][index], 24)} at infoset "
                f"{short_repr(self.keys[set_id], 40)}")
