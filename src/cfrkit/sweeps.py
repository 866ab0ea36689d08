"""Experiment grids on Ray: games x trainers x parameters x seeds, each run to a stopping rule,
every run's convergence record in one table.

:func:`sweep` runs each point of the grid as one Ray task (on the cores of this machine through
a local Ray instance, or on an existing Ray cluster), and collects what
:meth:`~cfrkit.Trainer.solve` returned into one long table: one row per check of a run's
average policy, the run's own columns repeated on each. The table is written as
``NAME.csv`` and ``NAME.parquet`` while the sweep runs, and a sweep started again with the
same output skips the runs the table already holds.

Ray (``ray``) and pyarrow are an optional extra: ``pip install cfrkit[ray]``. This module
imports them when a sweep starts, so ``import cfrkit`` never needs them.

What a task receives and returns is plain data (strings, numbers, dicts of them): games travel
as their command-line names (``"kuhn"``, ``"kuhn(players=3)"``, ``"openspiel:leduc_poker"``)
and each worker builds and compiles them itself; nothing of cfrkit's is pickled.
"""

from __future__ import annotations

import contextlib
import datetime
import hashlib
import inspect
import itertools
import json
import math
import os
import socket
import sys
import time
import warnings
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from ._files import cannot_write_in, file_in_the_way, replacing
from ._numbers import check_bool, integer_value, real_value
from ._text import counted, first_line, short_repr
from .rules import RegretRule
from .trainers.base import MAX_SEED
from .tree.store import check_cache_dir

if TYPE_CHECKING:  # the extra: imported when a sweep runs
    import pyarrow

__all__ = ["SWEEP_COLUMNS", "load_sweep", "sweep"]

_INSTALL_HINT = "cfrkit.sweep needs Ray and pyarrow: pip install cfrkit[ray]  (or: pip install ray pyarrow)"

# a finished run reaches the files within this many seconds (a killed sweep loses at most
# these); rewriting both files costs milliseconds for thousands of runs, so it can be short
_FLUSH_SECONDS = 5.0


class TableNotWrittenWarning(RuntimeWarning):
    """:func:`sweep` could not write its table (a full disk, the folder removed).

    ``when`` says at which write (``"at the end"``, ...) and ``error`` is the ``OSError``. The
    runs go on; the rows are in the table :func:`sweep` returns.
    """

    def __init__(self, when: str, error: OSError) -> None:
        super().__init__(f"the sweep table was not written {when}: {error}")
        self.when, self.error = when, error


AT_THE_END = "at the end"

# the object store of a local Ray instance: the rows of the runs in flight, far below this
_OBJECT_STORE_BYTES = 128 * 2**20

# how long a HOST:PORT address has to accept a connection before the sweep says no Ray cluster
# is there (ray.init itself retries an unreachable address for minutes, saying nothing)
_CONNECT_SECONDS = 5.0

# the regret rules a ``rule`` parameter may name: the rules of the trainers of the same name
_RULES = {
    "vanilla": RegretRule.vanilla,
    "cfr+": RegretRule.cfr_plus,
    "linear": RegretRule.linear,
    "dcfr": RegretRule.discounted,
    "pcfr+": RegretRule.predictive_plus,
    "dcfr+": RegretRule.dcfr_plus,
    "pdcfr+": RegretRule.pdcfr_plus,
}
# constructor arguments a grid cannot set: the game and the seed are axes of their own, and a
# fixed policy is not a parameter to sweep
_NOT_PARAMETERS = ("self", "game", "seed", "fixed")

# (name, pyarrow type name, description): the table's columns, in order
SWEEP_COLUMNS: tuple[tuple[str, str, str], ...] = (
    ("run_id", "string", "16 hex digits: a hash of game, trainer, params, seed and stopping rule"),
    ("game", "string", "the game's name as given (command-line syntax)"),
    ("trainer", "string", "the trainer's command-line name (vanilla, cfr+, dcfr, ...)"),
    ("params", "string", "the trainer's keyword arguments of this run, as JSON with sorted keys"),
    ("seed", "uint64", "the seed of a sampled trainer; empty for the deterministic ones"),
    ("target_nash_conv", "float64", "the stopping rule: target NashConv (empty: none)"),
    ("max_iterations", "int64", "the stopping rule: iteration budget (empty: none)"),
    ("time_limit", "float64", "the stopping rule: seconds (empty: none)"),
    ("status", "string", "ok or error"),
    ("error", "string", "for an error, the exception as 'Type: message'; else empty"),
    ("stopped", "string", "why the run ended: target, max_iterations or time_limit"),
    ("final_iteration", "int64", "iterations run"),
    ("final_nash_conv", "float64", "NashConv of the final average policy"),
    ("final_exploitability", "float64", "its exploitability (two-player zero-sum games only)"),
    ("final_seconds", "float64", "the run's wall-clock seconds (training and checks)"),
    ("nodes_touched", "int64", "tree nodes the passes visited: the work done"),
    ("host", "string", "the machine the run ran on"),
    ("finished_at", "string", "when the run ended, ISO 8601 UTC"),
    ("cfrkit_version", "string", "the cfrkit version that ran it"),
    ("point", "int32", "this row's check, 0, 1, ... within the run (empty for an error)"),
    ("last", "bool", "true on each run's last row (its final check, or its error row)"),
    ("iteration", "int64", "iterations at this check"),
    ("seconds", "float64", "wall-clock seconds since the run started, at this check"),
    ("training_seconds", "float64", "the training part of seconds"),
    ("nash_conv", "float64", "NashConv of the average policy at this check"),
    ("exploitability", "float64", "exploitability at this check (two-player zero-sum games)"),
)
"""The columns of a sweep's table: ``(name, type, description)``. One row per check of a
run (an error run has one row, its check columns empty); ``run_id`` ... ``cfrkit_version``
are the run's and repeat on each of its rows."""


# -- the optional extra ----------------------------------------------------------------------


def _pyarrow():
    try:
        import pyarrow
        import pyarrow.compute  # noqa: F401
        import pyarrow.csv  # noqa: F401
        import pyarrow.parquet  # noqa: F401
    except ImportError as exc:
        raise ImportError(_INSTALL_HINT) from exc
    return pyarrow


def _ray():
    try:
        import ray
    except ImportError as exc:
        raise ImportError(_INSTALL_HINT) from exc
    return ray


def _schema():
    pa = _pyarrow()
    types = {"string": pa.string(), "uint64": pa.uint64(), "int64": pa.int64(),
             "int32": pa.int32(), "float64": pa.float64(), "bool": pa.bool_()}
    return pa.schema([(name, types[kind]) for name, kind, _ in SWEEP_COLUMNS],
                     metadata={"cfrkit": "sweep table, format 1"})


# -- the grid --------------------------------------------------------------------------------


def _as_list(name: str, value: Any) -> list:
    if isinstance(value, (str, bytes, Mapping)) or not isinstance(value, Iterable):
        value = [value]
    values = list(value)
    if not values:
        raise ValueError(f"{name} is empty")
    return values


def _trainer_classes() -> tuple[dict, tuple]:
    from .cli import SAMPLED_TRAINERS, TRAINERS

    return TRAINERS, SAMPLED_TRAINERS


def _check_value(where: str, value: Any) -> Any:
    """A parameter value as a JSON-plain scalar, or ValueError."""
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, (np.bool_,)):
        return bool(value)
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (float, np.floating)) and math.isfinite(float(value)):
        return float(value)
    raise ValueError(f"{where}: values must be finite numbers, bools, strings or None, "
                     f"got {short_repr(value)}")


def _check_rule(where: str, value: Any) -> Any:
    """A ``rule`` value: a preset's name, or a dict of :class:`RegretRule` fields."""
    if isinstance(value, str):
        if value not in _RULES:
            raise ValueError(f"{where}: unknown rule {value!r}; name one of {', '.join(_RULES)} "
                             "or give RegretRule fields as a dict")
        return value
    if isinstance(value, Mapping):
        fields = {str(k): _check_value(f"{where}[{k!r}]", v) for k, v in value.items()}
        try:
            RegretRule(**fields)
        except TypeError:
            raise ValueError(f"{where}: RegretRule has the fields floor, alpha, beta, gamma and "
                             f"predictive, got {sorted(fields)}") from None
        except ValueError as exc:
            raise ValueError(f"{where}: {exc}") from None
        return dict(sorted(fields.items()))
    raise ValueError(f"{where}: a rule is a preset's name ({', '.join(_RULES)}) or a dict of "
                     f"RegretRule fields, got {short_repr(value)}")


def _parameter_names(cls: type) -> list[str]:
    return [name for name, p in inspect.signature(cls).parameters.items()
            if name not in _NOT_PARAMETERS
            and p.kind in (p.KEYWORD_ONLY, p.POSITIONAL_OR_KEYWORD)]


def _combinations(trainer: str, cls: type, grid: Mapping | None) -> list[dict]:
    """The cartesian product of one trainer's parameter grid, each a dict in sorted key order."""
    if grid is None:
        return [{}]
    if not isinstance(grid, Mapping):
        raise ValueError(f"params[{trainer!r}] must be a dict of parameter -> values, "
                         f"got {short_repr(grid)}")
    allowed = _parameter_names(cls)
    axes = []
    for name in sorted(grid):
        if name not in allowed:
            raise ValueError(f"params[{trainer!r}]: {cls.__name__} has no parameter {name!r} "
                             f"(it takes {', '.join(allowed) or 'none'})")
        where = f"params[{trainer!r}][{name!r}]"
        check = _check_rule if name == "rule" else _check_value
        axes.append([(name, check(where, v)) for v in _as_list(where, grid[name])])
    return [dict(pairs) for pairs in itertools.product(*axes)]


def _check_seed(value: Any) -> int:
    seed = integer_value(value)
    if seed is None or not 0 <= seed < MAX_SEED:
        raise ValueError(f"seeds must be integers in [0, 2**64), got {short_repr(value)}")
    return seed


def _check_limit(name: str, value: Any, *, integer: bool = False) -> Any:
    if value is None:
        return None
    if integer:
        count = integer_value(value)
        if count is None or count < 0:
            raise ValueError(f"{name} must be a non-negative integer, got {short_repr(value)}")
        return count
    number = real_value(value)
    if number is None or not (math.isfinite(number) and number > 0.0):
        raise ValueError(f"{name} must be a positive number, got {short_repr(value)}")
    return number


def _run_id(task: Mapping[str, Any]) -> str:
    """The stable identity of a run: a hash of what decides its result.

    Game name, trainer name, parameters, seed (``None`` for deterministic trainers) and the
    stopping rule, as canonical JSON; 16 hex digits of its SHA-256. The cfrkit version is not
    part of it, so a sweep resumes across upgrades. Equal parameter values give one id: an
    integral float is written as the int (``2.0`` as ``2``, as ``--param dcfr:alpha=2`` gives
    it), which leaves the ids of every other value as they were.
    """
    identity = {key: task[key] for key in ("game", "trainer", "params", "seed",
                                           "target_nash_conv", "max_iterations", "time_limit")}
    identity["params"] = _canonical(identity["params"])
    text = json.dumps(identity, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _canonical(value: Any) -> Any:
    """``value`` with every integral float as the int it equals, in a rule's dict too."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, Mapping):
        return {key: _canonical(item) for key, item in value.items()}
    return value


def _grid(games, trainers, params, seeds, limits) -> list[dict]:
    """Validate the grid in the driver (so a typo fails at once, not in every task) and list
    its runs, each a plain dict, without duplicates, in grid order."""
    from .cli import UsageError, check_game

    names, sampled_classes = _trainer_classes()
    game_specs = []
    for spec in _as_list("games", games):
        if not isinstance(spec, str):
            raise ValueError(
                f"games: a game is named as on the command line ('kuhn', 'kuhn(players=3)', "
                f"'openspiel:leduc_poker'), got {short_repr(spec)}"
            )
        try:
            check_game(spec.strip())
        except UsageError as exc:
            raise ValueError(f"games: {exc}") from None
        game_specs.append(spec.strip())
    trainer_names = []
    for name in _as_list("trainers", trainers):
        key = name.strip().lower() if isinstance(name, str) else name
        if key not in names:
            raise ValueError(f"trainers: unknown trainer {short_repr(name)}; "
                             f"the trainers are {', '.join(names)}")
        trainer_names.append(key)
    params = {} if params is None else params
    if not isinstance(params, Mapping):
        raise ValueError(f"params must be a dict of trainer -> {{parameter: values}}, "
                         f"got {short_repr(params)}")
    grids = {}
    for key, grid in params.items():
        name = key.strip().lower() if isinstance(key, str) else key
        if name not in trainer_names:
            raise ValueError(f"params: {short_repr(key)} is not one of the trainers swept "
                             f"({', '.join(trainer_names)})")
        grids[name] = grid
    seed_values = [_check_seed(s) for s in _as_list("seeds", seeds)]

    runs: dict[str, dict] = {}
    for game in game_specs:
        for trainer in trainer_names:
            cls = names[trainer]
            # a deterministic trainer gives the same run for every seed: it runs once
            trainer_seeds = seed_values if cls in sampled_classes else [None]
            for combination in _combinations(trainer, cls, grids.get(trainer)):
                for seed in trainer_seeds:
                    task = dict(game=game, trainer=trainer, params=combination, seed=seed, **limits)
                    task["run_id"] = _run_id(task)
                    runs.setdefault(task["run_id"], task)
    return list(runs.values())


# -- one run, in a worker ----------------------------------------------------------------------

# the last game this worker process compiled: consecutive tasks are mostly of one game (the
# grid is submitted game by game), and one entry bounds the memory a big game holds
_LAST_GAME: dict[tuple, Any] = {}


def _compiled_game(spec: str, cache_dir: str | None = None):
    """The compiled game of a command-line name, reused for the worker's next run of it;
    with ``cache_dir``, loaded from the compiled-game cache there when a process compiled it
    before (and written there otherwise)."""
    from .cli import parse_game
    from .tree import compile_game

    key = (spec, cache_dir)  # a run asked to use a cache writes it, even after one without
    if key not in _LAST_GAME:
        _LAST_GAME.clear()  # before compiling: never two big games at once
        _LAST_GAME[key] = compile_game(parse_game(spec, cache_dir=cache_dir))
    return _LAST_GAME[key]


def _trainer(compiled, task: Mapping[str, Any]):
    names, sampled_classes = _trainer_classes()
    cls = names[task["trainer"]]
    kwargs = dict(task["params"])
    rule = kwargs.get("rule")
    if isinstance(rule, str):
        kwargs["rule"] = _RULES[rule]()
    elif isinstance(rule, Mapping):
        kwargs["rule"] = RegretRule(**rule)
    if cls in sampled_classes:
        kwargs["seed"] = task["seed"]
    if "threads" not in kwargs and "threads" in inspect.signature(cls).parameters:
        # a trainer that can use several cores uses those Ray reserved for the run, not all
        # of the machine's, which the other runs are using
        kwargs["threads"] = task["threads"]
    return cls(compiled, **kwargs)


def _row_base(task: Mapping[str, Any]) -> dict:
    from . import __version__

    return dict(
        run_id=task["run_id"], game=task["game"], trainer=task["trainer"],
        params=json.dumps(task["params"], sort_keys=True), seed=task["seed"],
        target_nash_conv=task["target_nash_conv"], max_iterations=task["max_iterations"],
        time_limit=task["time_limit"], host=socket.gethostname(), cfrkit_version=__version__,
    )


def _now() -> str:
    return datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="milliseconds")


def _error_rows(task: Mapping[str, Any], error: BaseException | str) -> list[dict]:
    """The one row of a run that failed: its columns, the error, and empty checks."""
    text = error if isinstance(error, str) else f"{type(error).__name__}: {error}"
    return [dict(_row_base(task), status="error", error=text.strip() or "error",
                 finished_at=_now(), last=True)]


def _run_task(task: Mapping[str, Any]) -> list[dict]:
    """Run one point of the grid and return its rows (plain dicts): what a Ray task runs.

    Any exception of the run (a game that does not compile, a parameter the trainer refuses,
    ...) becomes the run's error row: one failed run does not stop a sweep.
    """
    try:
        compiled = _compiled_game(task["game"], task.get("cache_dir"))
        trainer = _trainer(compiled, task)
        record = trainer.solve(target_nash_conv=task["target_nash_conv"],
                               max_iterations=task["max_iterations"],
                               time_limit=task["time_limit"])
    except Exception as exc:  # noqa: BLE001 - any failure is the run's result
        return _error_rows(task, exc)
    exploitability = record.exploitability
    run = dict(
        _row_base(task), status="ok", error=None, stopped=record.stopped,
        final_iteration=int(record.iterations[-1]), final_nash_conv=float(record.nash_conv[-1]),
        final_exploitability=None if exploitability is None else float(exploitability[-1]),
        final_seconds=float(record.seconds[-1]), nodes_touched=int(trainer.nodes_touched),
        finished_at=_now(),
    )
    return [
        dict(run, point=i, iteration=int(record.iterations[i]), seconds=float(record.seconds[i]),
             training_seconds=float(record.training_seconds[i]),
             nash_conv=float(record.nash_conv[i]),
             exploitability=None if exploitability is None else float(exploitability[i]),
             last=i == record.iterations.shape[0] - 1)
        for i in range(record.iterations.shape[0])
    ]


# -- the files -------------------------------------------------------------------------------


def _output_paths(output: str | os.PathLike) -> tuple[Path, Path]:
    """``(NAME.csv, NAME.parquet)`` for a directory (``results.*`` in it) or a file stem."""
    text = os.fspath(output)
    if not isinstance(text, str) or not text:
        raise ValueError(f"output must be a path, got {short_repr(output)}")
    path = Path(text)
    directory = text.endswith(("/", os.sep)) or path.is_dir()
    folder = path if directory else path.parent
    blocking = file_in_the_way(folder)
    if blocking is not None:
        raise ValueError(f"output {text}: {blocking} is a file, not a folder")
    if directory:
        path.mkdir(parents=True, exist_ok=True)
        stem = path / "results"
    else:
        stem = path.with_suffix("") if path.suffix in (".csv", ".parquet") else path
        if not stem.parent.is_dir():
            raise ValueError(f"output {text}: folder {stem.parent} does not exist")
    reason = cannot_write_in(stem.parent)  # before the runs, whose rows could not be kept
    if reason is not None:
        raise ValueError(f"output {text}: cannot write in {stem.parent} ({reason})")
    return stem.with_name(stem.name + ".csv"), stem.with_name(stem.name + ".parquet")


def load_sweep(path: str | os.PathLike) -> pyarrow.Table:
    """Read a sweep's table back: from its ``.parquet`` or its ``.csv`` file.

    Both files hold the same table; the CSV is read with the table's column types (see
    :data:`SWEEP_COLUMNS`), so either gives the same values, floats to the last bit. A CSV
    that lost its end in the middle of a row (a crash while it was written) is read without
    that row: the run it belonged to is incomplete, and a resumed sweep runs it again.

    Parameters
    ----------
    path : str or os.PathLike
        ``results.parquet``, ``results.csv``, a file stem (``results``: the Parquet file if it
        exists, else the CSV) or the directory a sweep wrote into.

    Returns
    -------
    pyarrow.Table
        One row per check of each run (see :func:`sweep`).

    Raises
    ------
    FileNotFoundError
        If there is no such file.
    ValueError
        If the file is not a sweep's table (other columns).
    """
    pa = _pyarrow()
    text = os.fspath(path)
    path = Path(text)
    if path.suffix not in (".csv", ".parquet"):
        # a trailing slash names a folder, as sweep(output=...) takes it, even a missing one
        folder = path.is_dir() or (isinstance(text, str) and text.endswith(("/", os.sep)))
        stem = path / "results" if folder else path
        parquet, csv = stem.with_name(stem.name + ".parquet"), stem.with_name(stem.name + ".csv")
        path = parquet if parquet.exists() or not csv.exists() else csv
    if not path.exists():
        raise FileNotFoundError(f"no sweep table at {path}")
    schema = _schema()
    try:
        if path.suffix == ".parquet":
            table = pa.parquet.read_table(path)
        else:
            options = pa.csv.ConvertOptions(column_types=schema, strings_can_be_null=True,
                                            quoted_strings_can_be_null=False)
            # an error message may span lines: without newlines_in_values, a file of more
            # than one block (1 MiB) would fail where a newline inside quotes splits it
            table = pa.csv.read_csv(pa.BufferReader(_whole_records(path.read_bytes())),
                                    parse_options=pa.csv.ParseOptions(newlines_in_values=True),
                                    convert_options=options)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as exc:  # not a table, or damaged
        raise ValueError(f"{path} is not a cfrkit sweep table: {first_line(exc)[:120]}") from None
    if table.column_names != schema.names:
        raise ValueError(f"{path} is not a cfrkit sweep table: its columns are "
                         f"{short_repr(table.column_names, 200)}")
    try:
        return table.cast(schema)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as exc:
        raise ValueError(f"{path} is not a cfrkit sweep table: {exc}") from None


def _whole_records(data: bytes) -> bytes:
    """A sweep CSV's bytes without a last row cut short: up to the newline that ends its
    last whole record.

    The sweep writes the file whole (a temporary file, then a rename), but a crash while a
    file is written or copied can leave it ending in the middle of a row, and that row alone
    would make the whole file unreadable. Without it, its run has no ``last`` row left (a
    run's rows are together, in order), so a resumed sweep runs it again, as after a cut at
    the end of a line. A bad row anywhere else still fails to parse.
    """
    # A record ends at a newline outside quotes: an error message may hold newlines inside
    # its quoted field, so the file's last newline alone could fall inside a field. Quotes
    # inside a field are doubled, so a newline is outside quotes exactly when an even number
    # of quote characters precede it.
    quotes = data.count(b'"')
    if data.endswith(b"\n") and quotes % 2 == 0:
        return data  # whole: the common case
    end = data.rfind(b"\n")
    while end >= 0 and (quotes - data.count(b'"', end)) % 2:
        end = data.rfind(b"\n", 0, end)
    # no whole record at all (not even the header): the parser says what is wrong
    return data if end < 0 else data[: end + 1]


class _Table:
    """The rows of a sweep: those the files held, and the runs finished since.

    A run finished now replaces the file's rows of the same run (a retried error); rows of
    runs outside this grid are kept. Finished runs are laid out in grid order, whatever order
    they finished in, so the same sweep writes the same rows in the same order.
    """

    def __init__(self, previous, order: dict[str, int]) -> None:
        self.previous = previous  # a pyarrow.Table or None
        self.order = order  # run id -> position in the grid
        self.finished: dict[str, list[dict]] = {}

    def add(self, task_id: str, rows: list[dict]) -> None:
        self.finished[task_id] = rows

    def table(self):
        pa = _pyarrow()
        schema = _schema()
        new = [row for rid in sorted(self.finished, key=self.order.__getitem__)
               for row in self.finished[rid]]
        fresh = pa.Table.from_pylist(new, schema=schema)
        if self.previous is None:
            return fresh
        replaced = pa.array(list(self.finished), pa.string())
        kept = self.previous.filter(pa.compute.invert(
            pa.compute.is_in(self.previous["run_id"], value_set=replaced)))
        return pa.concat_tables([kept, fresh])

    def write(self, csv: Path, parquet: Path) -> None:
        pa = _pyarrow()
        table = self.table()
        # Parquet first: it is the file a resumed sweep reads
        with replacing(parquet) as temporary:
            pa.parquet.write_table(table, temporary)
        with replacing(csv) as temporary:
            pa.csv.write_csv(table, temporary)

    def try_write(self, paths: tuple[Path, Path], when: str) -> bool:
        """:meth:`write`, with a failure to write (a full disk, a folder removed) a
        :class:`TableNotWrittenWarning` naming the file rather than an error: the rows stay
        here, and the next write (or the table returned) still has them. True if written."""
        try:
            self.write(*paths)
        except OSError as exc:
            warnings.warn(TableNotWrittenWarning(when, exc), stacklevel=3)
            return False
        return True


# -- Ray -----------------------------------------------------------------------------------------


@contextlib.contextmanager
def _ray_session(address: str | None, num_cpus: int | None, runtime_env: Mapping | None):
    """Ray for the sweep: the session this process already has, or one started (a local
    instance, or a connection to ``address``) and shut down at the end."""
    ray = _ray()
    if ray.is_initialized():
        if address is not None or num_cpus is not None or runtime_env is not None:
            raise ValueError("Ray is already initialised in this process: address, num_cpus and "
                             "runtime_env apply only when sweep() starts it (call ray.shutdown() "
                             "first, or leave them out to use the running session)")
        yield ray
        return
    options: dict[str, Any] = dict(include_dashboard=False, log_to_driver=False,
                                   configure_logging=False)
    if runtime_env is not None:
        options["runtime_env"] = dict(runtime_env)
    if address is None and not os.environ.get("RAY_ADDRESS"):
        # a local instance of this machine. Its object store holds only the runs' rows (a few
        # hundred bytes per check), not Ray's default of 30% of the memory in /dev/shm
        options.update(num_cpus=num_cpus, object_store_memory=_OBJECT_STORE_BYTES)
    _check_reachable(address if address is not None else os.environ.get("RAY_ADDRESS"))
    ray.init(address=address, **options)
    try:
        yield ray
    finally:
        ray.shutdown()  # a local instance stops; a cluster is only disconnected from


def _host_and_port(address: str) -> tuple[str, int] | None:
    """``(host, port)`` of a ``HOST:PORT`` (or ``[IPv6]:PORT``) address; None for ``auto``,
    ``local``, ``ray://...`` and anything else Ray reads its own way."""
    text = address.strip()
    if text.lower() in ("auto", "local") or "://" in text:
        return None
    host, colon, port = text.rpartition(":")
    if not (colon and host and port.isascii() and port.isdigit()):
        return None
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
    return host, int(port)


def _check_reachable(address: str | None) -> None:
    """ConnectionError unless something accepts a TCP connection at a ``HOST:PORT`` address
    within :data:`_CONNECT_SECONDS`: ``ray.init`` would retry it for minutes, saying nothing.
    Other addresses (``auto``, ``ray://...``) are left to Ray, which fails fast on them."""
    where = None if not address else _host_and_port(address)
    if where is None:
        return
    host, port = where
    try:
        with socket.create_connection((host, port), timeout=_CONNECT_SECONDS):
            pass
    except (OSError, OverflowError) as exc:  # refused, timed out, unknown host, port > 65535
        reason = getattr(exc, "strerror", None) or str(exc) or type(exc).__name__
        raise ConnectionError(
            f"no Ray cluster at {address.strip()} ({reason}): start Ray there "
            f"(ray start --head --port={port} on that machine) or give the address of a "
            "running cluster's head node"
        ) from None


def _crash_message(exc: BaseException) -> str:
    # Ray's errors carry a long traceback of the worker; the first line says what happened
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0] if text else 'the task failed'}"


# -- the public function -----------------------------------------------------------------------


def sweep(
    games: str | Sequence[str],
    trainers: str | Sequence[str],
    *,
    params: Mapping[str, Mapping[str, Any]] | None = None,
    seeds: int | Sequence[int] = (0,),
    target_nash_conv: float | None = None,
    max_iterations: int | None = None,
    time_limit: float | None = None,
    output: str | os.PathLike | None = None,
    address: str | None = None,
    num_cpus: int | None = None,
    cpus_per_run: float = 1,
    runtime_env: Mapping[str, Any] | None = None,
    progress: bool = False,
    cache_dir: str | os.PathLike[str] | None = None,
) -> pyarrow.Table:
    """Run every game x trainer x parameter x seed to a stopping rule, on Ray; one table.

    Each point of the grid is one run: the worker builds the game from its name, compiles it,
    builds the trainer with the run's parameters and seed, and runs
    :meth:`~cfrkit.Trainer.solve` with the stopping rule. Runs are Ray tasks of
    ``cpus_per_run`` CPUs each, so a local sweep keeps every core busy and a cluster every
    node. Each run's :class:`~cfrkit.SolveRecord` becomes rows of one long table (columns:
    :data:`SWEEP_COLUMNS`): one row per check of the average policy, with the run's own
    columns -- game, trainer, params, seed, status, final NashConv, ... -- repeated on each.

    - **Seeds** apply to the sampled trainers (``chance-sampled``, ``external-sampling``,
      ``outcome-sampling``): each runs once per seed. The full-pass trainers are deterministic
      and run once whatever ``seeds`` holds (another seed would repeat the same run); their
      ``seed`` column is empty.
    - **Failures**: an exception in a run (a game that does not compile, a parameter value the
      trainer refuses, a worker that dies) gives that run one row with ``status="error"`` and
      the exception in ``error``; the other runs go on. Bad grid arguments -- an unknown game
      or trainer, a parameter the trainer does not have -- raise :class:`ValueError` before
      anything runs.
    - **Output and resume**: with ``output``, the table is written to ``NAME.csv`` and
      ``NAME.parquet`` (each atomically: a temporary file, then a rename) every few seconds
      while runs finish and at the end, also on Ctrl-C, so an interrupted sweep keeps the runs
      it finished. Started again with the same ``output``, a sweep skips every run whose
      ``run_id`` (a hash of game, trainer, params, seed and stopping rule) the file holds with
      status ``ok`` down to its last row, runs again those that failed (or whose rows were cut
      short), and keeps rows of runs outside its grid: one output can collect several sweeps.
      The folder must be writable when the sweep starts; a write that fails later (a full
      disk) warns and the sweep goes on, and the table is returned whether or not the last
      write worked.

    Parameters
    ----------
    games : str or sequence of str
        Games named as on the command line (``cfrkit games`` lists them): ``"kuhn"``,
        ``"kuhn(players=3)"``, ``"leduc"``, ``"rps"``, ``"openspiel:leduc_poker"``, ... The
        name is all a worker receives; it builds and compiles the game itself, and keeps the
        last one it compiled for its next run.
    trainers : str or sequence of str
        Trainers by their command-line names: ``vanilla``, ``pruned``, ``chance-sampled``,
        ``external-sampling``, ``outcome-sampling``, ``cfr+``, ``linear``, ``dcfr``, ``pcfr+``,
        ``dcfr+``, ``pdcfr+``.
    params : dict, optional
        Per trainer, a grid of constructor keyword values: ``{"dcfr": {"alpha": [1, 1.5, 2],
        "gamma": [2, 3]}}`` runs DCFR with the 6 combinations (a single value needs no list).
        Values are numbers, bools, strings or ``None``. ``rule`` (for ``pruned`` and the
        sampled trainers) takes a rule's name -- ``"vanilla"``, ``"cfr+"``, ``"linear"``,
        ``"dcfr"``, ``"pcfr+"``, ``"dcfr+"``, ``"pdcfr+"`` -- or a dict of
        :class:`~cfrkit.RegretRule` fields, ``{"alpha": 1.5, "beta": 0, "gamma": 2}``. Trainers
        not named run with their defaults.
    seeds : int or sequence of int
        Seeds of the sampled trainers, each in ``[0, 2**64)`` (default ``(0,)``).
    target_nash_conv, max_iterations, time_limit : optional
        The stopping rule, as :meth:`~cfrkit.Trainer.solve` takes it (at least one). A time
        limit makes results depend on the machine and its load.
    output : str or os.PathLike, optional
        Where the table goes: a directory (existing, or written with a trailing ``/`` to create
        it) gets ``results.csv`` and ``results.parquet``; any other path is a file stem
        (``runs/dcfr`` or ``runs/dcfr.csv``: ``runs/dcfr.csv`` and ``runs/dcfr.parquet``) in an
        existing folder. ``None``: nothing is written and nothing resumed.
    address : str, optional
        ``None`` (default): start a local Ray instance on this machine and stop it at the end
        (as Ray does, the ``RAY_ADDRESS`` environment variable, if set, names a cluster to use
        instead). ``"auto"``, ``"HOST:PORT"`` or ``"ray://HOST:10001"``: connect to that
        running cluster, and disconnect at the end. If this process already called
        ``ray.init()``, that session is used and left running.
    num_cpus : int, optional
        The CPUs of the local instance (default: all of this machine's). Only with a local
        instance.
    cpus_per_run : float, optional
        CPUs Ray reserves for each run (default 1: as many concurrent runs as CPUs). A trainer
        that takes ``threads=`` gets this many (rounded down, at least 1) unless ``params``
        sets it.
    runtime_env : dict, optional
        Ray's runtime environment for the workers, passed to ``ray.init``: e.g.
        ``{"env_vars": {"NUMBA_CACHE_DIR": "/scratch/numba"}}``, or packages to install
        where the nodes lack them (see Ray's documentation on runtime environments).
    progress : bool, optional
        Print a line on stderr as each run finishes.
    cache_dir : str or os.PathLike, optional
        A compiled-game cache the workers share (:func:`cfrkit.compile_game`'s ``cache_dir``):
        a game is walked by the first worker that needs it and loaded from the folder by the
        others, and by later sweeps. On a cluster, a folder every node sees at the same path.
        (Two workers that start on the same uncompiled game at once both compile it; the
        files are written atomically, so neither reads half a file.)

    Returns
    -------
    pyarrow.Table
        The rows of this grid's runs (those skipped as already done included), in grid order;
        the files may hold more, from other grids.

    Raises
    ------
    ValueError
        For a bad grid (unknown game, trainer or parameter, a parameter value that is not
        plain, a bad seed), no stopping rule, or an ``output`` in a folder that does not exist,
        cannot be written, is under a file, or holds a table that is not a sweep's.
    ImportError
        If Ray or pyarrow is not installed (``pip install cfrkit[ray]``).
    ConnectionError
        Before any run, if no Ray cluster runs at ``address`` (or ``RAY_ADDRESS``): for
        ``"HOST:PORT"``, nothing accepted a connection there within 5 seconds.
    KeyboardInterrupt
        On Ctrl-C: the runs finished so far are written, the others cancelled.

    Warns
    -----
    TableNotWrittenWarning
        A ``RuntimeWarning``, when the table cannot be written to ``output`` (a full disk, the
        folder removed), naming the file and the reason; the runs go on, and the rows are in
        the table returned.

    Examples
    --------
    >>> import cfrkit
    >>> table = cfrkit.sweep(["kuhn", "leduc"], ["cfr+", "dcfr", "external-sampling"],
    ...                      params={"dcfr": {"alpha": [1.5, 2.0]}}, seeds=range(5),
    ...                      target_nash_conv=1e-3, max_iterations=100_000,
    ...                      output="results/")   # doctest: +SKIP
    >>> runs = table.filter(table["last"])   # one row per run  # doctest: +SKIP
    """
    limits = dict(
        target_nash_conv=_check_limit("target_nash_conv", target_nash_conv),
        max_iterations=_check_limit("max_iterations", max_iterations, integer=True),
        time_limit=_check_limit("time_limit", time_limit),
    )
    if all(value is None for value in limits.values()):
        raise ValueError("sweep() needs a stopping rule: target_nash_conv, max_iterations or time_limit")
    if num_cpus is not None:
        given, num_cpus = num_cpus, integer_value(num_cpus)
        if num_cpus is None or num_cpus < 1:
            raise ValueError(f"num_cpus must be a positive integer, got {short_repr(given)}")
    if num_cpus is not None and (address is not None or os.environ.get("RAY_ADDRESS")):
        raise ValueError("num_cpus applies to a local Ray instance only, not with address or "
                         "RAY_ADDRESS (a cluster has the CPUs it was started with)")
    given, cpus_per_run = cpus_per_run, real_value(cpus_per_run)
    if cpus_per_run is None or not 0 < cpus_per_run < math.inf:
        raise ValueError(f"cpus_per_run must be a positive number, got {short_repr(given)}")
    if address is not None and not isinstance(address, str):
        raise ValueError(f"address must be a string such as 'auto', got {short_repr(address)}")
    if runtime_env is not None and not isinstance(runtime_env, Mapping):
        raise ValueError(f"runtime_env must be a dict (Ray's runtime_env), got "
                         f"{short_repr(runtime_env)}")
    progress = check_bool("progress", progress)
    if cache_dir is not None:
        check_cache_dir(cache_dir)
        blocking = file_in_the_way(cache_dir)
        if blocking is not None:  # every run would warn that it cannot use the cache
            raise ValueError(f"cache_dir {os.fspath(cache_dir)}: {blocking} is a file, not a "
                             "folder")
        cache_dir = os.path.abspath(os.fspath(cache_dir))  # the workers' working folder differs
    _pyarrow()  # the extra, checked before any work
    runs = _grid(games, trainers, params, seeds, limits)
    order = {task["run_id"]: i for i, task in enumerate(runs)}

    paths = None if output is None else _output_paths(output)
    previous = source = None
    if paths is not None and (paths[1].exists() or paths[0].exists()):
        source = paths[1] if paths[1].exists() else paths[0]
        previous = load_sweep(source)
    table = _Table(previous, order)
    done = set()
    if previous is not None:
        pa = _pyarrow()
        # a run is done when its last row says it finished: a table cut short (a CSV whose
        # end was lost) may hold a run's first checks only, and the run goes again
        ok = previous.filter(pa.compute.and_(pa.compute.equal(previous["status"], "ok"),
                                             previous["last"]))
        done = set(ok["run_id"].to_pylist()) & set(order)
    todo = [task for task in runs if task["run_id"] not in done]
    if progress and done:
        print(f"cfrkit sweep: {len(done)} of {len(runs)} runs already in {source}; "
              f"{len(todo)} to run", file=sys.stderr, flush=True)

    if todo:
        _run_all(todo, table, paths, address, num_cpus, cpus_per_run, runtime_env, progress,
                 cache_dir)
    if paths is not None:
        table.try_write(paths, AT_THE_END)
    result = table.table()
    pa = _pyarrow()
    mine = result.filter(pa.compute.is_in(result["run_id"], value_set=pa.array(list(order), pa.string())))
    # grid order: the rows of each run stay together and in order of their checks
    position = pa.array([order[r] for r in mine["run_id"].to_pylist()], pa.int64())
    indices = pa.compute.sort_indices(
        pa.table({"position": position, "row": pa.array(np.arange(len(mine)))}),
        sort_keys=[("position", "ascending"), ("row", "ascending")],
    )
    return mine.take(indices)


def _run_all(todo, table: _Table, paths, address, num_cpus, cpus_per_run, runtime_env,
             progress: bool, cache_dir: str | None) -> None:
    """Submit every run as a Ray task; collect rows as they finish; write now and then."""
    with _ray_session(address, num_cpus, runtime_env) as ray:
        # one retry: a task whose worker died (a node lost) runs again once; a run that kills
        # its worker twice is recorded as an error
        remote = ray.remote(_run_task).options(num_cpus=cpus_per_run, max_retries=1)
        threads = max(1, int(cpus_per_run))
        # neither threads nor the cache is part of a run's identity: they change how fast,
        # not what
        pending = {remote.remote(dict(task, threads=threads, cache_dir=cache_dir)): task
                   for task in todo}
        last_write = time.monotonic()
        finished = 0
        try:
            while pending:
                ready, _ = ray.wait(list(pending), num_returns=1, timeout=1.0)
                for ref in ready:
                    task = pending.pop(ref)
                    try:
                        rows = ray.get(ref)
                    except ray.exceptions.RayError as exc:  # the worker crashed, or Ray failed
                        rows = _error_rows(task, _crash_message(exc))
                    table.add(task["run_id"], rows)
                    finished += 1
                    if progress:
                        print(f"cfrkit sweep: [{finished}/{len(todo)}] {_describe(rows[0])}",
                              file=sys.stderr, flush=True)
                if paths is not None and ready and time.monotonic() - last_write >= _FLUSH_SECONDS:
                    table.try_write(paths, f"after {counted(finished, 'run')} (the sweep goes on)")
                    last_write = time.monotonic()
        except BaseException as exc:
            # Ctrl-C (or a failure of the driver): keep what finished, stop what did not
            for ref in pending:
                with contextlib.suppress(Exception):
                    ray.cancel(ref, force=True)
            # a failure to write warns: it must not hide the interrupt or error that stops us
            written = paths is not None and table.try_write(paths, "when the sweep stopped")
            if progress and isinstance(exc, KeyboardInterrupt):
                where = f"; their rows are in {paths[1]}" if written else ""
                print(f"cfrkit sweep: interrupted: {finished} of {len(todo)} runs finished"
                      f"{where}", file=sys.stderr, flush=True)
            raise


def _setting_label(trainer: str, params: str) -> str:
    """``"dcfr alpha=2 gamma=3"``: a trainer and its parameters (the table's JSON text) in a
    line, for legends and summaries."""
    values = json.loads(params) if params else {}
    return " ".join([trainer, *(f"{k}={_plain(v)}" for k, v in values.items())])


def _plain(value: Any) -> str:
    # 2 and 2.0 read alike, as they are one run (see _run_id)
    if isinstance(value, dict):  # a rule given as RegretRule fields
        return "(" + ",".join(f"{k}={_plain(v)}" for k, v in value.items()) + ")"
    return str(_canonical(value))


def _describe(row: Mapping[str, Any]) -> str:
    what = f"{row['game']} {_setting_label(row['trainer'], row['params'])}"
    if row["seed"] is not None:
        what += f" seed={row['seed']}"
    if row["status"] != "ok":
        return f"{what}: {row['error']}"
    return (f"{what}: NashConv {row['final_nash_conv']:.3g} at iteration "
            f"{row['final_iteration']} ({row['stopped']}), {row['final_seconds']:.3g} s")
