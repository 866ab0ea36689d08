"""The ``cfrkit`` command line (also ``python -m cfrkit``).

::

    cfrkit games                              the built-in games and how to name OpenSpiel's
    cfrkit solve GAME [options]               train, then print the strategy, values, NashConv
    cfrkit evaluate GAME POLICY.json          values, NashConv and each player's improvement

Bad usage prints one line on stderr and exits with status 2; Ctrl-C exits with status 130,
after writing the checkpoint if ``--checkpoint`` was given.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import os
import re
import sys
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
from ._text import short_repr
from .trainers.base import MAX_SEED
from .tree import compile_game

__all__ = ["main"]

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
SAMPLED_NAMES = [name for name, cls in TRAINERS.items() if cls in SAMPLED_TRAINERS]
DEFAULT_TRAINER = "dcfr+"  # the fastest to a target on the poker games measured (docs/trainers.md)


class UsageError(Exception):
    """Bad input from the command line: printed as one line, exit status 2."""


# -- games ---------------------------------------------------------------------------------------


def parse_game(spec: str) -> Game:
    """A game from its command-line name: ``kuhn``, ``kuhn(players=3)``,
    ``kuhn(max_bets=2, deal=independent)`` (a word bare or quoted), ``leduc``, ..., or
    ``openspiel:NAME(params)`` for any OpenSpiel game."""
    if spec.startswith("openspiel:"):
        return _openspiel_game(spec[len("openspiel:"):])
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
        try:
            kwargs[key] = parameters[key](text.strip())
        except ValueError:
            kind = getattr(parameters[key], "description", parameters[key].__name__)
            raise UsageError(f"game {name!r}: {key} must be {kind}, got {text.strip()!r}") from None
    try:
        return cls(**kwargs)
    except (TypeError, ValueError) as exc:
        raise UsageError(f"game {spec!r}: {exc}") from None


def _openspiel_game(name: str) -> Game:
    if not name.strip():
        raise UsageError("openspiel: needs a game name, e.g. openspiel:leduc_poker")
    try:
        import pyspiel

        from .openspiel import from_openspiel
    except ImportError:
        raise UsageError("OpenSpiel games need the openspiel extra: pip install cfrkit[openspiel]") from None
    try:
        with _silenced_stderr():  # OpenSpiel's C++ prints its own copy of the error
            loaded = pyspiel.load_game(name)
        # the walk runs with stderr open: a big game shows its compile progress there
        return from_openspiel(loaded)
    except (RuntimeError, ValueError, TypeError) as exc:
        # the first sentence says what is wrong (an unknown name lists every game after it)
        message = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        message = message.split(" Available games")[0]
        raise UsageError(f"OpenSpiel game {name!r}: {message}") from None


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


def _non_negative_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"expected a number >= 0, got {text!r}")
    return value


def _seed(text: str) -> int:
    # the sampled trainers refuse seeds outside [0, 2**64): say so here, in argparse's one line
    value = _non_negative_int(text)
    if value >= MAX_SEED:
        raise argparse.ArgumentTypeError(f"expected a whole number below 2**64, got {short_repr(text)}")
    return value


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

    evaluate_ = commands.add_parser("evaluate", help="evaluate a policy file: values, NashConv")
    evaluate_.add_argument("game", help="the game the policy belongs to (as for solve)")
    evaluate_.add_argument("policy", help="a policy JSON file (from solve --policy-out or Policy.save)")
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
    print("Simultaneous-move games must be made turn-based first; chance must be explicit.")
    print()
    print(f"Trainers (--trainer): {', '.join(TRAINERS)} (default {DEFAULT_TRAINER}).")
    return 0


def _check_output(path: str | None, option: str) -> None:
    if path is not None:
        folder = os.path.dirname(os.path.abspath(path))
        if not os.path.isdir(folder):
            raise UsageError(f"{option} {path}: folder {folder} does not exist")


def _solve(args) -> int:
    for path, option in ((args.checkpoint, "--checkpoint"), (args.policy_out, "--policy-out"),
                         (args.json, "--json"), (args.plot, "--plot")):
        _check_output(path, option)
    if args.plot is not None:
        try:
            from . import plot  # noqa: F401 - fail before training, not after
        except ImportError as exc:
            raise UsageError(f"--plot: {exc}") from None
    if args.quiet:
        os.environ["CFRKIT_QUIET"] = "1"  # no compile notices either
    game = parse_game(args.game)
    try:
        compiled = compile_game(game)
    except GameError as exc:
        raise UsageError(f"game {args.game!r}: {exc}") from None
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
        with contextlib.suppress(KeyboardInterrupt):
            if args.checkpoint is not None:
                trainer.save(args.checkpoint)
                print(f"cfrkit: interrupted at iteration {trainer.iteration}; checkpoint written "
                      f"to {args.checkpoint}", file=sys.stderr)
            else:
                print(f"cfrkit: interrupted at iteration {trainer.iteration}", file=sys.stderr)
        return EXIT_INTERRUPTED
    # the run's own wall time (training and checks); loading or compiling the kernels, which
    # solve() does before its clock starts, is not part of it
    seconds = float(record.seconds[-1])
    if args.checkpoint is not None:
        trainer.save(args.checkpoint)
    policy = trainer.average_policy()
    result = evaluate(compiled, policy)
    print(policy.format_table())
    print()
    stopped = {"target": "target reached", "max_iterations": "iterations done",
               "time_limit": "time limit", "callback": "stopped"}.get(record.stopped, record.stopped)
    print(f"{type(trainer).__name__} on {compiled.game!r}: {trainer.iteration} iterations "
          f"({stopped}) in {_duration(seconds)}")
    print(result)
    if args.policy_out is not None:
        policy.save(args.policy_out)
    if args.json is not None:
        _write_json(args.json, {
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
            "history": record.to_dict(),
        })
    if args.plot is not None:
        from . import plot

        plot.convergence(record).savefig(args.plot)
    return 0


def _duration(seconds: float) -> str:
    return f"{seconds * 1e3:.3g} ms" if seconds < 1 else f"{seconds:.2f} s"


def _trainer(args, compiled):
    if args.resume is not None:
        try:
            trainer = load_trainer(args.resume, compiled)
        except CheckpointError as exc:
            raise UsageError(str(exc)) from None
        if args.trainer is not None and not isinstance(trainer, TRAINERS[args.trainer]):
            raise UsageError(
                f"--resume {args.resume} holds a {type(trainer).__name__}, not --trainer {args.trainer}"
            )
        if args.seed is not None:
            raise UsageError("--seed does not apply with --resume: the checkpoint keeps the random stream")
        return trainer
    cls = TRAINERS[args.trainer or DEFAULT_TRAINER]
    sampled = cls in SAMPLED_TRAINERS
    if args.seed is not None and not sampled:
        raise UsageError(f"--seed applies to the sampled trainers only ({', '.join(SAMPLED_NAMES)})")
    return cls(compiled, seed=args.seed) if sampled else cls(compiled)


def _evaluate(args) -> int:
    compiled = compile_game(parse_game(args.game))
    try:
        policy = load_policy(args.policy, compiled)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    print(f"{os.path.basename(args.policy)} on {compiled.game!r}:")
    print(evaluate(compiled, policy))
    return 0


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

    with open(path, "w") as stream:
        json.dump(content, stream, indent=1, default=plain)
        stream.write("\n")


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; return the exit status (0, 2 for bad usage, 130 on Ctrl-C)."""
    try:
        args = build_parser().parse_args(argv)
        command = {"games": lambda a: _games(), "solve": _solve, "evaluate": _evaluate}[args.command]
        return command(args)
    except UsageError as exc:
        message = str(exc)
        print(message if message.startswith("cfrkit") else f"cfrkit: {message}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        print("cfrkit: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED


if __name__ == "__main__":  # pragma: no cover - python -m cfrkit.cli
    sys.exit(main())
