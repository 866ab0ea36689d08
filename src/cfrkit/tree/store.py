"""Compiled games on disk: :func:`save` / :func:`~cfrkit.tree.load_compiled`, and the opt-in compile cache.

A compiled game is one ``.npz`` file (uncompressed unless asked; read with ``np.load(...,
allow_pickle=False)``: nothing in it is ever unpickled) holding

* ``tree/<field>`` -- every array of the :class:`~cfrkit.tree.GameTree`, as laid out in memory;
* ``infoset_action_set`` -- int32, one per infoset: which entry of the metadata's
  ``"action_sets"`` lists that infoset's action labels (games repeat a handful of action
  tuples over thousands of infosets, so each is written once);
* ``metadata`` -- a JSON document (UTF-8 bytes as a uint8 array)::

    {"format": "cfrkit.compiled_game", "version": 1, "cfrkit_version": "0.1.0",
     "fingerprint": "<sha-256 hex>", "num_players": 2, "num_action_slots": 24,
     "zero_sum": true,
     "game": {"repr": "KuhnPoker(players=2)", "identity": "cfrkit.games.kuhn.KuhnPoker(...)",
              "name": "kuhn_poker", "class": "cfrkit.games.kuhn.KuhnPoker"},
     "infoset_keys": ["J", "Jb", ...], "action_sets": [["pass", "bet"]],
     "cache_key": null}

Action labels are written so that they come back as the same values of the same types (the
fingerprint covers their ``repr``): a ``str``, ``int`` (any size), ``bool``, ``None`` or finite
``float`` as itself (``1`` and ``1.0`` stay apart), a tuple as ``{"tuple": [...]}`` with its
items encoded the same way, a non-finite float as ``{"float": "inf" | "-inf" | "nan"}``,
``bytes`` as ``{"bytes": "<hex>"}`` and a NumPy bool, integer, float or string scalar as
``{"numpy": ["<dtype>", value]}``. Anything else (an enum, a named tuple, a ``str`` subclass,
a custom object) would not come back as itself, so :func:`save` refuses it.

:func:`~cfrkit.tree.load_compiled` checks the format and version, the array names, dtypes and shapes, that
the arrays describe a tree :func:`~cfrkit.compile_game` could have made (:mod:`.check`: every
index within the arrays it indexes, children after their parent, slots laid out block by block,
perfect recall; a damaged or hand-made file cannot send a kernel out of bounds or round a
cycle), and recomputes the fingerprint (SHA-256 over every array and name)
and the zero-sum flag, refusing a file whose content is not what was saved.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import re
import warnings
import weakref
from collections.abc import Hashable
from functools import lru_cache
from pathlib import Path
from typing import Any, Callable

import numpy as np

from .._files import file_in_the_way, replacing
from .._npz import DAMAGED_ZIP, load_npz, other_kind
from .._text import short_repr
from ..game import FixedAttributes, Game, GameError, History
from .layout import TREE_SCHEMA, CompiledGame, GameTree, plain_labels
from .walk import _exception_text

__all__ = [
    "FORMAT", "VERSION", "CompiledFileError", "StoredGame", "cache_key", "cache_path",
    "game_identity", "load_or_compile", "save",
]

FORMAT = "cfrkit.compiled_game"
#: Bump when the file's structure or the meaning of any GameTree array changes: files of
#: another version are refused (and cache files of another version are never looked up).
VERSION = 1

_METADATA = "metadata"
_ACTION_SET = "infoset_action_set"
_INT32 = np.dtype("int32")

# GameTree's fields: these and TREE_SCHEMA's arrays (tests/test_store.py checks it)
_SCALARS = ("num_players", "num_action_slots")


# -- action labels -----------------------------------------------------------------------------


def _encode_label(label: object) -> Any:
    """``label`` as a JSON value that decodes to an equal label of the same type and ``repr``;
    ``ValueError`` when it has none."""
    kind = type(label)
    if label is None or kind is bool or kind is str:
        return label
    if kind is int:
        return label
    if kind is float:
        return label if math.isfinite(label) else {"float": repr(label)}
    if kind is tuple:
        return {"tuple": [_encode_label(item) for item in label]}
    if kind is bytes:
        return {"bytes": label.hex()}
    if isinstance(label, np.generic) and label.dtype.kind in "biufU" and not label.dtype.metadata:
        if label.dtype.kind == "f" and label.dtype.itemsize > 8:  # long double: no exact text
            raise ValueError(f"is a NumPy {label.dtype} scalar, which cannot be written exactly")
        value = label.item()
        if label.dtype.kind == "f":
            value = _encode_label(float(value))
        return {"numpy": [label.dtype.str, value]}
    raise ValueError(
        f"is a {kind.__module__}.{kind.__qualname__}: labels saved with a compiled game must be "
        "str, int, float, bool, None, bytes, NumPy scalars or tuples of these (exactly these "
        "types, so that they load back as themselves)"
    )


def _decode_label(value: object) -> Hashable:
    """The label a value of :func:`_encode_label` stands for; ``ValueError`` if none."""
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, dict) and len(value) == 1:
        ((tag, inner),) = value.items()
        if tag == "tuple" and isinstance(inner, list):
            return tuple(_decode_label(item) for item in inner)
        if tag == "float" and inner in ("inf", "-inf", "nan"):
            return float(inner)
        if tag == "bytes" and isinstance(inner, str):
            return bytes.fromhex(inner)
        if tag == "numpy" and isinstance(inner, list) and len(inner) == 2:
            dtype = np.dtype(str(inner[0]))
            if dtype.kind in "biufU" and isinstance(inner[1], (bool, int, float, str, dict)):
                item = _decode_label(inner[1]) if dtype.kind == "f" else inner[1]
                label = dtype.type(item)
                if isinstance(label, np.generic):  # not an array of a list's values
                    return label
    raise ValueError(f"{short_repr(value)} is not an encoded action label")


def _fast_key(actions: tuple) -> tuple | None:
    """A dictionary key telling ``actions`` apart from every other tuple with another
    encoding, for the common all-``str``/``int`` tuples (``None`` otherwise: ``1``, ``1.0``
    and ``True`` are equal keys, and so are ``0.0`` and ``-0.0``)."""
    return actions if plain_labels(actions) else None


# -- save -------------------------------------------------------------------------------------


def _game_section(game: Game) -> dict:
    cls = type(game)
    name = getattr(game, "name", None)
    return {
        "repr": short_repr(game, 1000),
        "identity": game_identity(game, required=False),
        "name": name if type(name) is str else None,
        "class": f"{cls.__module__}.{cls.__qualname__}",
    }


def _document(compiled: CompiledGame, cache_key: str | None) -> tuple[dict, np.ndarray]:
    """The metadata of ``compiled`` and its per-infoset index into ``"action_sets"``.

    Its infoset keys are plain ``str`` (the walk keeps a subclass's value), so they load back
    as themselves."""
    sets: dict[Any, int] = {}
    encoded_sets: list[list] = []
    index = np.empty(len(compiled.infoset_keys), dtype=np.int32)
    for i, actions in enumerate(compiled.infoset_actions):
        fast = _fast_key(actions)
        found = sets.get(("fast", fast)) if fast is not None else None
        if found is None:
            labels = []
            for action in actions:
                try:
                    labels.append(_encode_label(action))
                    json.dumps(labels[-1])  # e.g. an int past Python's int-to-text digit limit
                except ValueError as exc:
                    raise ValueError(
                        f"cannot save action {short_repr(action)} of infoset "
                        f"{short_repr(compiled.infoset_keys[i])}: it {exc}"
                    ) from None
            text = json.dumps(labels, allow_nan=False)
            found = sets.get(("text", text))
            if found is None:
                found = sets[("text", text)] = len(encoded_sets)
                encoded_sets.append(labels)
            if fast is not None:
                sets[("fast", fast)] = found
        index[i] = found
    from .. import __version__

    metadata = {
        "format": FORMAT,
        "version": VERSION,
        "cfrkit_version": __version__,
        "fingerprint": compiled.fingerprint,
        "num_players": int(compiled.tree.num_players),
        "num_action_slots": int(compiled.tree.num_action_slots),
        "zero_sum": bool(compiled.zero_sum),
        "game": _game_section(compiled.game),
        "infoset_keys": list(compiled.infoset_keys),
        "action_sets": encoded_sets,
        "cache_key": cache_key,
    }
    return metadata, index


def save(compiled: CompiledGame, path: str | os.PathLike[str], *, compress: bool = False) -> Path:
    """Write ``compiled`` to ``path`` as one ``.npz`` file (see :meth:`CompiledGame.save`)."""
    return _write(compiled, Path(os.fspath(path)), None, compress)


def _write(
    compiled: CompiledGame, target: Path, cache_key: str | None, compress: bool = False
) -> Path:
    if not isinstance(compiled, CompiledGame):
        raise TypeError(f"expected a CompiledGame, got {type(compiled).__name__}")
    if not isinstance(compress, bool):
        raise ValueError(f"compress must be True or False, got {short_repr(compress)}")
    metadata, index = _document(compiled, cache_key)
    text = json.dumps(metadata, allow_nan=False, separators=(",", ":"))
    arrays = {f"tree/{name}": getattr(compiled.tree, name) for name in TREE_SCHEMA}
    arrays[_ACTION_SET] = index
    arrays[_METADATA] = np.frombuffer(text.encode("utf-8"), dtype=np.uint8)
    # a reader (another process of a sweep sharing the cache) sees the old file or the whole
    # new one, never half of one
    with replacing(target) as temporary, open(temporary, "wb") as stream:
        (np.savez_compressed if compress else np.savez)(stream, **arrays)
    return target


# -- load -------------------------------------------------------------------------------------


class StoredGame(FixedAttributes, Game):
    """The game of a compiled file loaded on its own: its name and size, not its rules.

    :func:`~cfrkit.tree.load_compiled` attaches one to the :class:`CompiledGame` it returns. Trainers and
    evaluation functions work on the compiled arrays and never need the rules; walking this game
    (:meth:`root`) raises :class:`~cfrkit.GameError`. ``compile_game(stored_game)`` returns the
    loaded :class:`CompiledGame`.

    Attributes
    ----------
    num_players : int
    name : str
        The original game's ``name`` (or its ``repr`` if it had none).
    path : str
        The file it was loaded from.
    original_repr : str
        The original game's ``repr``, as saved.
    identity : str or None
        The original game's :attr:`~cfrkit.Game.identity`, as saved.
    """

    def __init__(self, path: str, num_players: int, section: dict) -> None:
        self.path = path
        self.num_players = num_players
        self.original_repr = str(section.get("repr"))
        name = section.get("name")
        self.name = name if isinstance(name, str) else self.original_repr
        stored = section.get("identity")
        self._identity = stored if isinstance(stored, str) else None

    @property
    def identity(self) -> str | None:
        return self._identity

    def root(self) -> History:
        raise GameError(
            f"{self.original_repr} was loaded from the compiled file {self.path!r}, which holds "
            "its arrays but not its rules: train and evaluate it through its CompiledGame, or "
            "build the original game to walk it"
        )

    def __repr__(self) -> str:
        return f"StoredGame({self.original_repr}, path={self.path!r})"


class CompiledFileError(ValueError):
    """A compiled-game file that cannot be used: not one, truncated, damaged, of another format
    version, or edited. The message names the file and the reason."""


def _read(name: str, game: Game | None) -> tuple[CompiledGame, dict]:
    """The compiled game in file ``name`` (attached to ``game``, or to a :class:`StoredGame`),
    and its metadata; :class:`CompiledFileError` saying why not."""
    try:
        data = load_npz(name)
        if not isinstance(data, np.lib.npyio.NpzFile):
            raise CompiledFileError(f"{name}: not a compiled cfrkit game (a single .npy array)")
        with data:
            expected = {f"tree/{field}" for field in TREE_SCHEMA} | {_METADATA, _ACTION_SET}
            if _METADATA not in data.files:
                raise CompiledFileError(f"{name}: not a compiled cfrkit game (no metadata entry)")
            kind = other_kind(data, FORMAT)
            if kind is not None:
                raise CompiledFileError(f"{name}: {kind}, not a compiled game")
            raw = data[_METADATA]
            if raw.dtype != np.uint8 or raw.ndim != 1:
                raise CompiledFileError(f"{name}: not a compiled cfrkit game (bad metadata entry)")
            metadata = json.loads(raw.tobytes().decode("utf-8"))
            _check_header(name, metadata)
            if set(data.files) != expected:
                missing = sorted(expected - set(data.files))
                extra = sorted(set(data.files) - expected)
                raise CompiledFileError(f"{name}: arrays missing {missing}, unexpected {extra}")
            arrays = {key: data[key] for key in data.files if key != _METADATA}
    except CompiledFileError:
        raise
    except (FileNotFoundError, IsADirectoryError, PermissionError):
        raise
    except DAMAGED_ZIP as exc:
        raise CompiledFileError(f"{name}: truncated or damaged ({exc})") from exc
    except (ValueError, KeyError, OSError, UnicodeDecodeError) as exc:
        # not an npz (np.load's ValueError), an object array (refused without pickle), a damaged
        # member, or bad JSON (a ValueError too)
        raise CompiledFileError(f"{name}: not a readable compiled cfrkit game ({exc})") from exc
    compiled = _assemble(name, metadata, arrays, game)
    return compiled, metadata


def _check_header(name: str, metadata: object) -> None:
    if not isinstance(metadata, dict) or metadata.get("format") != FORMAT:
        raise CompiledFileError(f"{name}: not a compiled cfrkit game")
    if type(metadata.get("version")) is not int or metadata["version"] != VERSION:  # not True
        raise CompiledFileError(
            f"{name}: compiled-game format version {short_repr(metadata.get('version'))} (written "
            f"by cfrkit {short_repr(metadata.get('cfrkit_version'))}); this cfrkit reads version "
            f"{VERSION}: compile the game again"
        )
    for key, kind in (("fingerprint", str), ("num_players", int), ("num_action_slots", int),
                      ("zero_sum", bool), ("game", dict), ("infoset_keys", list),
                      ("action_sets", list)):
        value = metadata.get(key)
        # type() is int: JSON true/false would pass isinstance(..., int)
        if type(value) is not kind:
            raise CompiledFileError(f"{name}: bad or missing metadata entry {key!r}")
    if metadata["num_players"] < 1 or metadata["num_action_slots"] < 0:
        raise CompiledFileError(f"{name}: bad player or slot count")


def _assemble(name: str, metadata: dict, arrays: dict, game: Game | None) -> CompiledGame:
    """Check the arrays against the schema and the metadata, and build the CompiledGame."""
    num_players = metadata["num_players"]
    num_action_slots = metadata["num_action_slots"]
    keys = metadata["infoset_keys"]
    if not all(type(key) is str for key in keys):
        raise CompiledFileError(f"{name}: infoset keys must be strings")
    try:
        action_sets = [tuple(_decode_label(v) for v in labels) for labels in metadata["action_sets"]]
    except (ValueError, TypeError, OverflowError) as exc:
        raise CompiledFileError(f"{name}: bad action labels ({exc})") from None
    index = arrays[_ACTION_SET]
    if index.dtype != _INT32 or index.shape != (len(keys),):
        raise CompiledFileError(f"{name}: array {_ACTION_SET!r} has the wrong dtype or shape")
    if index.size and (int(index.min()) < 0 or int(index.max()) >= len(action_sets)):
        raise CompiledFileError(f"{name}: array {_ACTION_SET!r} holds values outside "
                                f"[0, {len(action_sets)})")
    sets_per_infoset = tuple(action_sets[i] for i in index.tolist())
    tree_arrays = {}
    for field in TREE_SCHEMA:
        array = tree_arrays[field] = arrays[f"tree/{field}"]
        # np.load's arrays are views of arrays of their own: both read-only, so the
        # CompiledGame need not copy them (it copies any that is not C-contiguous)
        while isinstance(array, np.ndarray):
            array.setflags(write=False)
            array = array.base
    tree = GameTree(num_players=num_players, num_action_slots=num_action_slots, **tree_arrays)
    if game is None:
        game = StoredGame(name, num_players, metadata["game"])
    try:  # the CompiledGame checks the arrays: their schema, then that they make a tree
        compiled = CompiledGame(game, tree, tuple(keys), sets_per_infoset)
    except ValueError as exc:
        raise CompiledFileError(f"{name}: {str(exc).removeprefix('CompiledGame: ')}") from None
    if compiled.fingerprint != metadata["fingerprint"]:
        raise CompiledFileError(
            f"{name}: its content does not match its fingerprint (the file is damaged or was "
            "edited)"
        )
    if compiled.zero_sum != metadata["zero_sum"]:
        raise CompiledFileError(f"{name}: its zero-sum flag does not match its utilities")
    return compiled


# -- the compile cache --------------------------------------------------------------------------


def game_identity(game: Game, *, required: bool) -> str | None:
    """``game.identity``, checked; ``ValueError`` when ``required`` and it has none."""
    try:
        identity = game.identity
        if callable(identity):
            identity = identity()
    except AttributeError:  # a Game-like object without the property
        identity = None
    except Exception as exc:  # the game's own code: named like the walk's errors
        raise GameError(f"{short_repr(game)}: reading identity raised {_exception_text(exc)}") from exc
    if identity is None:
        if required:
            reason = getattr(type(game), "_no_identity_reason", None) or (
                "define the property identity on its class, a string naming the game and "
                "every parameter and version its rules depend on (see cfrkit.Game.identity)"
            )
            raise ValueError(
                f"cache_dir needs a game with a stable identity, and {short_repr(game)} has "
                f"none: {reason}"
            )
        return None
    if type(identity) is not str or not identity:
        raise ValueError(
            f"{short_repr(game)}.identity must be a non-empty str or None, got "
            f"{short_repr(identity)}"
        )
    return identity


def _source_digest(filename: str) -> str:
    try:
        with open(filename, "rb") as stream:
            return hashlib.sha256(stream.read()).hexdigest()
    except OSError:
        return "unreadable"


@lru_cache(maxsize=None)
def _compiler_sources() -> dict[str, str]:
    """SHA-256 of every module of this package, the compiler: read once per process."""
    package = Path(__file__).parent
    return {f"{__package__}.{f.stem}": _source_digest(str(f)) for f in package.glob("*.py")}


#: Each game class's module digests, read when the class is first seen: a module reloaded
#: after an edit (a notebook's autoreload) makes new classes, whose digests are read anew,
#: while a file edited but not reloaded keeps the digest of the code that runs.
_CLASS_SOURCES: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _sources(cls: type) -> dict[str, str]:
    """SHA-256 of the source of cfrkit's compiler (every module of this package) and of each
    module defining the game's class or a base class: editing them changes the cache key.

    Keyed by module name, not path, so a project moved or checked out elsewhere (another
    machine of a cluster) keeps its cache.
    """
    import inspect

    digests = _CLASS_SOURCES.get(cls)
    if digests is None:
        digests = {}
        for base in cls.__mro__:
            if isinstance(base, type) and issubclass(base, Game) and base is not Game:
                try:
                    source = inspect.getsourcefile(base)
                # TypeError: defined in C; OSError: in __main__ without a file (python -c,
                # the interactive prompt, a notebook's kernel): the identity alone names them
                except (TypeError, OSError):
                    source = None
                if source is not None:
                    digests[base.__module__] = _source_digest(os.path.abspath(source))
        try:
            _CLASS_SOURCES[cls] = digests
        except TypeError:  # a class that cannot be weakly referenced: read each time
            pass
    return {**_compiler_sources(), **digests}


def cache_key(game: Game) -> str:
    """The cache key of ``game``: SHA-256 over its identity and class, this file format's
    version, the cfrkit version and the sources of the compiler and of the game's class."""
    from .. import __version__

    cls = type(game)
    document = {
        "format": FORMAT,
        "version": VERSION,
        "cfrkit_version": __version__,
        "identity": game_identity(game, required=True),
        "class": f"{cls.__module__}.{cls.__qualname__}",
        "sources": _sources(cls),
    }
    return hashlib.sha256(json.dumps(document, sort_keys=True).encode()).hexdigest()


def check_cache_dir(cache_dir: object) -> None:
    """A ValueError unless ``cache_dir`` is a path (every function taking one calls this
    first, so the message names the argument)."""
    if not isinstance(cache_dir, (str, os.PathLike)):
        raise ValueError(f"cache_dir must be a path or None, got {short_repr(cache_dir)}")
    if isinstance(cache_dir, str) and not cache_dir:  # an unset variable, say: not "here"
        raise ValueError("cache_dir must name a directory, got '' (pass '.' for the current one)")


def cache_path(game: Game, cache_dir: str | os.PathLike[str], key: str | None = None) -> Path:
    """The file in ``cache_dir`` that holds (or would hold) ``game`` compiled."""
    check_cache_dir(cache_dir)
    key = cache_key(game) if key is None else key
    # a readable head for people looking into the directory; the hash decides
    head = re.sub(r"[^A-Za-z0-9._=-]+", "_", game_identity(game, required=True))[:80].strip("_.")
    return Path(os.fspath(cache_dir)) / f"{head}-{key[:40]}.npz"


def load_or_compile(
    game: Game, cache_dir: str | os.PathLike[str], compile: Callable[[], CompiledGame],
    compiled: CompiledGame | None = None,
) -> CompiledGame:
    """``game`` compiled, from its file in ``cache_dir`` if there is a good one; otherwise
    ``compiled`` (if given) or ``compile()``, then written there atomically.

    A cache file that cannot be used (damaged, another format, written for another game)
    gives one warning, and is replaced by a fresh compilation. A failure to write the file
    gives a warning too: the compiled game is returned either way.
    """
    key = cache_key(game)
    path = cache_path(game, cache_dir, key)
    if compiled is None and path.exists():
        try:
            loaded, metadata = _read(str(path), game)
            if metadata.get("cache_key") != key or loaded.num_players != game.num_players:
                raise CompiledFileError(f"{path}: written for another game or cfrkit")
            return loaded
        except FileNotFoundError:  # removed since exists(): compile it
            pass
        except (ValueError, OSError) as exc:
            warnings.warn(
                f"cfrkit: cannot use the cached compiled game ({exc}); compiling again and "
                "replacing the file",
                RuntimeWarning,
                stacklevel=3,
            )
    elif compiled is not None and path.exists():
        return compiled
    if compiled is None:
        compiled = compile()
    try:
        blocking = file_in_the_way(path.parent)
        if blocking is not None:  # mkdir would say "File exists"
            raise NotADirectoryError(f"cache_dir {os.fspath(cache_dir)}: {blocking} is a file, "
                                     "not a folder")
        path.parent.mkdir(parents=True, exist_ok=True)
        _write(compiled, path, key)
    except (OSError, ValueError) as exc:
        warnings.warn(
            f"cfrkit: could not write the compiled game to the cache ({exc}); it is compiled, "
            "but the next process will compile it again",
            RuntimeWarning,
            stacklevel=3,
        )
    return compiled
