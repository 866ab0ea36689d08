"""Policy: a read-only mapping view over a dense ``[infoset, action]`` probability table."""

from __future__ import annotations

import math
from collections.abc import Hashable, Iterator, Mapping, Sequence
from types import MappingProxyType

import numpy as np

from .game import Game
from .tree import CompiledGame, compile_game

__all__ = ["Policy", "policy_rows"]

_ROW_TOLERANCE = 1e-9


class Policy(Mapping):
    """A behavioural strategy profile: infoset key -> {action: probability}.

    A ``Policy`` is immutable and belongs to one compiled game. It reads like a dict of dicts
    (``policy["Qpb"]["bet"]``), and its probabilities are stored as one float64 array over the
    game's action slots (:attr:`table`), which is what the evaluation kernels use.

    Build one with :meth:`uniform`, :meth:`from_dict`, or from a trainer
    (``trainer.average_policy()``).
    """

    __slots__ = ("_game", "_table")

    def __init__(self, game: Game | CompiledGame, table: np.ndarray) -> None:
        compiled = compile_game(game)
        table = np.array(table, dtype=np.float64)  # always a private copy
        if table.shape != (compiled.tree.num_action_slots,):
            raise ValueError(
                f"table must have shape ({compiled.tree.num_action_slots},), got {table.shape}"
            )
        table.setflags(write=False)
        self._game = compiled
        self._table = table

    # -- construction -------------------------------------------------------------------------
    @classmethod
    def uniform(cls, game: Game | CompiledGame) -> Policy:
        """Every infoset plays each of its actions with probability ``1 / |A(I)|``."""
        compiled = compile_game(game)
        tree = compiled.tree
        return cls(compiled, 1.0 / np.repeat(tree.infoset_num_actions, tree.infoset_num_actions))

    @classmethod
    def from_dict(cls, game: Game | CompiledGame, mapping: Mapping) -> Policy:
        """Build a policy from ``{infoset key: row}`` covering every infoset of ``game``.

        A row is either a mapping ``{action: probability}`` (actions left out get 0) or a
        sequence of probabilities in the infoset's action order. Rows must be non-negative and
        sum to 1 within 1e-9.

        Raises
        ------
        ValueError
            Naming the key of an unknown or missing infoset, an unknown action, or a row that
            is negative, non-finite or does not sum to 1.
        """
        compiled = compile_game(game)
        if isinstance(mapping, Policy) and mapping.game is compiled:
            return mapping
        rows = policy_rows(compiled, mapping)
        missing = [k for k in compiled.infoset_keys if compiled.key_index[k] not in rows]
        if missing:
            shown = ", ".join(repr(k) for k in missing[:5])
            more = f" and {len(missing) - 5} more" if len(missing) > 5 else ""
            raise ValueError(f"policy has no row for infoset(s) {shown}{more}")
        table = np.empty(compiled.tree.num_action_slots)
        for infoset, row in rows.items():
            start = compiled.tree.infoset_first_slot[infoset]
            table[start : start + row.shape[0]] = row
        return cls(compiled, table)

    # -- reading ------------------------------------------------------------------------------
    @property
    def game(self) -> CompiledGame:
        """The compiled game this policy belongs to."""
        return self._game

    @property
    def table(self) -> np.ndarray:
        """The probabilities over the game's action slots (read-only float64 array)."""
        return self._table

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
        """A plain ``{key: {action: probability}}`` copy (for printing or saving as JSON)."""
        return {key: dict(self[key]) for key in self}

    def __repr__(self) -> str:
        return f"Policy({self._game.game!r}, infosets={len(self)})"


def policy_rows(compiled: CompiledGame, mapping: Mapping) -> dict[int, np.ndarray]:
    """Validate ``{infoset key: row}`` against ``compiled``; return ``{infoset index: probs}``.

    Rows follow :meth:`Policy.from_dict`; infosets may be left out (the caller decides whether
    that is allowed).
    """
    if not isinstance(mapping, Mapping):
        raise ValueError(
            f"a policy must be a mapping {{infoset key: {{action: probability}}}}, "
            f"got {type(mapping).__name__}"
        )
    rows: dict[int, np.ndarray] = {}
    for key, row in mapping.items():
        infoset = compiled.key_index.get(key) if isinstance(key, str) else None
        if infoset is None:
            raise ValueError(f"unknown infoset key {key!r} for {compiled.game!r}")
        actions = compiled.infoset_actions[infoset]
        probs = np.zeros(len(actions))
        if isinstance(row, Mapping):
            position = {a: i for i, a in enumerate(actions)}
            for action, prob in row.items():
                if action not in position:
                    raise ValueError(
                        f"infoset {key!r}: unknown action {action!r} (actions are {actions!r})"
                    )
                probs[position[action]] = _probability(key, action, prob)
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
        total = math.fsum(probs)
        if abs(total - 1.0) > _ROW_TOLERANCE:
            raise ValueError(f"infoset {key!r}: probabilities sum to {total!r}, not 1")
        rows[infoset] = probs
    return rows


def _probability(key: str, action: Hashable, prob: object) -> float:
    try:
        value = float(prob)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        raise ValueError(f"infoset {key!r}, action {action!r}: {prob!r} is not a number") from None
    if not math.isfinite(value) or value < 0.0:
        raise ValueError(f"infoset {key!r}, action {action!r}: probability {value!r} is invalid")
    return value
