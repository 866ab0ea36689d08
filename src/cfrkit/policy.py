"""Policy: a read-only mapping view over a dense ``[infoset, action]`` probability table.

A policy can be written to one human-readable JSON file with :meth:`Policy.save` and read back
with :func:`load_policy`; the round trip is exact (bit for bit).
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Hashable, Iterator, Mapping, Sequence
from pathlib import Path
from types import MappingProxyType
from typing import Any

import numpy as np

from ._files import replacing
from ._frozen import frozen_copy
from ._numbers import check_bool, integer_value
from ._text import short_repr
from .game import Game
from .tree import CompiledGame, compile_game
# files name labels alike; a policy matches them to the game's
from .tree.store import _decode_label, _fast_key

__all__ = ["Policy", "load_policy", "policy_rows"]

_ROW_TOLERANCE = 1e-9

_FORMAT = "cfrkit.policy"  # the "format" marker of a policy file
_FORMAT_VERSION = 1  # the file format version save() writes and load_policy() reads


def _check_normalise(normalise: object) -> None:
    check_bool("Policy: normalise", normalise)


class Policy(Mapping):
    """A behavioural strategy profile: infoset key -> {action: probability}.

    A ``Policy`` is immutable and belongs to one compiled game. It reads like a dict of dicts
    (``policy["Qpb"]["bet"]``), and its probabilities are stored as one float64 array over the
    game's action slots (:attr:`table`), which is what the evaluation kernels use.

    Build one with :meth:`uniform`, :meth:`from_dict`, :func:`load_policy`, or from a trainer
    (``trainer.average_policy()``). ``str(policy)`` is :meth:`format_table`.

    Parameters
    ----------
    game : Game or CompiledGame
        The game the policy belongs to.
    table : array_like
        One probability per action slot of the compiled game (infoset ``I`` owns the slots
        ``tree.infoset_first_slot[I]`` onwards, one per action, in the game's order). It is
        copied.
    normalise : bool, optional
        Divide each infoset's row by its sum first (default ``False``). A row summing to 0 is
        an error, not made uniform: no strategy is implied by it.

    Raises
    ------
    ValueError
        Naming the infoset key (and action) and the value, if ``table`` does not hold real
        numbers of the right shape, an entry is negative or not finite, or an infoset's row
        does not sum to 1 within 1e-9 (the sum is ``math.fsum`` of the row, as in
        :meth:`from_dict`); with ``normalise=True``, if a row sums to 0 or overflows.
    """

    __slots__ = ("_game", "_table")

    def __init__(
        self, game: Game | CompiledGame, table: np.ndarray, *, normalise: bool = False
    ) -> None:
        compiled = compile_game(game)
        _check_normalise(normalise)
        try:
            given = np.asarray(table)
        except (TypeError, ValueError):  # ragged or otherwise not an array
            raise ValueError("Policy: table must be an array of numbers") from None
        if given.dtype.kind not in "biuf":  # np.float64() would parse strings, call float()
            raise ValueError(f"Policy: table must hold real numbers, not {given.dtype}")
        size = compiled.tree.num_action_slots
        if given.shape != (size,):
            raise ValueError(f"Policy: table must have shape ({size},), got {given.shape}")
        # the data lives in an immutable bytes object (a copy, checked after copying): an array
        # over it can never be made writable, as an array owning its data could be, and .table
        # hands out fresh arrays over it, so no caller holds the array this policy reads
        private = frozen_copy(given, np.float64)
        _check_entries(compiled, private)
        if normalise:
            private = frozen_copy(_normalised(compiled, private))
        _check_sums(compiled, private)
        object.__setattr__(self, "_game", compiled)
        object.__setattr__(self, "_table", private)

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError("Policy is immutable")

    def __delattr__(self, name: str) -> None:
        raise AttributeError("Policy is immutable")

    def __reduce__(self) -> tuple:
        # pickle and copy rebuild through __init__ (validated, with a fresh private buffer)
        return (type(self), (self._game, self.table))

    # -- construction -------------------------------------------------------------------------
    @classmethod
    def uniform(cls, game: Game | CompiledGame) -> Policy:
        """Every infoset plays each of its actions with probability ``1 / |A(I)|``.

        Parameters
        ----------
        game : Game or CompiledGame
            The game (compiled if it is not yet).

        Returns
        -------
        Policy
        """
        compiled = compile_game(game)
        tree = compiled.tree
        return cls(compiled, 1.0 / np.repeat(tree.infoset_num_actions, tree.infoset_num_actions))

    @classmethod
    def from_dict(
        cls, game: Game | CompiledGame, mapping: Mapping, *, normalise: bool = False
    ) -> Policy:
        """Build a policy from ``{infoset key: row}`` covering every infoset of ``game``.

        A row is either a mapping ``{action: probability}`` (actions left out get 0) or a
        sequence of probabilities in the infoset's action order. Rows must be non-negative and
        sum to 1 within 1e-9.

        In a mapping row, a string that is not an action of the infoset but is the text of
        exactly one of its actions -- ``str(action)``, or the key ``json.dumps`` writes for it
        (``"true"``, ``"null"``) -- stands for that action. So a :meth:`to_dict` that went
        through JSON, where the integer action ``1`` became the key ``"1"``, reads back as it
        was.

        Parameters
        ----------
        game : Game or CompiledGame
            The game (compiled if it is not yet).
        mapping : Mapping
            ``{infoset key: row}``, one row per infoset; a :class:`Policy` of ``game`` comes
            back as it is.
        normalise : bool, optional
            Divide each row by its sum first, as :class:`Policy` does (default ``False``): for
            rows rounded on the way, e.g. through float32.

        Returns
        -------
        Policy

        Raises
        ------
        ValueError
            Naming the key of an unknown or missing infoset, an unknown or repeated action, or a
            row that is negative, non-finite or does not sum to 1.
        """
        compiled = compile_game(game)
        _check_normalise(normalise)  # also when the policy is returned as it is
        if isinstance(mapping, Policy) and mapping.game is compiled:
            return mapping
        rows = policy_rows(compiled, mapping, sums=not normalise)
        missing = [k for k in compiled.infoset_keys if compiled.key_index[k] not in rows]
        if missing:
            shown = ", ".join(repr(k) for k in missing[:5])
            more = f" and {len(missing) - 5} more" if len(missing) > 5 else ""
            raise ValueError(f"policy has no row for infoset(s) {shown}{more}")
        table = np.empty(compiled.tree.num_action_slots)
        for infoset, row in rows.items():
            start = compiled.tree.infoset_first_slot[infoset]
            table[start : start + row.shape[0]] = row
        return cls(compiled, table, normalise=normalise)

    # -- reading ------------------------------------------------------------------------------
    @property
    def game(self) -> CompiledGame:
        """The compiled game this policy belongs to."""
        return self._game

    @property
    def table(self) -> np.ndarray:
        """The probabilities over the game's action slots (read-only float64 array).

        Each access returns a new array over the policy's immutable buffer: it cannot be made
        writable, and changing its shape or dtype leaves the policy as it is.
        """
        return np.frombuffer(self._table.base, dtype=np.float64)

    def __getitem__(self, key: str) -> Mapping[Hashable, float]:
        infoset = self._game.key_index[key]
        start = self._game.tree.infoset_first_slot[infoset]
        actions = self._game.infoset_actions[infoset]
        row = self._table[start : start + len(actions)]
        return MappingProxyType({a: float(p) for a, p in zip(actions, row)})

    def __iter__(self) -> Iterator[str]:
        return iter(self._game.infoset_keys)

    def __len__(self) -> int:
        return len(self._game.infoset_keys)

    def __contains__(self, key: object) -> bool:
        return key in self._game.key_index

    def to_dict(self) -> dict[str, dict[Hashable, float]]:
        """A plain ``{key: {action: probability}}`` copy, for printing or further processing.

        To store a policy in a file use :meth:`save` and :func:`load_policy`, which keep action
        labels of every type and round-trip exactly. (``json.dumps`` of this dict turns integer
        actions into string keys; :meth:`from_dict` accepts those back, but tuple actions are
        not JSON keys at all.)
        """
        return {key: dict(self[key]) for key in self}

    def _sorted_infosets(self) -> list[int]:
        """Infoset indices ordered by player, then key."""
        compiled = self._game
        players = compiled.tree.infoset_player
        keys = compiled.infoset_keys
        return sorted(range(len(keys)), key=lambda i: (int(players[i]), keys[i]))

    def format_table(self, digits: int = 3) -> str:
        """The policy as a table, one line per infoset, ordered by player and then key.

        Each line shows the infoset key, its player and ``action: probability`` for each action
        in the game's order, with probabilities rounded to ``digits`` decimals (unprintable
        characters of keys and labels, such as newlines, escaped as ``\\n``). Columns are
        aligned; when some infoset has every action label of the game (in an order the others
        agree with, as in Kuhn and Leduc poker), each label keeps its own column.

        Parameters
        ----------
        digits : int, optional
            Decimals shown per probability, 0 to 20 (default 3).

        Returns
        -------
        str
            The lines joined by ``"\\n"``, no trailing newline; ``""`` for a game without
            infosets.

        Examples
        --------
        >>> from cfrkit.games import RockPaperScissors
        >>> import cfrkit
        >>> print(cfrkit.Policy.uniform(RockPaperScissors()).format_table(digits=2))
        P0  player 0  rock: 0.33  paper: 0.33  scissors: 0.33
        P1  player 1  rock: 0.33  paper: 0.33  scissors: 0.33
        """
        if integer_value(digits) is None or not 0 <= digits <= 20:  # past 20: rounding only
            raise ValueError(f"digits must be an integer in [0, 20], got {short_repr(digits)}")
        compiled = self._game
        order = self._sorted_infosets()
        if not order:
            return ""
        first = compiled.tree.infoset_first_slot
        table = self._table.tolist()
        cells: list[list[str]] = []
        for i in order:
            actions = compiled.infoset_actions[i]
            probs = table[first[i] : first[i] + len(actions)]
            cells.append([f"{_one_line(str(a))}: {p + 0.0:.{digits}f}"
                          for a, p in zip(actions, probs)])
        columns = _label_columns([compiled.infoset_actions[i] for i in order])
        if columns is not None:  # place each cell in its label's column
            placed = []
            for i, row in zip(order, cells):
                line = [""] * len(columns)
                for action, cell in zip(compiled.infoset_actions[i], row):
                    line[columns[_strict(action)]] = cell
                placed.append(line)
            cells = placed
        width = max(len(row) for row in cells)
        widths = [max(len(row[j]) for row in cells if j < len(row)) for j in range(width)]
        keys = {i: _one_line(compiled.infoset_keys[i]) for i in order}
        key_width = max(map(len, keys.values()))
        player_width = len(str(compiled.num_players - 1))
        lines = []
        for i, row in zip(order, cells):
            player = int(compiled.tree.infoset_player[i])
            parts = [keys[i].ljust(key_width), f"player {player:<{player_width}}"]
            parts += [cell.ljust(widths[j]) for j, cell in enumerate(row)]
            lines.append("  ".join(parts).rstrip())
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.format_table() or repr(self)

    def __repr__(self) -> str:
        return f"Policy({self._game.game!r}, infosets={len(self)})"

    # -- files --------------------------------------------------------------------------------
    def save(self, path: str | os.PathLike[str]) -> Path:
        """Write the policy to one human-readable JSON file; read it back with :func:`load_policy`.

        The file holds ``"format": "cfrkit.policy"``, ``"version": 1``, the game's ``repr``
        (informative only), ``"num_infosets"`` and ``"infosets"``: one object per infoset,
        ordered by player and then key, with its ``"key"``, ``"player"``, ``"actions"`` (the
        labels, in the game's order) and ``"probabilities"`` (written with ``repr`` precision,
        so they read back bit for bit). The file is UTF-8; a policy whose keys or labels hold a
        lone surrogate (which UTF-8 cannot encode) is written in ASCII, every other character
        as a ``\\uXXXX`` escape, and reads back the same.

        Action labels are JSON values that keep their type: strings, integers, ``true`` /
        ``false``, ``null`` and finite floats are written as themselves (``1`` and ``1.0`` stay
        apart); a tuple is ``{"tuple": [item, ...]}`` with its items encoded the same way, and
        an infinite float is ``{"float": "inf"}`` or ``{"float": "-inf"}``. NumPy scalars are
        written as the Python value they hold.

        The file is written to a temporary file in the same directory and then moved over
        ``path`` (:func:`os.replace`), so ``path`` never holds a half-written policy.

        Parameters
        ----------
        path : str or os.PathLike
            Where to write; an existing file is replaced.

        Returns
        -------
        pathlib.Path
            ``path``.

        Raises
        ------
        ValueError
            If an action label is of another type (or NaN), naming the label and its infoset.
        OSError
            If the file cannot be written.
        """
        target = Path(os.fspath(path))
        try:
            data = self._json().encode("utf-8")
        except UnicodeEncodeError:  # a lone surrogate in a key or label: written as \udcxx
            data = self._json(ascii_only=True).encode("ascii")
        with replacing(target) as temporary:
            with open(temporary, "wb") as handle:
                handle.write(data)
        return target

    def _json(self, ascii_only: bool = False) -> str:
        """The text :meth:`save` writes: UTF-8 text as itself, unless ``ascii_only``, which
        escapes every other character as JSON's ``\\uXXXX`` (the only way to write a lone
        surrogate, which UTF-8 cannot hold)."""
        compiled = self._game
        first = compiled.tree.infoset_first_slot
        table = self._table.tolist()
        encoded: dict[tuple, list] = {}  # games repeat a few action tuples: encode each once
        entries = []
        for i in self._sorted_infosets():
            key = compiled.infoset_keys[i]
            actions = compiled.infoset_actions[i]
            labels = encoded.get(_tuple_key(actions))
            if labels is None:
                labels = []
                for action in actions:
                    try:
                        labels.append(_encode_label(action))
                    except ValueError as exc:
                        raise ValueError(f"infoset {key!r}: action {action!r} {exc}") from None
                if len({_canonical(label) for label in labels}) != len(labels):
                    raise ValueError(f"infoset {key!r}: actions {actions!r} look alike in JSON")
                encoded[_tuple_key(actions)] = labels
            probs = table[first[i] : first[i] + len(actions)]
            if not all(math.isfinite(p) for p in probs):
                raise ValueError(f"infoset {key!r}: probabilities {probs!r} are not finite")
            entry = {
                "key": key,
                "player": int(compiled.tree.infoset_player[i]),
                "actions": labels,
                "probabilities": probs,
            }
            entries.append("    " + json.dumps(entry, ensure_ascii=ascii_only, allow_nan=False))
        header = {
            "format": _FORMAT,
            "version": _FORMAT_VERSION,
            "game": repr(compiled.game),
            "num_infosets": len(entries),
        }
        lines = ["{"]
        for name, value in header.items():
            lines.append(f"  {json.dumps(name)}: {json.dumps(value, ensure_ascii=ascii_only)},")
        if entries:
            lines += ['  "infosets": [', ",\n".join(entries), "  ]"]
        else:
            lines.append('  "infosets": []')
        lines.append("}")
        return "\n".join(lines) + "\n"


def _slot_name(compiled: CompiledGame, slot: int) -> str:
    """``row 'key', action 'label'`` for a decision slot."""
    infoset = int(compiled.tree.slot_infoset[slot])
    position = slot - int(compiled.tree.infoset_first_slot[infoset])
    action = compiled.infoset_actions[infoset][position]
    return f"row {short_repr(compiled.infoset_keys[infoset])}, action {short_repr(action, 40)}"


def _check_entries(compiled: CompiledGame, table: np.ndarray) -> None:
    """Every entry finite and non-negative, else a ValueError naming the first bad one."""
    bad = ~np.isfinite(table) | (table < 0.0)  # NaN fails isfinite (NaN < 0 is False)
    if bad.any():
        slot = int(np.argmax(bad))
        value = float(table[slot])
        raise ValueError(
            f"Policy: {_slot_name(compiled, slot)} has probability {value!r}; probabilities "
            "must be finite and non-negative"
        )


def _row_sums(compiled: CompiledGame, table: np.ndarray) -> np.ndarray:
    """Each infoset's row sum (every infoset has at least one action, so the starts rise)."""
    tree = compiled.tree
    if not tree.infoset_first_slot.size:
        return np.zeros(0)
    with np.errstate(over="ignore"):  # a row of huge entries sums to inf: reported as such
        return np.add.reduceat(table, tree.infoset_first_slot)


def _row(compiled: CompiledGame, table: np.ndarray, infoset: int) -> np.ndarray:
    start = int(compiled.tree.infoset_first_slot[infoset])
    return table[start : start + int(compiled.tree.infoset_num_actions[infoset])]


def _one_line(text: str) -> str:
    """``text`` with its unprintable characters (a newline, say) escaped, so that every
    infoset stays on one line of a table."""
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)


def _fsum(values: np.ndarray) -> float:
    try:
        return math.fsum(values.tolist())
    except OverflowError:  # finite entries whose sum overflows
        return math.inf


def _normalised(compiled: CompiledGame, table: np.ndarray) -> np.ndarray:
    """``table`` with each row divided by its sum (entries already checked)."""
    sums = _row_sums(compiled, table)
    bad = ~(np.isfinite(sums) & (sums > 0.0))
    if bad.any():
        infoset = int(np.argmax(bad))
        total = _fsum(_row(compiled, table, infoset))
        raise ValueError(
            f"Policy: row {short_repr(compiled.infoset_keys[infoset])} sums to {total!r}; "
            "cannot rescale it to 1"
        )
    return table / np.repeat(sums, compiled.tree.infoset_num_actions)


def _check_sums(compiled: CompiledGame, table: np.ndarray) -> None:
    """Every row sums to 1 within ``_ROW_TOLERANCE``, else a ValueError naming the first that
    does not.

    The rule is on the exact sum (``math.fsum``), as in :meth:`Policy.from_dict`, so both accept
    the same rows. The vectorised float sums only pick the suspects, rows within a rounding
    bound (2 eps per term, generous for non-negative terms) of failing; only those are summed
    again exactly, and a valid row away from the boundary is never one.
    """
    sums = _row_sums(compiled, table)
    rounding = compiled.tree.infoset_num_actions * (2.0 * np.finfo(np.float64).eps) * sums
    suspects = ~(np.abs(sums - 1.0) <= _ROW_TOLERANCE - rounding)  # NaN-proof: inf rows too
    for infoset in np.flatnonzero(suspects).tolist():
        total = _fsum(_row(compiled, table, infoset))
        if not abs(total - 1.0) <= _ROW_TOLERANCE:
            raise ValueError(
                f"Policy: row {short_repr(compiled.infoset_keys[infoset])} sums to {total!r}, not 1 "
                f"(tolerance {_ROW_TOLERANCE:g}); pass normalise=True to rescale"
            )


def check_policy_game(caller: str, compiled: CompiledGame, policy: Policy) -> None:
    """Raise a ValueError unless ``policy`` belongs to ``compiled``.

    The same compiled object, or another compilation with the same
    :attr:`~cfrkit.tree.CompiledGame.fingerprint` (its arrays line up slot for slot).
    """
    other = policy.game
    if other is compiled or other.fingerprint == compiled.fingerprint:
        return
    mine, theirs = short_repr(compiled.game), short_repr(other.game)
    if repr(compiled.game) == repr(other.game):  # say what differs when the names do not
        raise ValueError(f"{caller}: the policy belongs to another game with the repr {mine}")
    raise ValueError(f"{caller}: the policy belongs to {theirs}, not {mine}")


def load_policy(path: str | os.PathLike[str], game: Game | CompiledGame) -> Policy:
    """Read a policy of ``game`` from a file written by :meth:`Policy.save`.

    The file must have a row for every infoset of ``game`` and nothing else; each row must name
    actions of its infoset (labels are matched with their type: ``1``, ``1.0``, ``true`` and
    ``"1"`` are four different labels; an action left out gets 0, as in
    :meth:`Policy.from_dict`) and pass the checks of :meth:`Policy.from_dict`. The game's
    ``repr`` stored in the file is not checked (it is named in the error when the infosets do
    not match), so a policy file moves between games with the same infosets and labels -- a
    compiled game loaded from its file, a variant with other payoffs; other top-level fields
    are ignored.

    Parameters
    ----------
    path : str or os.PathLike
        The file to read.
    game : Game or CompiledGame
        The game the policy belongs to.

    Returns
    -------
    Policy
        A policy whose :attr:`~Policy.table` equals the saved one bit for bit.

    Raises
    ------
    ValueError
        ``"<path>: <reason>"`` when the file is missing or unreadable, is not JSON, is not a
        cfrkit policy file of a supported version, is malformed, or does not fit ``game``
        (unknown or missing infoset, unknown action, a row that does not sum to 1, ...).
    """
    name = os.fspath(path)
    compiled = compile_game(game)

    def fail(reason: str) -> ValueError:
        return ValueError(f"{name}: {reason}")

    try:
        with open(name, encoding="utf-8") as handle:
            text = handle.read()
    except FileNotFoundError as exc:
        raise fail("no such file") from exc
    except UnicodeDecodeError as exc:
        raise fail("not JSON (not UTF-8 text)") from exc
    except OSError as exc:
        raise fail(f"cannot read ({exc.strerror or exc})") from exc
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise fail(f"not JSON ({exc.msg} at line {exc.lineno} column {exc.colno})") from exc
    except RecursionError:
        raise fail("not a cfrkit policy file (JSON nested too deeply)") from None
    if not isinstance(data, dict) or data.get("format") != _FORMAT:
        found = data.get("format") if isinstance(data, dict) else type(data).__name__
        raise fail(f"not a cfrkit policy file (format {found!r}, expected {_FORMAT!r})")
    version = data.get("version")
    if type(version) is not int or version != _FORMAT_VERSION:
        raise fail(f"unsupported policy file version {version!r} (expected {_FORMAT_VERSION})")
    entries = data.get("infosets")
    if not isinstance(entries, list):
        raise fail('"infosets" must be a list')
    count = data.get("num_infosets")
    if type(count) is not int or count != len(entries):
        raise fail(f'"num_infosets" is {count!r} but {len(entries)} infosets are listed')

    saved_game = data.get("game")
    mismatch = (
        f" (file is for {saved_game}, not {compiled.game!r})"
        if isinstance(saved_game, str) and saved_game != repr(compiled.game)
        else ""
    )
    mapping: dict[str, Any] = {}
    reader = _EntryReader(compiled)
    for index, entry in enumerate(entries):
        try:
            key, row = reader.read(index, entry)
        except ValueError as exc:
            raise fail(f"{exc}{mismatch}") from exc
        if key in mapping:
            raise fail(f"infoset {key!r} is listed twice")
        mapping[key] = row
    try:
        return Policy.from_dict(compiled, mapping)
    except ValueError as exc:
        raise fail(f"{exc}{mismatch}") from exc


class _EntryReader:
    """Reads the items of a policy file's ``"infosets"`` against one compiled game, keeping
    per action tuple met so far its actions by their canonical encoding (games repeat a few
    action tuples)."""

    FIELDS = ("key", "player", "actions", "probabilities")

    def __init__(self, compiled: CompiledGame) -> None:
        self.key_index = compiled.key_index
        self.players = compiled.tree.infoset_player.tolist()
        self.actions = compiled.infoset_actions
        self.known: dict[tuple, dict] = {}

    def malformed(self, index: int) -> ValueError:
        return ValueError(f"infoset #{index} is not an object with {', '.join(self.FIELDS)}")

    def read(self, index: int, entry: object) -> tuple[str, Any]:
        """Item ``index`` as ``(key, row)``, ``row`` keyed by the game's own action labels for
        :meth:`Policy.from_dict` to check; raises ``ValueError``."""
        if not isinstance(entry, dict):
            raise self.malformed(index)
        try:
            key, player = entry["key"], entry["player"]
            labels, probs = entry["actions"], entry["probabilities"]
        except KeyError:
            raise self.malformed(index) from None
        if not isinstance(key, str):
            raise ValueError(f"infoset #{index}: key {key!r} is not a string")
        if not isinstance(labels, list) or not isinstance(probs, list) or len(labels) != len(probs):
            raise ValueError(f"infoset {key!r}: actions and probabilities must be lists of one length")
        for prob in probs:
            if type(prob) is not float and (isinstance(prob, bool)
                                            or not isinstance(prob, (int, float))):
                raise ValueError(f"infoset {key!r}: probability {prob!r} is not a number")
        infoset = self.key_index.get(key)
        if infoset is None:  # from_dict names the unknown key
            return key, probs
        expected = self.players[infoset]
        if type(player) is not int or player != expected:
            raise ValueError(f"infoset {key!r} is player {expected}'s, the file says {player!r}")
        actions = self.actions[infoset]
        known = self.known.get(_tuple_key(actions))
        if known is None:
            known = {}
            for action in actions:
                try:
                    known[_canonical(_encode_label(action))] = action
                except ValueError:  # a label no file can name
                    pass
            self.known[_tuple_key(actions)] = known
        row: dict[Hashable, float] = {}
        for value, prob in zip(labels, probs):
            kind = type(value)
            if kind is str or kind is int:  # decoded and encoded, it is itself
                label, action = value, known.get(_canonical(value), _MISSING)
            else:
                try:
                    label = _decode_label(value)
                    action = known.get(_canonical(_encode_label(label)), _MISSING)
                except ValueError:
                    raise ValueError(f"infoset {key!r}: {value!r} is not an action label") from None
            if action is _MISSING:
                raise ValueError(
                    f"infoset {key!r}: unknown action {label!r} (actions are {actions!r})"
                )
            if action in row:
                raise ValueError(f"infoset {key!r}: action {label!r} is listed twice")
            row[action] = prob
        return key, row


_MISSING = object()


def _encode_label(label: object) -> Any:
    """``label`` as the JSON value :meth:`Policy.save` writes; ``ValueError`` if it has none."""
    if isinstance(label, np.generic):
        label = label.item()
    if label is None or isinstance(label, bool):
        return label
    if isinstance(label, int):
        return int(label)
    if isinstance(label, float):
        if math.isnan(label):
            raise ValueError("is NaN and cannot be saved")
        if math.isinf(label):
            return {"float": "inf" if label > 0 else "-inf"}
        return float(label)
    if isinstance(label, str):
        return str.__str__(label)
    if isinstance(label, tuple):
        return {"tuple": [_encode_label(item) for item in label]}
    raise ValueError(
        f"cannot be saved: labels must be str, int, float, bool, None or tuples of these, "
        f"not {type(label).__name__}"
    )


def _canonical(encoded: Any) -> Hashable:
    """A key equal for two encoded labels exactly when they stand for the same label, that is
    when their JSON texts are equal: a scalar with its type (a float by its ``repr``, so ``0.0``
    and ``-0.0`` differ, as in JSON), anything else by its JSON text."""
    kind = type(encoded)
    if kind is str or kind is int or kind is bool or encoded is None:
        return (kind, encoded)
    if kind is float:
        return (kind, repr(encoded))
    return json.dumps(encoded, sort_keys=True)


def _strict(label: Hashable) -> tuple:
    """A key that tells ``1``, ``1.0`` and ``True`` apart (they are equal as dict keys), and
    ``0.0`` and ``-0.0`` (equal too, but written and printed apart): floats by their ``repr``."""
    if isinstance(label, tuple):
        return (tuple, tuple(_strict(item) for item in label))
    if isinstance(label, (float, np.floating)):
        return (type(label), repr(label))
    return (type(label), label)


def _tuple_key(actions: tuple) -> tuple:
    """A dict key for an action tuple that tells apart the tuples a policy file tells apart:
    ``(1,)``, ``(1.0,)`` and ``(True,)``, and ``(0.0,)`` and ``(-0.0,)``. The tuple itself when
    its labels are all exactly ``str`` or ``int`` (the usual case), else its :func:`_strict`
    form (which starts with the type ``tuple``, so the two kinds of key never meet)."""
    return _fast_key(actions) or _strict(actions)


def _label_columns(rows: list[tuple[Hashable, ...]]) -> dict[tuple, int] | None:
    """One column per action label when some row holds every label and every row lists its
    labels in that row's order; else ``None`` (cells are then aligned by position)."""
    labels = {_strict(a) for row in rows for a in row}
    full = next((row for row in rows if len(row) == len(labels)), None)
    if full is None:
        return None
    columns = {_strict(a): j for j, a in enumerate(full)}
    if len(columns) != len(labels) or set(columns) != labels:
        return None
    for row in rows:
        positions = [columns[_strict(a)] for a in row]
        if positions != sorted(positions):
            return None
    return columns


def policy_rows(
    compiled: CompiledGame, mapping: Mapping, sums: bool = True
) -> dict[int, np.ndarray]:
    """Validate ``{infoset key: row}`` against ``compiled``; return ``{infoset index: probs}``.

    Rows follow :meth:`Policy.from_dict` (including its reading of actions given as text);
    infosets may be left out (the caller decides whether that is allowed). ``sums=False``
    leaves the rows' sums to the caller (a policy normalised next).
    """
    if not isinstance(mapping, Mapping):
        raise ValueError(
            f"a policy must be a mapping {{infoset key: {{action: probability}}}}, "
            f"got {type(mapping).__name__}"
        )
    rows: dict[int, np.ndarray] = {}
    # an action's position, per distinct action tuple (as equal dict keys, 1 and True share a
    # position either way)
    positions: dict[tuple, dict[Hashable, int]] = {}
    for key, row in mapping.items():
        infoset = compiled.key_index.get(key) if isinstance(key, str) else None
        if infoset is None:
            raise ValueError(f"unknown infoset key {key!r} for {compiled.game!r}")
        actions = compiled.infoset_actions[infoset]
        probs = [0.0] * len(actions)
        if isinstance(row, Mapping):
            position = positions.get(actions)
            if position is None:
                position = positions[actions] = {a: i for i, a in enumerate(actions)}
            seen: set[int] = set()
            for action, prob in row.items():
                i = position.get(action)
                if i is None:
                    i = _action_from_text(key, actions, action)
                if i in seen:
                    raise ValueError(
                        f"infoset {key!r}: action {actions[i]!r} is given twice (as {action!r})"
                    )
                seen.add(i)
                probs[i] = _probability(key, action, prob)
        elif isinstance(row, (Sequence, np.ndarray)) and not isinstance(row, str):
            if len(row) != len(actions):
                raise ValueError(
                    f"infoset {key!r}: {len(row)} probabilities for {len(actions)} actions "
                    f"{actions!r}"
                )
            for i, prob in enumerate(row):
                probs[i] = _probability(key, actions[i], prob)
        else:
            raise ValueError(f"infoset {key!r}: row must be a mapping or a sequence, got {row!r}")
        if sums:  # (else the caller normalises, and names a sum that overflows)
            total = _fsum(np.asarray(probs))
            if abs(total - 1.0) > _ROW_TOLERANCE:
                raise ValueError(f"infoset {key!r}: probabilities sum to {total!r}, not 1")
        rows[infoset] = np.array(probs)
    return rows


def _action_from_text(key: str, actions: tuple[Hashable, ...], action: Hashable) -> int:
    """The index of the one action whose text (``str`` or JSON key) is ``action``."""
    matches = []
    if isinstance(action, str):
        matches = [i for i, a in enumerate(actions) if action in _texts(a)]
    if len(matches) == 1:
        return matches[0]
    if matches:
        shown = ", ".join(repr(actions[i]) for i in matches)
        raise ValueError(f"infoset {key!r}: action {action!r} could be any of {shown}")
    raise ValueError(f"infoset {key!r}: unknown action {action!r} (actions are {actions!r})")


def _texts(action: Hashable) -> set[str]:
    """``str(action)`` and the object key ``json.dumps`` writes for it."""
    texts = {str(action)}
    try:
        texts.update(json.loads(json.dumps({action: 0})))
    except (TypeError, ValueError):  # not a JSON key type
        pass
    return texts


def _probability(key: str, action: Hashable, prob: object) -> float:
    if type(prob) is float and 0.0 <= prob < math.inf:  # the common case, checked at once
        return prob

    def where() -> str:  # the message's start, built only for a message
        return f"infoset {short_repr(key, 40)}, action {short_repr(action, 24)}"

    # float() would read "0.5" and True as numbers; a policy file refuses them too
    if isinstance(prob, (str, bytes, bool, np.bool_)):
        raise ValueError(f"{where()}: {short_repr(prob, 24)} is not a number")
    try:
        value = float(prob)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        raise ValueError(f"{where()}: {short_repr(prob, 24)} is not a number") from None
    except OverflowError:
        raise ValueError(f"{where()}: probability {short_repr(prob, 24)} is invalid") from None
    if not math.isfinite(value) or value < 0.0:
        raise ValueError(f"{where()}: probability {value!r} is invalid")
    return value
