"""The ``cfrkit`` command line (also ``python -m cfrkit``).

::

    cfrkit games                              the built-in games and how to name OpenSpiel's
    cfrkit solve GAME [options]               train, then print the strategy, values, NashConv
    cfrkit evaluate GAME POLICY.json          values, NashConv and each player's improvement
    cfrkit sweep --games ... --trainers ...   a grid of runs on Ray, into one table

Bad usage prints one line on stderr and exits with status 2, before any work; Ctrl-C exits
with status 130, after writing the checkpoint if ``--checkpoint`` was given. An output file that
cannot be written after the work (a full disk) is one line on stderr each, the other outputs
are still written, and the status is 1.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import os
import re
import sys
import warnings
from collections.abc import Iterator, Sequence

import numpy as np

from . import __version__
from .checkpoint import CheckpointError, load_trainer
from .evaluation import evaluate
from .game import Game, GameError
from .games import RPSLS, KuhnPoker, LeducPoker, RockPaperScissors
from .games.kuhn import DEALS as KUHN_DEALS
from .policy import load_policy
from .trainers import (
    CFRPlus,
    ChanceSampledCFR,
    DCFRPlus,
    DiscountedCFR,
    ExternalSamplingCFR,
    LinearCFR,
    OutcomeSamplingCFR,
    PDCFRPlus,
    PredictiveCFRPlus,
    PrunedCFR,
    VanillaCFR,
)
from ._files import cannot_write_in, file_in_the_way, replacing
from ._text import first_line, short_repr
from .trainers.base import MAX_SEED, Trainer
from .tree import compile_game

__all__ = ["main"]

EXIT_FAILED = 1
EXIT_USAGE = 2
EXIT_INTERRUPTED = 130
DEFAULT_ITERATIONS = 1000


class _Word:
    """A word-valued game parameter: one of ``choices``, written bare or in quotes.

    The game itself validates the value; the choices are listed by ``cfrkit games`` and named
    in the error for any other word.
    """

    def __init__(self, *choices: str) -> None:
        self.choices = choices
        self.__name__ = "|".join(choices)  # shown as deal=<deck|independent>
        self.description = " or ".join(repr(c) for c in choices)

    def __call__(self, text: str) -> str:
        if len(text) >= 2 and text[0] == text[-1] and text[0] in "'\"":
            text = text[1:-1]  # deal='independent', as the game's repr writes it
        if text not in self.choices:
            raise ValueError(text)
        return text


# name -> (class, parameters with their types, description: lines)
BUILTIN_GAMES = {
    "rps": (RockPaperScissors, {}, "rock-paper-scissors as an extensive-form game"),
    "rpsls": (RPSLS, {}, "rock-paper-scissors-lizard-Spock"),
    "kuhn": (
        KuhnPoker,
        {"players": int, "max_bets": int, "deal": _Word(*KUHN_DEALS)},
        "Kuhn poker, players=2 (default) or more; for two players also\n"
        "max_bets (default 1: one bet; 2: a bet and a raise; ...) and\n"
        "deal=independent (cards Q, K, A dealt independently; default deck)",
    ),
    "leduc": (LeducPoker, {}, "Leduc hold'em (OpenSpiel's leduc_poker tree)"),
}

TRAINERS = {
    "vanilla": VanillaCFR,
    "pruned": PrunedCFR,
    "chance-sampled": ChanceSampledCFR,
    "external-sampling": ExternalSamplingCFR,
    "outcome-sampling": OutcomeSamplingCFR,
    "cfr+": CFRPlus,
    "linear": LinearCFR,
    "dcfr": DiscountedCFR,
    "pcfr+": PredictiveCFRPlus,
    "dcfr+": DCFRPlus,
    "pdcfr+": PDCFRPlus,
}
SAMPLED_TRAINERS = (ChanceSampledCFR, ExternalSamplingCFR, OutcomeSamplingCFR)
STREAM_TRAINERS = SAMPLED_TRAINERS  # the ones that take streams=
SAMPLED_NAMES = [name for name, cls in TRAINERS.items() if cls in SAMPLED_TRAINERS]
DEFAULT_TRAINER = "dcfr+"  # the fastest to a target on the poker games measured (docs/trainers.md)


class UsageError(Exception):
    """Bad input from the command line: printed as one line, exit status 2."""


# -- games ---------------------------------------------------------------------------------------


def parse_game(spec: str, *, cache_dir: str | None = None) -> Game:
    """A game from its command-line name: ``kuhn``, ``kuhn(players=3)``,
    ``kuhn(max_bets=2, deal=independent)`` (a word bare or quoted), ``leduc``, ..., or
    ``openspiel:NAME(params)`` for any OpenSpiel game.

    With ``cache_dir``, the game comes back compiled through the compiled-game cache in that
    folder (:func:`cfrkit.compile_game`'s ``cache_dir``): loaded from it when an earlier process
    compiled the game, else compiled and written there."""
    if spec.startswith("openspiel:"):
        return _openspiel_game(spec[len("openspiel:"):].strip(), cache_dir)
    game = _builtin_game(spec)
    if cache_dir is not None:
        try:
            compile_game(game, cache_dir=cache_dir)  # kept per game object for what follows
        except GameError as exc:
            raise UsageError(f"game {spec!r}: {exc}") from None
    return game


def _builtin_game(spec: str) -> Game:
    match = re.fullmatch(r"\s*([A-Za-z_][A-Za-z0-9_]*)\s*(?:\((.*)\))?\s*", spec)
    if match is None:
        raise UsageError(f"malformed game {spec!r}: write NAME or NAME(key=value, ...)")
    name, arguments = match.group(1).lower(), match.group(2)
    if name not in BUILTIN_GAMES:
        raise UsageError(
            f"unknown game {name!r}: built-in games are {', '.join(BUILTIN_GAMES)} "
            "(or openspiel:NAME; see 'cfrkit games')"
        )
    cls, parameters, _ = BUILTIN_GAMES[name]
    kwargs = {}
    for item in filter(None, (a.strip() for a in (arguments or "").split(","))):
        key, sep, text = item.partition("=")
        key = key.strip()
        if not sep or key not in parameters:
            allowed = ", ".join(parameters) or "none"
            raise UsageError(f"game {name!r}: bad parameter {item!r} (parameters: {allowed})")
        if key in kwargs:
            raise UsageError(f"game {name!r}: {key} given twice")
        try:
            kwargs[key] = parameters[key](text.strip())
        except ValueError:
            kind = getattr(parameters[key], "description", parameters[key].__name__)
            raise UsageError(f"game {name!r}: {key} must be {kind}, got {text.strip()!r}") from None
    try:
        return cls(**kwargs)
    except (TypeError, ValueError) as exc:
        raise UsageError(f"game {spec!r}: {exc}") from None


def _compiled(spec: str, cache_dir: str | None):
    """The compiled game of a command-line name; a game that does not compile (too big for the
    memory, ...) is a :class:`UsageError`."""
    game = parse_game(spec, cache_dir=cache_dir)
    try:
        return compile_game(game)
    except GameError as exc:
        raise UsageError(f"game {spec!r}: {exc}") from None


def check_game(spec: str) -> None:
    """Raise :class:`UsageError` for a game name :func:`parse_game` would refuse, without
    walking the game: OpenSpiel games are loaded but not compiled (``cfrkit sweep`` checks its
    grid this way before its workers build the games)."""
    if spec.startswith("openspiel:"):
        _load_openspiel(spec[len("openspiel:"):].strip())  # spaces as around built-in names
    else:
        _builtin_game(spec)  # a built-in game is built cheaply; compile_game walks it later


def _openspiel_game(name: str, cache_dir: str | None = None) -> Game:
    loaded, parameters = _load_openspiel(name)  # first: without OpenSpiel, a UsageError saying so
    from .openspiel import _from_loaded
    from .tree import DEFAULT_MAX_NODES

    limits = {"max_nodes": DEFAULT_MAX_NODES, "max_memory": None, "cache_dir": cache_dir}
    try:
        # the walk runs with stderr open: a big game shows its compile progress there
        return _from_loaded(loaded, (name, parameters), limits)
    except (RuntimeError, ValueError, TypeError) as exc:
        raise UsageError(f"OpenSpiel game {name!r}: {first_line(exc)}") from None


def _load_openspiel(name: str):
    """``pyspiel.load_game(name)`` and the parameters parsed from ``name``, its errors as
    one-line :class:`UsageError`."""
    if not name.strip():
        raise UsageError("openspiel: needs a game name, e.g. openspiel:leduc_poker")
    try:
        import pyspiel  # noqa: F401 - the extra, needed next

        from .openspiel import _load_game
    except ImportError:
        raise UsageError("OpenSpiel games need the openspiel extra: pip install cfrkit[openspiel]") from None
    try:
        with _silenced_stderr():  # OpenSpiel's C++ prints its own copy of the error
            return _load_game(name)
    except ValueError as exc:
        raise UsageError(str(exc)) from None


@contextlib.contextmanager
def _silenced_stderr() -> Iterator[None]:
    """Point file descriptor 2 at /dev/null (C++ libraries write there, not to sys.stderr)."""
    sys.stderr.flush()
    saved = os.dup(2)
    try:
        with open(os.devnull, "w") as null:
            os.dup2(null.fileno(), 2)
        yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)


# -- argument types ----------------------------------------------------------------------------


def _int_at_least(text: str, least: int) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if value < least:
        raise argparse.ArgumentTypeError(f"expected a number >= {least}, got {text!r}")
    return value


def _non_negative_int(text: str) -> int:
    return _int_at_least(text, 0)


def _seed(text: str) -> int:
    # the sampled trainers refuse seeds outside [0, 2**64): say so here, in argparse's one line
    value = _non_negative_int(text)
    if value >= MAX_SEED:
        raise argparse.ArgumentTypeError(f"expected a whole number below 2**64, got {short_repr(text)}")
    return value


def _positive_int(text: str) -> int:
    return _int_at_least(text, 1)


def _split_top_level(text: str) -> list[str]:
    """``text`` split at the commas outside parentheses: ``kuhn(players=3,max_bets=2),leduc``
    is two games."""
    parts, depth, current = [], 0, []
    for char in text:
        depth += (char == "(") - (char == ")")
        if char == "," and depth == 0:
            parts.append("".join(current))
            current = []
        else:
            current.append(char)
    parts.append("".join(current))
    return [part.strip() for part in parts]


def _names(text: str) -> list[str]:
    names = _split_top_level(text)
    if not all(names):
        raise argparse.ArgumentTypeError(f"expected names separated by commas, got {text!r}")
    return names


def _param_value(text: str):
    # the words JSON and Python users write for bools and None, then numbers, else the text.
    # nan, inf and 1e400 are floats too, for the grid check to refuse them before any run
    lowered = text.lower()
    if lowered in ("true", "false"):
        return lowered == "true"
    if lowered in ("none", "null"):
        return None
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            continue
    return text


def _param(text: str) -> tuple[str, str, list]:
    trainer, colon, rest = text.partition(":")
    name, equals, values = rest.partition("=")
    if not (colon and equals and trainer.strip() and name.strip() and values.strip()):
        raise argparse.ArgumentTypeError(f"expected TRAINER:NAME=VALUE,VALUE,..., got {text!r}")
    return trainer.strip().lower(), name.strip(), [_param_value(v) for v in _names(values)]


def _seeds(text: str) -> list[int]:
    seeds: list[int] = []
    for part in text.split(","):
        match = re.fullmatch(r"\s*([0-9]+)\s*(?:-\s*([0-9]+)\s*)?", part)
        if match is None:  # "-1" included: a seed is never negative, and "-" makes a range
            raise argparse.ArgumentTypeError(f"expected seeds >= 0 or ranges like 0-4, "
                                             f"separated by commas, got {short_repr(text)}")
        low = _seed(match[1])
        high = _seed(match[2]) if match[2] else low
        if high < low:
            raise argparse.ArgumentTypeError(f"expected a range LOW-HIGH with LOW <= HIGH, got {part!r}")
        if high - low >= 1_000_000:
            raise argparse.ArgumentTypeError(f"range {part!r} has over a million seeds")
        seeds.extend(range(low, high + 1))
    return seeds


def _positive_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
    if not (math.isfinite(value) and value > 0):
        raise argparse.ArgumentTypeError(f"expected a positive number, got {text!r}")
    return value


class _Parser(argparse.ArgumentParser):
    """argparse, with every usage error on one line (and exit status 2)."""

    def error(self, message: str):  # noqa: D102 - argparse's hook
        raise UsageError(f"{self.prog}: {message}")  # "cfrkit solve: argument ..."


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="cfrkit", description="Counterfactual regret minimisation from the shell.")
    parser.add_argument("--version", action="version", version=f"cfrkit {__version__}")
    commands = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)

    commands.add_parser("games", help="list the built-in games and how to name OpenSpiel games")

    solve = commands.add_parser(
        "solve", help="train a trainer on a game; print the strategy, values and NashConv",
        description="Train, then print the average strategy, each player's value and NashConv "
        f"on stdout (progress on stderr). Without --iterations, --target or --time-limit, "
        f"runs {DEFAULT_ITERATIONS} iterations.",
    )
    solve.add_argument("game", help="kuhn, kuhn(players=3), leduc, rps, rpsls, openspiel:NAME(...)")
    solve.add_argument("--trainer", choices=sorted(TRAINERS), default=None,
                       help=f"the algorithm (default {DEFAULT_TRAINER}; with --resume, the saved one)")
    solve.add_argument("--iterations", type=_non_negative_int, help="iterations to run (more, with --resume)")
    solve.add_argument("--target", type=_positive_float, help="stop at this NashConv of the average policy")
    solve.add_argument("--time-limit", type=_positive_float, metavar="S", help="stop after S seconds")
    solve.add_argument("--seed", type=_seed, help="seed of a sampled trainer, 0 to 2**64 - 1")
    solve.add_argument("--checkpoint", metavar="FILE", help="save the trainer here at the end and on Ctrl-C")
    solve.add_argument("--resume", metavar="FILE", help="continue from a checkpoint")
    solve.add_argument("--policy-out", metavar="FILE", help="write the average policy as JSON")
    solve.add_argument("--json", metavar="FILE", help="write the results and the convergence history")
    solve.add_argument("--plot", metavar="FILE.png", help="draw the convergence (needs cfrkit[plot])")
    solve.add_argument("--quiet", action="store_true", help="no progress output on stderr")
    solve.add_argument("--threads", type=_positive_int, metavar="N", help="threads of the passes and of the evaluation (default: all "
                       "cores; full passes of games under 50,000 histories, and pruned ones, use one)")
    solve.add_argument("--streams", type=_positive_int, metavar="K", help="chance/external/outcome sampling: K independent random streams "
                       "per player and iteration, run on the threads (default 1)")
    solve.add_argument("--samples", type=_positive_int, metavar="B", help="chance/external/outcome sampling: passes per stream, player and "
                       "iteration (default 1)")
    solve.add_argument("--cache-dir", metavar="DIR", help="keep compiled games in this folder and load them from it next time "
                       "(see compile_game's cache_dir)")

    evaluate_ = commands.add_parser("evaluate", help="evaluate a policy file: values, NashConv")
    evaluate_.add_argument("game", help="the game the policy belongs to (as for solve)")
    evaluate_.add_argument("policy", help="a policy JSON file (from solve --policy-out or Policy.save)")
    evaluate_.add_argument("--threads", type=_positive_int, metavar="N",
                           help="threads of the evaluation (default: all cores)")
    evaluate_.add_argument("--cache-dir", metavar="DIR", help="keep compiled games in this folder and load them from it next time "
                       "(see compile_game's cache_dir)")

    sweep = commands.add_parser(
        "sweep", help="run games x trainers x parameters x seeds on Ray, into one table",
        description="Run every game x trainer x parameter x seed to the stopping rule, each run "
        "a Ray task (a local Ray instance, or the cluster at --address), and write every run's "
        "convergence record into one table, OUTPUT.csv and OUTPUT.parquet; runs the table "
        "already holds are skipped. Needs cfrkit[ray]. See docs/sweeps.md.",
    )
    sweep.add_argument("--games", action="extend", type=_names, required=True, metavar="LIST",
                       help="games, comma-separated, as for solve: kuhn,\"kuhn(players=3)\",leduc")
    sweep.add_argument("--trainers", action="extend", type=_names, required=True, metavar="LIST",
                       help=f"trainers, comma-separated ({', '.join(TRAINERS)})")
    sweep.add_argument("--param", action="append", type=_param, default=[], metavar="T:NAME=V,...",
                       help="values of a trainer's parameter, e.g. dcfr:alpha=1,1.5,2 (repeat for "
                       "more; the grid is their product); rule=vanilla,linear,... for pruned and "
                       "the sampled trainers")
    sweep.add_argument("--seeds", type=_seeds, default=[0], metavar="LIST",
                       help="seeds of the sampled trainers: 0-4, 1,5,9 or both (default 0); "
                       "deterministic trainers run once")
    sweep.add_argument("--target", type=_positive_float, help="stop each run at this NashConv")
    sweep.add_argument("--max-iterations", type=_non_negative_int, metavar="N",
                       help="stop each run after N iterations")
    sweep.add_argument("--time-limit", type=_positive_float, metavar="S",
                       help="stop each run after S seconds")
    sweep.add_argument("--output", required=True, metavar="PATH",
                       help="a directory (results.csv, results.parquet in it) or a file stem")
    sweep.add_argument("--address", metavar="ADDRESS",
                       help="use this Ray cluster (auto, HOST:PORT or ray://HOST:10001) instead "
                       "of a local instance")
    sweep.add_argument("--num-cpus", type=_positive_int, metavar="N",
                       help="CPUs of the local Ray instance (default: all)")
    sweep.add_argument("--plot", metavar="FILE.png", help="draw the convergence (needs cfrkit[plot])")
    sweep.add_argument("--quiet", action="store_true", help="no line per finished run on stderr")
    sweep.add_argument("--cache-dir", metavar="DIR",
                       help="compiled-game cache the workers share (on a cluster: a folder every "
                       "node sees); each game is walked once, by the first run that needs it")
    return parser


# -- commands -----------------------------------------------------------------------------------


def _games() -> int:
    print("Built-in games (NAME or NAME(key=value, ...)):")
    for name, (_, parameters, description) in BUILTIN_GAMES.items():
        shown = f"{name}({', '.join(f'{k}=<{t.__name__}>' for k, t in parameters.items())})" \
            if parameters else name
        if len(shown) > 24:  # the description starts on the next line, in its column
            print(f"  {shown}")
            shown = ""
        first, *more = description.split("\n")
        print(f"  {shown:<24} {first}")
        for line in more:
            print(f"  {'':<24} {line}")
    print()
    print("Any OpenSpiel game (needs cfrkit[openspiel]): openspiel:NAME or openspiel:NAME(params),")
    print("e.g. openspiel:leduc_poker, openspiel:liars_dice(numdice=1), openspiel:kuhn_poker(players=3).")
    print("Chance must be explicit and the game must give information-state strings; a")
    print("simultaneous-move game runs turn-based as openspiel:turn_based_simultaneous_game(game=NAME()).")
    print()
    print(f"Trainers (--trainer): {', '.join(TRAINERS)} (default {DEFAULT_TRAINER}).")
    return 0


def _check_output(path: str | None, option: str) -> None:
    """Raise :class:`UsageError` for an output file that cannot be written, before the work
    that would be lost writing it."""
    if path is None:
        return
    if os.path.isdir(path):
        raise UsageError(f"{option} {path}: is a directory, not a file")
    if not os.path.basename(path):
        raise UsageError(f"{option} {path!r}: needs a file name")
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        blocking = file_in_the_way(folder)
        if blocking is not None:
            raise UsageError(f"{option} {path}: {blocking} is a file, not a folder")
        raise UsageError(f"{option} {path}: folder {folder} does not exist")
    reason = cannot_write_in(folder)
    if reason is not None:
        raise UsageError(f"{option} {path}: cannot write in {folder} ({reason})")
    if os.path.exists(path):  # outputs are written aside and renamed over the path
        if not os.path.isfile(path):  # /dev/stdout on a pipe, a device
            raise UsageError(f"{option} {path}: not a regular file")
        stat = os.stat(path)
        for fd, stream in ((1, "standard output"), (2, "standard error")):
            try:
                other = os.fstat(fd)
            except OSError:  # closed
                continue
            if (stat.st_dev, stat.st_ino) == (other.st_dev, other.st_ino):  # /dev/stdout > file
                raise UsageError(f"{option} {path}: is where {stream} goes, which the report "
                                 "would overwrite")


def _check_plot(path: str) -> None:
    """:func:`_check_output`, and that matplotlib is installed and writes the file's format."""
    _check_output(path, "--plot")
    try:
        from . import plot  # noqa: F401 - fail before the work, not after
    except ImportError as exc:
        raise UsageError(f"--plot: {exc}") from None
    from matplotlib.backend_bases import FigureCanvasBase

    formats = FigureCanvasBase.get_supported_filetypes()
    extension = os.path.splitext(path)[1][1:].lower()  # none: matplotlib writes PNG
    if extension and extension not in formats:
        raise UsageError(f"--plot {path}: matplotlib cannot write .{extension} files "
                         f"(it writes {', '.join(sorted(formats))})")


def _write_output(option: str, path: str, write) -> bool:
    """``write(path)``, True if it worked; a failure is one line on stderr, so that the
    other outputs are still written."""
    try:
        write(path)
    except (OSError, ValueError) as exc:  # a full disk, a folder removed since the check
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        print(f"cfrkit: {option} {path}: not written: {reason}", file=sys.stderr)
        return False
    return True


def _solve(args) -> int:
    outputs = {"--checkpoint": args.checkpoint, "--policy-out": args.policy_out,
               "--json": args.json, "--plot": args.plot}
    named: dict[str, str] = {}
    for option, path in outputs.items():
        if path is None:
            continue
        same = named.setdefault(os.path.realpath(path), option)
        if same != option:  # the second write would replace the first, silently
            raise UsageError(f"{same} and {option} name the same file {path}")
        if option != "--plot":
            _check_output(path, option)
    if args.plot is not None:
        _check_plot(args.plot)
    compiled = _compiled(args.game, args.cache_dir)
    trainer = _trainer(args, compiled)
    if args.iterations is not None:
        try:  # a trainer runs at most 2**53 iterations in all (fewer under some rules)
            trainer._check_room(f"--iterations {short_repr(args.iterations)}", args.iterations)
        except ValueError as exc:
            raise UsageError(str(exc)) from None
    limits = dict(target_nash_conv=args.target, max_iterations=args.iterations,
                  time_limit=args.time_limit)
    if all(v is None for v in limits.values()):
        limits["max_iterations"] = DEFAULT_ITERATIONS
    # a bar only on a terminal: redirected to a file its redraws would be noise
    progress = not args.quiet and sys.stderr.isatty() and _have_tqdm()
    if not args.quiet:
        print(f"cfrkit: solving {compiled.game!r} ({compiled.num_nodes:,} nodes) with "
              f"{type(trainer).__name__} from iteration {trainer.iteration}", file=sys.stderr,
              flush=True)
    try:
        record = trainer.solve(progress=progress, **limits)
    except KeyboardInterrupt:
        written = ""
        if args.checkpoint is not None:
            try:
                if _write_output("--checkpoint", args.checkpoint, trainer.save):
                    written = f"; checkpoint written to {args.checkpoint}"
            except KeyboardInterrupt:  # a second Ctrl-C stops the saving
                # the write is atomic: the file is the old checkpoint or the new one, whole
                written = (f"; saving stopped by a second Ctrl-C: {args.checkpoint} holds the "
                           "last checkpoint written, if any")
        print(f"cfrkit: interrupted at iteration {trainer.iteration}{written}", file=sys.stderr)
        return EXIT_INTERRUPTED
    # the run's own wall time (training and checks); loading or compiling the kernels, which
    # solve() does before its clock starts, is not part of it
    seconds = float(record.seconds[-1])
    # the checkpoint first, the costly output: nothing after it (evaluating) may lose it
    written = args.checkpoint is None or _write_output("--checkpoint", args.checkpoint,
                                                       trainer.save)
    policy = trainer.average_policy()
    result = evaluate(compiled, policy, threads=args.threads)
    seed = getattr(trainer, "seed", None)  # a sampled trainer's: the run can be made again
    # the files before the report: a reader that stops early (| head) must not cost them
    if args.policy_out is not None:
        written &= _write_output("--policy-out", args.policy_out, policy.save)
    if args.json is not None:
        written &= _write_output("--json", args.json, lambda path: _write_json(path, {
            "game": args.game,
            "game_repr": repr(compiled.game),
            "trainer": type(trainer).__name__,
            "iterations": trainer.iteration,
            "seconds": seconds,
            "training_seconds": float(record.training_seconds[-1]),
            "nash_conv": result.nash_conv,
            "exploitability": result.exploitability,
            "values": [float(v) for v in result.values],
            "player_improvements": [float(v) for v in result.player_improvements],
            "stopped": record.stopped,
            "seed": seed,
            "history": record.to_dict(),
        }))
    if args.plot is not None:
        from . import plot

        written &= _write_output("--plot", args.plot,
                                 lambda path: _save_figure(plot.convergence(record), path))
    stopped = {"target": "target reached", "max_iterations": "iterations done",
               "time_limit": "time limit", "callback": "stopped"}.get(record.stopped, record.stopped)
    with _reader_may_leave():
        print(policy.format_table())
        print()
        print(f"{type(trainer).__name__} on {compiled.game!r}: {trainer.iteration} iterations "
              f"({stopped}) in {_duration(seconds)}" + ("" if seed is None else f", seed {seed}"))
        print(result)
    return 0 if written else EXIT_FAILED


@contextlib.contextmanager
def _reader_may_leave() -> Iterator[None]:
    """Printing to a reader that has stopped reading (``cfrkit solve ... | head``): the rest
    of the report goes nowhere, quietly, and the command ends as it would have. Standard output
    is pointed at /dev/null, so that Python's own flush at exit does not fail again."""
    try:
        yield
        sys.stdout.flush()
    except BrokenPipeError:
        _stdout_to_null()


def _stdout_to_null() -> None:
    null = os.open(os.devnull, os.O_WRONLY)
    os.dup2(null, sys.stdout.fileno())
    os.close(null)


def _duration(seconds: float) -> str:
    return f"{seconds * 1e3:.3g} ms" if seconds < 1 else f"{seconds:.2f} s"


def _trainer(args, compiled):
    if args.resume is not None:
        try:
            trainer = load_trainer(args.resume, compiled)
        except (CheckpointError, ValueError) as exc:
            raise UsageError(str(exc)) from None
        if not isinstance(trainer, Trainer):  # a ResultTableLearner's: no solve(), no rule
            raise UsageError(f"--resume {args.resume} holds a {type(trainer).__name__}; cfrkit "
                             "solve runs the CFR trainers (resume it in Python: load_trainer)")
        if args.threads is not None:
            try:
                trainer.threads = args.threads
            except ValueError as exc:  # more threads than numba has
                raise UsageError(f"--{exc}") from None  # the message starts with 'threads'
        if args.trainer is not None and not isinstance(trainer, TRAINERS[args.trainer]):
            raise UsageError(
                f"--resume {args.resume} holds a {type(trainer).__name__}, not --trainer {args.trainer}"
            )
        if args.seed is not None:
            raise UsageError("--seed does not apply with --resume: the checkpoint keeps the random stream")
        for flag in ("streams", "samples"):
            if getattr(args, flag) is not None:
                raise UsageError(f"--{flag} does not apply with --resume: the checkpoint keeps it")
        return trainer
    cls = TRAINERS[args.trainer or DEFAULT_TRAINER]
    sampled = cls in SAMPLED_TRAINERS
    if args.seed is not None and not sampled:
        raise UsageError(f"--seed applies to the sampled trainers only ({', '.join(SAMPLED_NAMES)})")
    options = {"threads": args.threads} if args.threads is not None else {}
    for flag in ("streams", "samples"):
        if getattr(args, flag) is not None:
            if not issubclass(cls, STREAM_TRAINERS):
                raise UsageError(f"--{flag} applies to {', '.join(SAMPLED_NAMES)}, "
                                 f"not {args.trainer or DEFAULT_TRAINER}")
            options[flag] = getattr(args, flag)
    if sampled:
        options["seed"] = args.seed
    try:
        return cls(compiled, **options)
    except ValueError as exc:  # more threads than numba has, too many streams
        raise UsageError(f"--{exc}") from None  # the message starts with the argument's name


def _evaluate(args) -> int:
    compiled = _compiled(args.game, args.cache_dir)
    try:
        policy = load_policy(args.policy, compiled)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    try:
        result = evaluate(compiled, policy, threads=args.threads)
    except ValueError as exc:  # more threads than numba has
        raise UsageError(f"--threads: {exc}") from None
    print(f"{os.path.basename(args.policy)} on {compiled.game!r}:")  # nothing before an error
    print(result)
    return 0


def _sweep(args) -> int:
    try:
        from .sweeps import sweep
        import pyarrow  # noqa: F401
        import ray  # noqa: F401
    except ImportError:
        raise UsageError("sweep needs Ray and pyarrow: pip install cfrkit[ray]") from None
    if args.plot is not None:
        _check_plot(args.plot)
    if args.target is None and args.max_iterations is None and args.time_limit is None:
        raise UsageError("sweep needs a stopping rule: --target, --max-iterations or --time-limit")
    params: dict[str, dict[str, list]] = {}
    for trainer, name, values in args.param:
        params.setdefault(trainer, {}).setdefault(name, []).extend(values)
    try:
        with _table_write_failures(args.output) as unwritten:
            table = sweep(
                args.games, args.trainers, params=params, seeds=args.seeds,
                target_nash_conv=args.target, max_iterations=args.max_iterations,
                time_limit=args.time_limit, output=args.output, address=args.address,
                num_cpus=args.num_cpus, progress=not args.quiet, cache_dir=args.cache_dir,
            )
    except ValueError as exc:  # a bad grid, found before anything ran
        raise UsageError(str(exc)) from None
    except ConnectionError as exc:  # no Ray cluster there
        where = (f"--address {args.address}" if args.address is not None
                 else f"RAY_ADDRESS={os.environ.get('RAY_ADDRESS', '')}")
        raise UsageError(f"{where}: {first_line(exc)}") from None
    from .sweeps import AT_THE_END

    # a table not written at the end was said on stderr as it happened; the rest still goes
    table_written = not (unwritten and unwritten[-1] == AT_THE_END)
    status = 0 if table_written else EXIT_FAILED
    if args.plot is not None:  # before the report, as solve's files
        from . import plot

        # drawn from the table in memory; a plot that fails (no successful run) sets the status
        if not _write_output("--plot", args.plot, lambda path: _save_figure(plot.sweep(table), path)):
            status = EXIT_FAILED
    csv, parquet = (os.path.abspath(p) for p in _sweep_files(args.output))
    with _reader_may_leave():
        print(_sweep_summary(table))
        if table_written:
            print(f"\ntable: {csv} and {parquet}")
    return status


@contextlib.contextmanager
def _table_write_failures(output: str) -> Iterator[list[str]]:
    """While a sweep runs: each write of its table that fails, a line on stderr as it comes
    (``cfrkit: --output ...: not written ...``), and its ``when`` in the list yielded; other
    warnings as usual."""
    from .sweeps import TableNotWrittenWarning

    failures: list[str] = []
    with warnings.catch_warnings():
        show = warnings.showwarning

        def report(message, category, filename, lineno, file=None, line=None):
            if not isinstance(message, TableNotWrittenWarning):
                return show(message, category, filename, lineno, file, line)
            failures.append(message.when)
            error = message.error
            reason = error.strerror if error.strerror else str(error)
            print(f"cfrkit: --output {output}: not written {message.when}: {reason}",
                  file=sys.stderr, flush=True)

        warnings.showwarning = report
        warnings.simplefilter("always", TableNotWrittenWarning)  # each one, not the first only
        yield failures


def _sweep_files(output: str) -> tuple[str, str]:
    from .sweeps import _output_paths

    return tuple(str(p) for p in _output_paths(output))


def _sweep_summary(table) -> str:
    """One line per game and trainer setting: runs, failures, and medians over the seeds."""
    from .sweeps import _setting_label

    groups: dict[tuple, list[dict]] = {}
    for row in table.filter(table["last"]).to_pylist():
        groups.setdefault((row["game"], row["trainer"], row["params"]), []).append(row)
    width = max([18] + [len(game) for game, _, _ in groups])  # the columns line up
    header = f"{'game':<{width}} {'trainer and parameters':<34} {'runs':>4} {'errors':>6} " \
             f"{'NashConv':>10} {'iterations':>10} {'seconds':>8}"
    lines = [header, "-" * len(header)]
    for (game, trainer, params), rows in groups.items():
        ok = [r for r in rows if r["status"] == "ok"]
        if ok:
            medians = (f"{np.median([r['final_nash_conv'] for r in ok]):>10.3g} "
                       f"{np.median([r['final_iteration'] for r in ok]):>10.0f} "
                       f"{np.median([r['final_seconds'] for r in ok]):>8.3g}")
        else:
            medians = f"{'-':>10} {'-':>10} {'-':>8}"
        lines.append(f"{game:<{width}} {_setting_label(trainer, params):<34} {len(rows):>4} "
                     f"{len(rows) - len(ok):>6} {medians}")
        for row in rows:
            if row["status"] != "ok":
                lines.append(f"    error: {row['error']}")
                break  # one message per group: the seeds usually fail alike
    lines.append("(medians over the seeds of the runs that finished)")
    return "\n".join(lines)


def _have_tqdm() -> bool:
    try:
        import tqdm  # noqa: F401
    except ImportError:
        print("cfrkit: no progress bar without tqdm (pip install cfrkit[progress])", file=sys.stderr)
        return False
    return True


def _write_json(path: str, content: dict) -> None:
    def plain(value):
        if isinstance(value, np.generic):
            return value.item()
        raise TypeError(f"not JSON: {value!r}")

    text = json.dumps(content, indent=1, default=plain) + "\n"
    with replacing(path) as temporary, open(temporary, "w") as stream:
        stream.write(text)


def _save_figure(figure, path: str) -> None:
    """``figure`` to ``path`` in the format its extension names (PNG without one), through a
    temporary file like every other output, and closed."""
    import matplotlib
    import matplotlib.pyplot as plt

    extension = os.path.splitext(path)[1][1:].lower()
    try:
        with replacing(path) as temporary:  # named .tmp: the format must be given
            figure.savefig(temporary, format=extension or matplotlib.rcParams["savefig.format"])
    finally:
        plt.close(figure)


@contextlib.contextmanager
def _quiet(quiet: bool) -> Iterator[None]:
    """``--quiet``: ``CFRKIT_QUIET=1`` for the command (no compile notices or walk progress
    either; a sweep's workers inherit it), then as it was, for a ``main()`` called from Python."""
    before = os.environ.get("CFRKIT_QUIET")
    if quiet:
        os.environ["CFRKIT_QUIET"] = "1"
    try:
        yield
    finally:
        if before is None:
            os.environ.pop("CFRKIT_QUIET", None)
        else:
            os.environ["CFRKIT_QUIET"] = before


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; return the exit status (0; 1 if an output could not be written
    after the work; 2 for bad usage; 130 on Ctrl-C)."""
    try:
        args = build_parser().parse_args(argv)
        command = {"games": lambda a: _games(), "solve": _solve, "evaluate": _evaluate,
                   "sweep": _sweep}[args.command]
        cache_dir = getattr(args, "cache_dir", None)
        if cache_dir is not None:  # before any work, whichever command takes it
            if not cache_dir:
                raise UsageError("--cache-dir: an empty name (use . for the current folder)")
            blocking = file_in_the_way(cache_dir)
            if blocking is not None:
                raise UsageError(f"--cache-dir {cache_dir}: {blocking} is a file, not a folder")
        with _quiet(getattr(args, "quiet", False)):
            return command(args)
    except BrokenPipeError:  # the reader left before a short report ended (games, evaluate)
        _stdout_to_null()
        return 0
    except UsageError as exc:
        message = str(exc)
        print(message if message.startswith("cfrkit") else f"cfrkit: {message}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        print("cfrkit: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED


if __name__ == "__main__":  # pragma: no cover - python -m cfrkit.cli
    sys.exit(main())
