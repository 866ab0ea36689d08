"""The one walk of a game: call the user's History methods, check every answer, record nodes.

The walk is breadth first. Every call into the user's code is guarded: an exception raised by
it, or an answer of the wrong type or value, becomes a :class:`~cfrkit.GameError` naming the
method and the history (its action path from the root, trimmed, with its depth, and its
``repr``, trimmed -- or a placeholder if ``repr`` itself fails), with the original exception
chained. Messages stay short however large the game, and every check costs O(1) or O(number
of actions) per node.

Nodes are numbered in the order they are created, which is also the order they are expanded
(a level at a time), so the per-node records are typed columns (``array.array``) appended in
node order -- a few bytes per node instead of a Python object per field -- that the layout turns
into numpy arrays without copying. The histories of a level are dropped as soon as they are
expanded.
"""

from __future__ import annotations

import bisect
import math
import numbers
import os
import sys
from array import array
from collections.abc import Hashable, Mapping, Sequence, Set
from typing import Any

import numpy as np

from ..game import Game, GameError, History
from .._text import short_repr
from ..limits import MAX_ABS_UTILITY
from .memory import MemoryGuard

__all__ = ["CHANCE", "DECISION", "TERMINAL", "Walk", "short_repr"]

TERMINAL, CHANCE, DECISION = 0, 1, 2
PROB_TOLERANCE = 1e-9

_NOT_SEQUENCES = (str, bytes, bytearray, memoryview, Mapping, Set)
_INT_LIMIT = int(MAX_ABS_UTILITY)  # ints within it convert to float exactly enough, and fast


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
    """One breadth-first walk of ``game``: the per-node columns and the per-infoset tables.

    After :meth:`run`, node ``n``'s records are ``kind[n]``, ``player[n]`` (-1 off decision
    nodes), ``infoset[n]`` (discovery-order id, -1 off decision nodes), ``parent[n]``,
    ``label[n]`` (the action on the edge from the parent), ``first_child[n]`` and
    ``num_children[n]``; chance probabilities follow in ``chance_probs``, chance node by
    chance node, and terminal utilities in ``utilities``, ``num_players`` per terminal, for the
    terminals listed in ``terminals``.
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
        # per node, in node order
        self.kind = array("b")
        self.player = array("i")
        self.infoset = array("i")
        self.parent = array("i")
        self.first_child = array("i")
        self.num_children = array("i")
        self.label: list[Any] = []
        self.chance_probs = array("d")
        self.terminals = array("i")
        self.utilities = array("d")
        self.level_starts: list[int] = []  # first node of each depth
        self.history_types: set[type] = set()  # classes already found to be History subclasses
        # per infoset, in discovery order
        self.key_to_id: dict[str, int] = {}
        self.keys: list[str] = []
        self.set_player: list[int] = []
        self.set_actions: list[tuple[Hashable, ...]] = []
        self.set_previous: list[int] = []  # the player's last own action code before, or -1
        self.set_first_node: list[int] = []
        self.set_codes: list[tuple[int, ...]] = []  # action codes: code_base + action index
        self.set_code_base: list[int] = []
        self.num_codes = 0

    # -- error reporting -----------------------------------------------------------------
    def depth(self, node: int) -> int:
        return bisect.bisect_right(self.level_starts, node) - 1

    def path_text(self, node: int, extra: tuple = ()) -> str:
        """The action path to ``node`` (and ``extra`` labels below it): the last few labels,
        trimmed, and the depth when the path is long."""
        shown = 6
        labels = list(extra)[::-1]
        depth = self.depth(node) + len(extra)
        while node > 0 and len(labels) < shown:
            labels.append(self.label[node])
            node = self.parent[node]
        items = [short_repr(x, 24) for x in labels[::-1]]
        if depth <= shown:
            return "[" + ", ".join(items) + "]"
        return "[..., " + ", ".join(items) + f"] (depth {depth:,})"

    def error(self, node: int, history: History | None, message: str) -> GameError:
        where = f"history {self.path_text(node)}"
        if history is not None:
            where += f" ({short_repr(history, 80)})"
        return GameError(f"{self.game_text}: {where}: {message}")

    def raised(self, node: int, history: History, call: str, exc: Exception) -> GameError:
        if isinstance(exc, MemoryError):
            raise exc  # the walk as a whole ran out of memory: compile_game reports it
        return self.error(node, history, f"{call} raised {_exception_text(exc)}")

    # -- the walk ------------------------------------------------------------------------
    def run(self) -> Walk:
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
        self.parent.append(-1)
        self.label.append(None)
        histories: list[Any] = [root]
        previous: list[tuple[int, ...]] = [(-1,) * self.num_players]
        start = 0
        while histories:
            self.level_starts.append(start)
            next_histories: list[Any] = []
            next_previous: list[tuple[int, ...]] = []
            for i in range(len(histories)):
                history, histories[i] = histories[i], None  # free each level as it goes
                self.expand(start + i, history, previous[i], next_histories, next_previous)
            start += len(histories)
            histories, previous = next_histories, next_previous
        self.progress.tick(len(self.parent))  # the final count on the bar, if one is shown
        return self

    def expand(self, node: int, history: History, previous: tuple, out: list, out_previous: list) -> None:
        """Ask ``history`` what it is, record it, and queue its children."""
        try:
            terminal = history.is_terminal()
        except Exception as exc:
            raise self.raised(node, history, "is_terminal()", exc) from exc
        if terminal is not False and terminal is not True:
            terminal = self.boolean(node, history, "is_terminal()", terminal)
        if terminal:
            self.terminal(node, history)
            return
        try:
            chance = history.is_chance()
        except Exception as exc:
            raise self.raised(node, history, "is_chance()", exc) from exc
        if chance is not False and chance is not True:
            chance = self.boolean(node, history, "is_chance()", chance)
        if chance:
            labels = self.chance(node, history)
            out_previous.extend([previous] * len(labels))
        else:
            labels, player, codes = self.decision(node, history, previous)
            head, tail = previous[:player], previous[player + 1:]
            out_previous.extend([head + (code,) + tail for code in codes])
        first = len(self.parent)
        count = len(labels)
        if first + count > self.max_nodes:
            raise GameError(
                f"{self.game_text}: the tree has more than max_nodes={self.max_nodes} nodes "
                f"(reached below history {self.path_text(node)}); pass a larger max_nodes to "
                "compile_game() if this is intended"
            )
        self.first_child.append(first)
        self.num_children.append(count)
        self.parent.fromlist([node] * count)
        self.label.extend(labels)
        child = history.child
        checked = self.history_types
        for label in labels:
            try:
                below = child(label)
            except Exception as exc:
                raise self.raised(node, history, f"child({short_repr(label, 24)})", exc) from exc
            if type(below) not in checked:  # isinstance on an ABC once per class, not per node
                if not isinstance(below, History):
                    raise self.error(
                        node, history,
                        f"child({short_repr(label, 24)}) returned {_kind_of(below)}, not a History",
                    )
                checked.add(type(below))
            out.append(below)
        if (first + count) // self.CHECK_EVERY != first // self.CHECK_EVERY:
            self.check_size(first + count, node)

    def check_size(self, nodes: int, node: int) -> None:
        self.progress.tick(nodes)
        over = self.guard.over(nodes)
        if over is not None:
            raise GameError(
                f"{self.game_text}: compiling stopped at {nodes:,} nodes (depth "
                f"{self.depth(node) + 1:,}): {over}"
            )

    def boolean(self, node: int, history: History, call: str, value: object) -> bool:
        if isinstance(value, np.bool_):
            return bool(value)
        raise self.error(node, history, f"{call} returned {_kind_of(value)}, not a bool")

    # -- the three kinds of node ---------------------------------------------------------
    def record(self, kind: int, player: int = -1, infoset: int = -1) -> None:
        self.kind.append(kind)
        self.player.append(player)
        self.infoset.append(infoset)

    def terminal(self, node: int, history: History) -> None:
        try:
            raw = history.utilities()
        except Exception as exc:
            raise self.raised(node, history, "utilities()", exc) from exc
        values = self.numbers(node, history, raw)
        self.record(TERMINAL)
        self.first_child.append(-1)
        self.num_children.append(0)
        self.terminals.append(node)
        self.utilities.extend(values)

    def numbers(self, node: int, history: History, raw: object) -> list[float]:
        """The utilities as floats: a sequence of ``num_players`` real numbers within
        ``MAX_ABS_UTILITY``."""
        players = self.num_players
        expected = f"expected a sequence of {players} numbers"
        kind = type(raw)
        if kind is tuple or kind is list:
            items = raw
        elif isinstance(raw, np.ndarray):
            if raw.ndim != 1 or raw.dtype.kind not in "iuf":
                raise self.error(
                    node, history,
                    f"utilities() returned an array of dtype {raw.dtype} and shape "
                    f"{raw.shape}; {expected}",
                )
            items = raw.tolist()
        elif isinstance(raw, Sequence) and not isinstance(raw, _NOT_SEQUENCES):
            items = list(raw)
        else:
            raise self.error(node, history, f"utilities() returned {_kind_of(raw)}; {expected}")
        if len(items) != players:
            raise self.error(
                node, history, f"utilities() gave {len(items)} values for {players} players"
            )
        values = []
        for u in items:
            kind = type(u)
            if kind is float:
                value = u
            elif kind is int and -_INT_LIMIT <= u <= _INT_LIMIT:
                value = float(u)
            else:
                value = self.real(node, history, u)
            if not -MAX_ABS_UTILITY <= value <= MAX_ABS_UTILITY:  # NaN fails too
                if not math.isfinite(value):
                    raise self.error(node, history, f"utilities() gave {value!r}, not a finite number")
                raise self.error(
                    node, history,
                    f"utilities() gave {value:.3g}, beyond +-{MAX_ABS_UTILITY:.0e}, the most the "
                    "solvers can accumulate without overflow; rescale the payoffs",
                )
            values.append(value)
        return values

    def real(self, node: int, history: History, u: object) -> float:
        """A utility that is not a float: an int, a numpy scalar or another real number."""
        if type(u) is not int and (isinstance(u, (bool, np.bool_)) or not isinstance(u, numbers.Real)):
            raise self.error(node, history, f"utilities() gave {_kind_of(u)}, not a real number")
        try:
            return float(u)
        except OverflowError:
            raise self.error(
                node, history, f"utilities() gave {short_repr(u, 24)}, too large for a float64"
            ) from None
        except Exception as exc:
            raise self.error(
                node, history,
                f"utilities() gave {short_repr(u, 24)}; float() of it raised {_exception_text(exc)}",
            ) from exc

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
        self.record(CHANCE)
        self.chance_probs.extend(probs)
        return labels_tuple

    def decision(self, node: int, history: History, previous: tuple) -> tuple:
        """Record a decision node; return its actions, player and action codes."""
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
                f"current_player() is {player}, out of range for {self.num_players} players",
            )
        try:
            raw = history.actions()
        except Exception as exc:
            raise self.raised(node, history, "actions()", exc) from exc
        actions = self.sequence(node, history, "actions()", raw)
        if not actions:
            raise self.error(node, history, "actions() returned no actions")
        try:
            key = history.infoset_key()
        except Exception as exc:
            raise self.raised(node, history, "infoset_key()", exc) from exc
        if not isinstance(key, str):
            raise self.error(node, history, f"infoset_key() returned {_kind_of(key)}, not a str")
        set_id = self.key_to_id.get(key)
        if set_id is None:
            self.distinct(node, history, "actions()", "action", actions)
            set_id = len(self.keys)
            self.key_to_id[key] = set_id
            self.keys.append(key)
            self.set_player.append(player)
            self.set_actions.append(actions)
            self.set_previous.append(previous[player])
            self.set_first_node.append(node)
            self.set_code_base.append(self.num_codes)
            self.set_codes.append(tuple(range(self.num_codes, self.num_codes + len(actions))))
            self.num_codes += len(actions)
        else:
            self.same_infoset(node, history, key, set_id, player, actions, previous[player])
        self.record(DECISION, player, set_id)
        return actions, player, self.set_codes[set_id]

    def same_infoset(self, node: int, history: History, key: str, set_id: int, player: int,
                     actions: tuple, previous: int) -> None:
        """A known key: same player, same actions, same own past (perfect recall)."""
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
        if self.set_previous[set_id] != previous:
            raise self.error(
                node, history,
                f"imperfect recall: player {player} reaches infoset {short_repr(key, 40)} after "
                f"{self.describe_code(previous)} here but after "
                f"{self.describe_code(self.set_previous[set_id])} {self.first_seen(set_id)}",
            )

    def first_seen(self, set_id: int) -> str:
        return f"at history {self.path_text(self.set_first_node[set_id])}"

    def describe_code(self, code: int) -> str:
        if code < 0:
            return "no earlier action of its own"
        set_id = bisect.bisect_right(self.set_code_base, code) - 1
        action = self.set_actions[set_id][code - self.set_code_base[set_id]]
        return (f"its action {short_repr(action, 24)} at infoset "
                f"{short_repr(self.keys[set_id], 40)}")

    def slot_of(self, code: int) -> tuple[int, int]:
        """(infoset id, action index) of an action code."""
        set_id = bisect.bisect_right(self.set_code_base, code) - 1
        return set_id, code - self.set_code_base[set_id]
