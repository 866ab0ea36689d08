"""Checkpoints: a trainer's whole state in one ``.npz`` file, and back.

A checkpoint holds every array of the trainer's :class:`~cfrkit.state.TrainerState` (regrets,
average weights, current strategy, discount bookkeeping, random stream, pruning windows), the
few scratch buffers a later pass reads, and one JSON metadata entry::

    {"format": "cfrkit.checkpoint", "version": 1, "cfrkit_version": "0.1.0",
     "trainer": "CFRPlus", "arguments": {"alternating": true},
     "rule": {"class": "cfrkit.rules.RegretRule", "fields": {"floor": true, ...}},
     "iteration": 1000, "nodes_touched": 110000, "rng": ["0x...", ...],
     "game": {"repr": "KuhnPoker(players=2)", "fingerprint": "41284ac4..."}}

The game itself is not stored: :func:`load_trainer` takes it and checks it against the
fingerprint. Nothing is pickled (``np.load(..., allow_pickle=False)``), files are written
atomically, and a loaded trainer continues bit for bit as if it had never stopped.
"""

from __future__ import annotations

import dataclasses
import json
import os
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np

from . import _threads, trainers
from ._files import replacing
from ._kernels.regret_pruning import CLOSING, NONE, OPEN, OPENING
from ._npz import DAMAGED_ZIP, load_npz, other_kind
from ._text import short_repr
from .game import Game
from .rules import RegretRule, iteration_limit
from .state import TrainerState
from .result_table import MAX_GAMES, ResultTableLearner
from .trainers import Trainer
from .tree import CompiledGame, compile_game
from .tree.walk import TERMINAL

__all__ = ["CheckpointError", "load_trainer", "save_trainer"]

FORMAT = "cfrkit.checkpoint"
VERSION = 1


class CheckpointError(ValueError):
    """A checkpoint file that cannot be loaded: missing, truncated, corrupted, foreign, or made
    for another game. The message names the file and the reason."""


def save_trainer(trainer, path: str | os.PathLike) -> Path:
    """Write ``trainer``'s checkpoint to ``path`` atomically (see the module docstring)."""
    from . import __version__

    rule = trainer.rule
    metadata = {
        "format": FORMAT,
        "version": VERSION,
        "cfrkit_version": __version__,
        "trainer": type(trainer).__name__,
        # the rule object is rebuilt from "rule" below; "arguments" only says the class takes one
        "arguments": {k: (True if k == "rule" else v)
                      for k, v in trainer._constructor_arguments().items()},
        "rule": {
            "class": f"{type(rule).__module__}.{type(rule).__qualname__}",
            "fields": _rule_fields(rule),
        },
        "iteration": trainer.iteration,
        "nodes_touched": trainer.nodes_touched,
        "rng": [hex(int(x)) for x in trainer._state.rng],
        "game": {"repr": repr(trainer.game.game), "fingerprint": trainer.game.fingerprint},
    }
    arrays = {f"state/{name}": value for name, value in trainer._state._asdict().items()}
    for prefix, (bundle, fields) in trainer._persistent().items():
        for name in fields:
            arrays[f"{prefix}/{name}"] = getattr(bundle, name)
    return _write(path, metadata, arrays)


def save_learner(learner, path: str | os.PathLike) -> Path:
    """Write a :class:`~cfrkit.ResultTableLearner`'s checkpoint to ``path`` atomically: the
    trainers' format, with the result table and the random stream as its arrays."""
    from . import __version__

    metadata = {
        "format": FORMAT,
        "version": VERSION,
        "cfrkit_version": __version__,
        "trainer": type(learner).__name__,
        "arguments": {"explore": learner.explore, "seed": learner.seed},
        "iteration": learner.iteration,
        "decisions": learner.decisions,
        "rng": [hex(int(x)) for x in learner._rng],
        "game": {"repr": repr(learner.game.game), "fingerprint": learner.game.fingerprint},
    }
    arrays = {name: getattr(learner, f"_{name}") for name in _LEARNER_ARRAYS}
    return _write(path, metadata, {f"state/{k}": v for k, v in arrays.items()})


_LEARNER_ARRAYS = ("games", "gains", "rng")


def _write(path: str | os.PathLike, metadata: dict, arrays: dict[str, np.ndarray]) -> Path:
    """``metadata`` (as JSON) and ``arrays`` to ``path`` as one ``.npz``, atomically; returns
    the path."""
    target = Path(os.fspath(path))
    with replacing(target) as temporary, open(temporary, "wb") as stream:
        np.savez(stream, metadata=np.array(json.dumps(metadata)), **arrays)
    return target


def load_trainer(
    path: str | os.PathLike, game: Game | CompiledGame, *, rule: RegretRule | None = None,
    threads: int | None = None,
) -> Trainer | ResultTableLearner:
    """Rebuild the trainer saved in ``path`` by :meth:`Trainer.save`, on ``game``.

    A :class:`~cfrkit.ResultTableLearner`'s checkpoint (:meth:`ResultTableLearner.save
    <cfrkit.ResultTableLearner.save>`) loads the same way and gives the learner back (``rule``
    does not apply to it).

    Parameters
    ----------
    path : str or os.PathLike
        The checkpoint file.
    game : Game or CompiledGame
        The game the checkpoint was made for (checked by fingerprint).
    rule : RegretRule, optional
        Needed only for a trainer saved with a custom rule class (a subclass of
        :class:`~cfrkit.RegretRule`): an instance of that class with the saved parameters (every
        dataclass field, the subclass's own included, must equal the saved one). The presets and
        plain ``RegretRule`` values are rebuilt from the file; a rule given for them must be the
        saved one.
    threads : int, optional
        The threads the trainer's passes and :meth:`~cfrkit.Trainer.solve`'s evaluations run on
        (default: all cores; see :attr:`CFR.threads <cfrkit.CFR.threads>`; a pruned pass runs
        on one whatever it says). A runtime choice, not kept in checkpoints: the arrays are the
        same whatever it is.

    Returns
    -------
    Trainer or ResultTableLearner
        The trainer, with its iteration count, arrays and random stream as saved.

    Raises
    ------
    CheckpointError
        The file is missing, is not a cfrkit checkpoint, is truncated or corrupted, has another
        format version, was made for another game, needs ``rule=`` (or was saved with another
        rule than the one given), holds arrays no run could have left (a strategy that is not a
        distribution, chance probabilities other than the game's, lists or counts out of range),
        or claims an iteration past the trainer's limit (:data:`cfrkit.limits.MAX_ITERATIONS`,
        or its rule's; see :meth:`Trainer.iterate <cfrkit.trainers.Trainer.iterate>`).
    TypeError
        ``rule`` is not a :class:`~cfrkit.RegretRule`.
    ValueError
        ``threads`` is not a positive integer up to ``numba.config.NUMBA_NUM_THREADS``, or
        ``threads`` or ``rule`` is given for a :class:`~cfrkit.ResultTableLearner` (it runs on
        one core and has no regret rule).

    Notes
    -----
    A chance-sampled checkpoint written before seeds were limited to ``[0, 2**64)`` may hold a
    larger seed (the old default drew 128 bits); it loads with the seed's low 64 bits, the only
    ones its random stream was ever seeded from.
    """
    if rule is not None and not isinstance(rule, RegretRule):
        raise TypeError(f"rule must be a cfrkit.RegretRule, got {type(rule).__name__}")
    threads = _threads.check_threads(threads)
    name = os.fspath(path)
    metadata, arrays = _read(name)
    compiled = compile_game(game)
    saved_game = metadata["game"]
    if not isinstance(saved_game.get("fingerprint"), str):
        raise CheckpointError(f"{name}: incomplete metadata (no game fingerprint)")
    if saved_game["fingerprint"] != compiled.fingerprint:
        ours = repr(compiled.game)
        if saved_game.get("repr") == ours:  # same name and parameters, another tree
            raise CheckpointError(f"{name}: made for another version of {ours} (its tree differs)")
        raise CheckpointError(
            f"{name}: made for another game ({saved_game.get('repr')}), not {ours}"
        )
    if metadata.get("trainer") == "ResultTableLearner":
        if threads is not None:
            raise ValueError("threads applies to the CFR trainers; a ResultTableLearner runs on "
                             "one core")
        if rule is not None:
            raise ValueError("rule applies to the CFR trainers; a ResultTableLearner has none")
        return _load_learner(name, metadata, arrays, compiled)
    if not isinstance(metadata.get("rule"), dict):
        raise CheckpointError(f"{name}: incomplete metadata (no 'rule')")
    cls = getattr(trainers, str(metadata.get("trainer")), None)
    if not (isinstance(cls, type) and issubclass(cls, Trainer)):
        raise CheckpointError(f"{name}: unknown trainer {metadata.get('trainer')!r}")
    arguments = dict(metadata["arguments"])
    if "rule" in arguments:
        arguments["rule"] = _rule(name, metadata["rule"], rule)
    elif rule is not None:  # a preset rebuilds its own rule: one given must be that rule
        _rule(name, metadata["rule"], rule)
    seed = arguments.get("seed")
    if type(seed) is int and seed >= 2**64:
        # written before seeds were limited to [0, 2**64) (the default drew 128 bits): the
        # stream was seeded from the low 64 bits, which name it exactly (and it is restored
        # from the saved state anyway)
        arguments["seed"] = seed & (2**64 - 1)
    try:
        trainer = cls(compiled, **arguments)
    except (TypeError, ValueError) as exc:
        raise CheckpointError(f"{name}: its trainer arguments do not rebuild it ({exc})") from exc
    fresh = trainer._state._replace(probs=trainer._state.probs.copy(),
                                    rng=trainer._state.rng.copy())
    _fill(name, "state", trainer._state, TrainerState._fields, arrays)
    for prefix, (bundle, fields) in trainer._persistent().items():
        _fill(name, prefix, bundle, fields, arrays)
    _check_state(name, trainer, fresh)
    iteration, touched = metadata.get("iteration"), metadata.get("nodes_touched")
    # type() is int: JSON true/false would pass isinstance(..., int)
    if not (type(iteration) is int and iteration >= 0):
        raise CheckpointError(f"{name}: bad iteration count {short_repr(iteration)}")
    if not (type(touched) is int and touched >= 0):
        raise CheckpointError(f"{name}: bad count of nodes touched {short_repr(touched)}")
    limit, reason = iteration_limit(trainer.rule)
    if iteration > limit:  # no trainer could have saved it, and continuing would overflow
        raise CheckpointError(f"{name}: iteration {short_repr(iteration)} is past the limit: {reason}")
    trainer._iteration = iteration
    trainer._nodes_touched = touched
    if threads is not None:
        trainer.threads = threads
    tree = compiled.tree
    trainer._fixed_rows = {
        int(i): trainer._state.probs[tree.infoset_first_slot[i]:
                                     tree.infoset_first_slot[i] + tree.infoset_num_actions[i]].copy()
        for i in np.flatnonzero(trainer._state.locked)
    }
    return trainer


def _read(name: str) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
    """The metadata and arrays of a checkpoint file, or a CheckpointError saying why not."""
    try:
        data = load_npz(name)
        if not isinstance(data, np.lib.npyio.NpzFile):  # a single .npy array
            raise CheckpointError(f"{name}: not a cfrkit checkpoint (one array, no metadata)")
        with data:
            if "metadata" not in data.files:
                raise CheckpointError(f"{name}: not a cfrkit checkpoint (no metadata entry)")
            kind = other_kind(data, FORMAT)
            if kind is not None:
                raise CheckpointError(f"{name}: {kind}, not a checkpoint")
            metadata = json.loads(str(data["metadata"]))
            arrays = {key: data[key] for key in data.files if key != "metadata"}
    except CheckpointError:
        raise
    except FileNotFoundError:
        raise CheckpointError(f"{name}: no such file") from None
    except IsADirectoryError:
        raise CheckpointError(f"{name}: is a directory") from None
    except DAMAGED_ZIP as exc:
        raise CheckpointError(f"{name}: truncated or corrupted ({exc})") from exc
    except (OSError, ValueError, KeyError, AttributeError) as exc:
        # not an npz (ValueError from np.load), a damaged member, or bad JSON (a ValueError too)
        raise CheckpointError(f"{name}: not a readable cfrkit checkpoint ({exc})") from exc
    if not isinstance(metadata, dict) or metadata.get("format") != FORMAT:
        raise CheckpointError(f"{name}: not a cfrkit checkpoint")
    if type(metadata.get("version")) is not int or metadata["version"] != VERSION:  # not True
        raise CheckpointError(
            f"{name}: checkpoint format version {metadata.get('version')!r}, this cfrkit reads "
            f"{VERSION}"
        )
    for key in ("game", "arguments"):
        if not isinstance(metadata.get(key), dict):
            raise CheckpointError(f"{name}: incomplete metadata (no {key!r})")
    return metadata, arrays


def _load_learner(name: str, metadata: dict, arrays: dict, compiled: CompiledGame):
    """The :class:`~cfrkit.ResultTableLearner` a checkpoint holds, on ``compiled`` (already
    checked against the fingerprint)."""
    try:
        learner = ResultTableLearner(compiled, **metadata["arguments"])
    except (TypeError, ValueError) as exc:
        raise CheckpointError(f"{name}: its learner arguments do not rebuild it ({exc})") from exc
    for field in _LEARNER_ARRAYS:
        key = f"state/{field}"
        if key not in arrays:
            raise CheckpointError(f"{name}: missing array {key!r}")
        saved, fresh = arrays[key], getattr(learner, f"_{field}")
        if saved.dtype != fresh.dtype or saved.shape != fresh.shape:
            raise CheckpointError(
                f"{name}: array {key!r} is {saved.dtype}{list(saved.shape)}, this learner needs "
                f"{fresh.dtype}{list(fresh.shape)}"
            )
        if saved.dtype.kind == "f" and not np.all(np.isfinite(saved)):
            raise CheckpointError(f"{name}: array {key!r} holds non-finite values")
        fresh[...] = saved
    if np.any(learner._games < 0):
        raise CheckpointError(f"{name}: array 'state/games' holds negative counts")
    if not learner._rng.any():
        raise CheckpointError(f"{name}: array 'state/rng' is all zeros, a random stream that "
                              "never changes")
    iteration, decisions = metadata.get("iteration"), metadata.get("decisions")
    if not (type(iteration) is int and 0 <= iteration <= MAX_GAMES
            and type(decisions) is int and decisions >= 0):
        raise CheckpointError(f"{name}: bad game count {short_repr(iteration)}")
    learner._iteration = iteration
    learner._decisions = decisions
    return learner


_BASE_RULE_FIELDS = frozenset(field.name for field in dataclasses.fields(RegretRule))


def _rule_fields(rule: RegretRule) -> dict[str, Any]:
    """Every dataclass field of ``rule`` (a subclass's own too), as JSON: numbers, bools,
    strings and None as they are, numpy scalars as Python ones, anything else as its repr."""
    fields = {}
    for field in dataclasses.fields(rule):
        value = getattr(rule, field.name)
        if isinstance(value, np.generic):
            value = value.item()
        if not (value is None or isinstance(value, (bool, int, float, str))):
            value = repr(value)
        fields[field.name] = value
    return fields


def _rule(name: str, saved: dict, given: RegretRule | None) -> RegretRule:
    """The saved rule: rebuilt when it is a plain RegretRule, else ``given``, checked."""
    fields = saved.get("fields")
    if not isinstance(fields, dict):
        raise CheckpointError(f"{name}: incomplete rule metadata")
    saved_class = saved.get("class")
    plain = f"{RegretRule.__module__}.{RegretRule.__qualname__}"
    if given is None:
        if saved_class != plain:
            raise CheckpointError(
                f"{name}: saved with the custom rule {saved_class}; pass rule=<an instance of it> "
                "to load_trainer"
            )
        try:
            return RegretRule(**fields)
        except (TypeError, ValueError) as exc:
            raise CheckpointError(f"{name}: bad rule parameters ({exc})") from exc
    given_class = f"{type(given).__module__}.{type(given).__qualname__}"
    given_fields = _rule_fields(given)
    if set(fields) == _BASE_RULE_FIELDS:
        # also files written before a subclass's own fields were saved: those are not known
        given_fields = {k: v for k, v in given_fields.items() if k in _BASE_RULE_FIELDS}
    if given_class != saved_class or given_fields != fields:
        shown = ", ".join(f"{k}={short_repr(v, 24)}" for k, v in fields.items())
        raise CheckpointError(
            f"{name}: saved with rule {saved_class}({shown}), not {short_repr(given, 160)}"
        )
    return given


def _fill(name: str, prefix: str, target: NamedTuple, fields, arrays) -> None:
    """Copy the saved arrays into a fresh trainer's, checking each is there, shaped and typed
    as that trainer needs, and finite where it holds numbers."""
    for field in fields:
        key = f"{prefix}/{field}"
        if key not in arrays:
            raise CheckpointError(f"{name}: missing array {key!r}")
        saved, fresh = arrays[key], getattr(target, field)
        if saved.dtype != fresh.dtype or saved.shape != fresh.shape:
            raise CheckpointError(
                f"{name}: array {key!r} is {saved.dtype}{list(saved.shape)}, this trainer needs "
                f"{fresh.dtype}{list(fresh.shape)}"
            )
        if saved.dtype.kind == "f" and not np.all(np.isfinite(saved)):
            raise CheckpointError(f"{name}: array {key!r} holds non-finite values")
        if saved.dtype.kind == "f" and saved.size and np.max(np.abs(saved)) > _MAX_SAVED:
            raise CheckpointError(f"{name}: array {key!r} holds values larger than any run "
                                  "reaches")
        fresh[...] = saved


_PROB_SUM_TOLERANCE = 1e-9

#: Above any number a run keeps (see cfrkit.limits: regrets stay below about 3e232, average
#: weights below 2^960), and far enough below float64's overflow that the kernels' sums over
#: an infoset's actions stay finite.
_MAX_SAVED = 2.0**1000

#: The lowest exponent a product of discounts is allowed: the kernels subtract two of them,
#: which must not wrap around in int64.
_MIN_DISCOUNT_EXPONENT = -(2**62)


def _check_state(name: str, trainer, fresh: TrainerState) -> None:
    """The loaded arrays against what every run keeps true, before any kernel reads them.

    ``fresh`` holds the new trainer's own ``probs`` and ``rng`` before loading. The kernels
    index with the saved lists and counts of the predictive and pruning bookkeeping, so an
    out-of-range entry would read or write outside the arrays; a strategy that is not a
    distribution, negative average weights, chance probabilities other than the game's, or an
    all-zero random stream would train silently on something else. A file cfrkit wrote passes
    every check; anything else raises a :class:`CheckpointError` naming the array.
    """
    tree, state = trainer.game.tree, trainer._state
    slots = tree.num_action_slots

    def fail(array: str, reason: str) -> CheckpointError:
        return CheckpointError(f"{name}: array {array!r} {reason}")

    if not np.array_equal(state.probs[slots:], fresh.probs[slots:]):
        raise fail("state/probs", "holds chance probabilities other than the game's")
    strategy = state.probs[:slots]
    totals = np.bincount(tree.slot_infoset, weights=strategy, minlength=len(tree.infoset_player))
    bad = np.union1d(tree.slot_infoset[strategy < 0.0],
                     np.flatnonzero(np.abs(totals - 1.0) > _PROB_SUM_TOLERANCE))
    if len(bad):
        key = trainer.game.infoset_keys[bad[0]]
        raise fail("state/probs", f"gives infoset {short_repr(key, 40)} a strategy that is not a "
                   "probability distribution")
    if np.any(state.strategy_sum < 0.0):
        raise fail("state/strategy_sum", "holds negative average weights")
    for array, counter in (("accumulations", state.accumulations),
                           ("predicted_count", state.predicted_count),
                           ("pending_count", state.pending_count)):
        if np.any(counter < 0):
            raise fail(f"state/{array}", "holds negative counts")
    owners = tree.player_infoset_start
    if len(state.predicted):  # predictive rules on queued passes: each player's listed infosets
        for player in range(tree.num_players):
            start, end = int(owners[player]), int(owners[player + 1])
            count = int(state.predicted_count[player])
            listed = state.predicted[start : start + count]
            if count > end - start or np.any((listed < start) | (listed >= end)) \
                    or len(np.unique(listed)) != count:
                raise fail("state/predicted", f"lists infosets that are not player {player}'s "
                           "(or lists one twice)")
    elif np.any(state.predicted_count):
        raise fail("state/predicted_count", "counts infosets of an unused list")
    if len(state.window):  # regret-based pruning
        window = state.window
        if not np.all(np.isin(window, (NONE, OPEN, CLOSING, OPENING))):
            raise fail("state/window", "holds unknown window states")
        # a slot waits in its player's pending list exactly while its window closes or opens
        marked = np.isin(window, (CLOSING, OPENING))
        slot_owner = tree.infoset_player[tree.slot_infoset]
        for player in range(tree.num_players):
            count = int(state.pending_count[player])
            listed = state.pending[player, :count] if count <= slots else None
            expected = np.flatnonzero(marked & (slot_owner == player))
            if listed is None or not np.array_equal(np.sort(listed), expected):
                raise fail("state/pending", f"does not list exactly player {player}'s closing "
                           "and opening windows")
    elif np.any(state.pending_count):
        raise fail("state/pending_count", "counts slots of an unused list")
    # lazy discounts: running products of discounts <= 1 as frexp pairs, which only shrink;
    # an infoset's stamp is an earlier product, and the kernels divide by it
    for array in ("discount_scale", "stamp_scale"):
        scale = getattr(state, array)
        if not np.all((scale >= 0.5) & (scale < 1.0)):
            raise fail(f"state/{array}", "holds a product of discounts that is not a frexp mantissa")
    # each product is at most 1 (frexp(1.0) is (0.5, 1)) and its exponent stays in int64's
    # range when subtracted
    for exponents, scales, array in ((state.discount_exponent, state.discount_scale,
                                      "discount_exponent"),
                                     (state.stamp_exponent, state.stamp_scale, "stamp_exponent")):
        if not np.all(((exponents < 1) | ((exponents == 1) & (scales == 0.5)))
                      & (exponents >= _MIN_DISCOUNT_EXPONENT)):
            raise fail(f"state/{array}", "holds a product of discounts above 1 or out of range")
    exponent, scale = state.discount_exponent[1], state.discount_scale[1]  # the current product

    def at_least_current(earlier_exponent: np.ndarray, earlier_scale: np.ndarray) -> bool:
        return bool(np.all((earlier_exponent > exponent)
                           | ((earlier_exponent == exponent) & (earlier_scale >= scale))))

    if not at_least_current(state.discount_exponent[0], state.discount_scale[0]):
        raise fail("state/discount_exponent", "holds a product of discounts that grew")
    if not at_least_current(state.stamp_exponent, state.stamp_scale):
        raise fail("state/stamp_exponent", "holds an infoset's product of discounts below the "
                   "current one")
    if fresh.rng.any() and not state.rng.any():
        raise fail("state/rng", "is all zeros, a random stream that never changes")
    if "value" in trainer._persistent_scratch():  # threshold pruning reuses skipped values
        value, utility = trainer._scratch.value, tree.utility
        terminal = tree.node_kind == TERMINAL
        largest = np.max(np.abs(utility), axis=1, keepdims=True)  # values average utilities
        if not np.array_equal(value[:, terminal], utility[:, terminal]) \
                or np.any(np.abs(value) > largest * (1.0 + 1e-9)):
            raise fail("scratch/value", "holds values no strategy gives in this game")
    pool = getattr(trainer, "_pool", None)
    if pool is not None and len(pool.rng) and not np.all(pool.rng.any(axis=1)):
        raise fail("streams/rng", "holds an all-zero random stream")

