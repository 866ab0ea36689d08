"""The solvers the benchmarks compare, behind one small interface, and their shared helpers.

Used by ``compare.py`` and ``time_to_epsilon.py`` (run those; this module prints nothing):

- :class:`CfrkitSolver` drives any cfrkit trainer (``iterate(n)`` is one kernel call);
- :class:`OpenSpielSolver` drives OpenSpiel's C++ ``pyspiel.CFRSolver`` / ``CFRPlusSolver``;
- :class:`LiteEFGSolver` drives a ``LiteEFG.baselines`` graph with the loop of
  ``LiteEFG.baselines.utils.train`` and measures it with LiteEFG's own ``exploitability``.

Every solver reports **NashConv** (the sum over players of what a best response gains), so the
benchmarks can halve it into exploitability for two-player zero-sum games themselves:

- cfrkit and OpenSpiel: cfrkit's exact evaluator (OpenSpiel's average policy is read back with
  ``cfrkit.openspiel.from_openspiel_policy``; the two evaluators agree to 1e-9).
- LiteEFG: ``env.exploitability(strategy, average)`` returns one best-response gain per player
  (uniform Kuhn: [0.375, 0.5417]), so its sum is NashConv (0.9167); :func:`liteefg_convention`
  checks this against cfrkit's evaluator on the policy LiteEFG exports.

LiteEFG's baselines, trained as their own ``__main__`` blocks train them (LiteEFG 1.0.0):

- CFR: simultaneous updates of every player; evaluated on "avg-iterate" (uniform average).
- CFR+: alternating updates of players 1 and 2 only; "linear-avg-iterate" (weight t).
- DCFR (alpha=1.5, beta=0, gamma=2): alternating, players 1 and 2 only; the graph keeps its own
  t^gamma-weighted average node, evaluated as "last-iterate".
- PCFR+: alternating, players 1 and 2 only, predicting the last instantaneous regret;
  "linear-avg-iterate" (weight t).

LiteEFG's "avg-iterate" / "linear-avg-iterate" average the sequence-form strategies recorded by
``env.update_strategy`` *after* each update, so iteration t records sigma^(t+1) with weight t
(cfrkit and OpenSpiel average the sigma^t played at t); DCFR's internal average adds sigma^t
weighted by the player's own reach, as Brown & Sandholm do.
"""

from __future__ import annotations

import contextlib
import importlib.metadata
import inspect
import io
import os
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np

import cfrkit
from cfrkit import games as cfrkit_games

try:
    import pyspiel
except ImportError:  # OpenSpiel is optional
    pyspiel = None

try:
    with contextlib.redirect_stdout(io.StringIO()):
        import LiteEFG as leg
        from LiteEFG.baselines import CFR as _leg_cfr
        from LiteEFG.baselines import DCFR as _leg_dcfr
        from LiteEFG.baselines import PCFR as _leg_pcfr
        from LiteEFG.baselines import CFRplus as _leg_cfr_plus
except Exception:  # LiteEFG is optional (and pulls jax); any import failure skips it
    leg = None

#: cfrkit trainers, by the names the package exports; absent ones are skipped with a log line.
TRAINER_NAMES = (
    "VanillaCFR",
    "PrunedCFR",
    "ChanceSampledCFR",
    "CFRPlus",
    "LinearCFR",
    "DiscountedCFR",
    "PredictiveCFRPlus",
    "DCFRPlus",
    "PDCFRPlus",
)

Log = Callable[[str], None]


# -- games -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class GameSpec:
    """A benchmark game: its OpenSpiel name and, if cfrkit has one, a native factory."""

    key: str
    label: str
    openspiel_name: str
    native: Callable[[], cfrkit.Game] | None


GAMES: dict[str, GameSpec] = {
    "kuhn2": GameSpec("kuhn2", "Kuhn 2p", "kuhn_poker", lambda: cfrkit_games.KuhnPoker()),
    "kuhn3": GameSpec(
        "kuhn3", "Kuhn 3p", "kuhn_poker(players=3)", lambda: cfrkit_games.KuhnPoker(players=3)
    ),
    "leduc": GameSpec("leduc", "Leduc", "leduc_poker", lambda: cfrkit_games.LeducPoker()),
    "liars_dice": GameSpec("liars_dice", "Liar's dice", "liars_dice", None),
}


@dataclass(frozen=True)
class LoadedGame:
    """A compiled benchmark game and how it was obtained."""

    spec: GameSpec
    compiled: cfrkit.CompiledGame
    source: str
    compile_seconds: float

    def describe(self) -> str:
        c = self.compiled
        return (
            f"{self.spec.label}: {self.source}, {c.num_nodes:,} nodes, {c.num_infosets:,} "
            f"infosets, {c.num_players} players; cfrkit compile {self.compile_seconds:.2f} s"
        )


def load_game(spec: GameSpec, log: Log) -> LoadedGame | None:
    """Compile the game every solver shares: OpenSpiel's tree if installed, else the native one."""
    start = time.perf_counter()
    if pyspiel is not None:
        from cfrkit.openspiel import from_openspiel

        compiled = cfrkit.compile_game(from_openspiel(spec.openspiel_name))
        source = f"from_openspiel({spec.openspiel_name!r})"
    elif spec.native is not None:
        compiled = cfrkit.compile_game(spec.native())
        source = "native"
    else:
        log(f"{spec.label}: needs OpenSpiel, skipped")
        return None
    return LoadedGame(spec, compiled, source, time.perf_counter() - start)


# -- solvers behind one interface ------------------------------------------------------------


class Solver:
    """``step(n)`` runs n iterations; ``nash_conv()`` measures the solver's output policy."""

    name: str
    family: str  # "cfrkit", "OpenSpiel" or "LiteEFG"

    def step(self, n: int) -> None:
        raise NotImplementedError

    def nash_conv(self) -> float:
        raise NotImplementedError

    def batch(self) -> int:
        """A reasonable number of iterations per step() call (1 for per-iteration APIs)."""
        return 1


class CfrkitSolver(Solver):
    """A cfrkit trainer (seed=0 where it takes one); NashConv by cfrkit's exact evaluator."""

    family = "cfrkit"

    def __init__(self, cls: type, compiled: cfrkit.CompiledGame) -> None:
        kwargs = {"seed": 0} if "seed" in inspect.signature(cls).parameters else {}
        self.name = f"cfrkit {cls.__name__}"
        self.compiled = compiled
        self.trainer = cls(compiled, **kwargs)

    def step(self, n: int) -> None:
        self.trainer.iterate(n)

    def nash_conv(self) -> float:
        return cfrkit.nash_conv(self.compiled, self.trainer.average_policy())

    def batch(self) -> int:
        return 1 << 30  # one kernel call runs any number of iterations

    def touched_per_iteration(self) -> float:
        """Node-visits the trainer made per iteration so far (nan if it does not count them)."""
        iterations = getattr(self.trainer, "iteration", 0)
        touched = getattr(self.trainer, "nodes_touched", None)
        if not iterations or touched is None:
            return float("nan")
        return touched / iterations


class OpenSpielSolver(Solver):
    """OpenSpiel's C++ solver; its average policy is measured by cfrkit's exact evaluator."""

    family = "OpenSpiel"

    def __init__(self, cls: type, compiled: cfrkit.CompiledGame) -> None:
        from cfrkit.openspiel import from_openspiel_policy

        self.name = f"OpenSpiel {cls.__name__} (C++)"
        self.compiled = compiled
        self.solver = cls(compiled.game.openspiel_game)
        self._convert = from_openspiel_policy

    def step(self, n: int) -> None:
        update = self.solver.evaluate_and_update_policy
        for _ in range(n):
            update()

    def policy(self) -> cfrkit.Policy:
        """OpenSpiel's average policy, read back into a cfrkit Policy."""
        return self._convert(self.compiled, self.solver.tabular_average_policy())

    def nash_conv(self) -> float:
        return cfrkit.nash_conv(self.compiled, self.policy())


@dataclass(frozen=True)
class LiteEFGBaseline:
    """How a ``LiteEFG.baselines`` module is trained and evaluated (its ``__main__`` block)."""

    label: str
    module: Any  # the LiteEFG.baselines module; its ``graph`` class is the algorithm
    average: str  # type_name given to env.exploitability / env.get_strategy
    strategy_type: str | None = None  # argument of graph.current_strategy(), if any
    all_players: bool = False  # False: update_graph updates players 1 and 2 only


def liteefg_baselines() -> tuple[LiteEFGBaseline, ...]:
    """LiteEFG's CFR-family baselines (empty if LiteEFG is not installed)."""
    if leg is None:
        return ()
    return (
        LiteEFGBaseline("CFR", _leg_cfr, "avg-iterate", all_players=True),
        LiteEFGBaseline("CFR+", _leg_cfr_plus, "linear-avg-iterate"),
        LiteEFGBaseline("DCFR", _leg_dcfr, "last-iterate", strategy_type="average-iterate"),
        LiteEFGBaseline("PCFR+", _leg_pcfr, "linear-avg-iterate"),
    )


class LiteEFGSolver(Solver):
    """A LiteEFG baseline on the OpenSpiel game, trained by the loop of its ``utils.train``."""

    family = "LiteEFG"

    def __init__(self, baseline: LiteEFGBaseline, compiled: cfrkit.CompiledGame) -> None:
        self.name = f"LiteEFG {baseline.label}"
        self.compiled = compiled
        self.baseline = baseline
        with contextlib.redirect_stdout(io.StringIO()):  # LiteEFG prints banners
            self.env = leg.OpenSpielEnv(compiled.game.openspiel_game, traverse_type="Enumerate")
            self.graph = baseline.module.graph()
            self.env.set_graph(self.graph)
        if baseline.strategy_type is None:
            self.strategy = self.graph.current_strategy()
        else:
            self.strategy = self.graph.current_strategy(baseline.strategy_type)

    def step(self, n: int) -> None:
        graph, env, strategy = self.graph, self.env, self.strategy
        for _ in range(n):  # the loop of LiteEFG.baselines.utils.train
            graph.update_graph(env)
            env.update_strategy(strategy, update_best=False)

    def nash_conv(self) -> float:
        # one best-response gain per player: the sum is NashConv
        return float(sum(self.env.exploitability(self.strategy, self.baseline.average)))

    def policy(self) -> cfrkit.Policy:
        """The evaluated strategy, exported through OpenSpiel's TabularPolicy."""
        from cfrkit.openspiel import from_openspiel_policy

        tabular, _ = self.env.get_strategy(self.strategy, self.baseline.average)
        return from_openspiel_policy(self.compiled, tabular)


def liteefg_convention(compiled: cfrkit.CompiledGame, iterations: int = 20) -> tuple[float, float]:
    """(LiteEFG's NashConv, cfrkit's NashConv of the policy LiteEFG exports) after a short run.

    The two agree when LiteEFG's per-player ``exploitability`` sums to NashConv.
    """
    label = "CFR+" if compiled.num_players == 2 else "CFR"
    baseline = next(b for b in liteefg_baselines() if b.label == label)
    solver = LiteEFGSolver(baseline, compiled)
    solver.step(iterations)
    return solver.nash_conv(), cfrkit.nash_conv(compiled, solver.policy())


# -- which solvers run -----------------------------------------------------------------------


class Entry(NamedTuple):
    """A solver that runs on a game: its name, family and a factory of fresh instances."""

    name: str
    family: str
    make: Callable[[], Solver]


def cfrkit_trainer_classes(log: Log, names: Iterable[str] = TRAINER_NAMES) -> list[type]:
    """The cfrkit trainers this cfrkit exports, logging the absent ones."""
    found = []
    for name in names:
        cls = getattr(cfrkit, name, None)
        if cls is None:
            log(f"  cfrkit {name}: not exported by this cfrkit, skipped")
        else:
            found.append(cls)
    return found


def solver_entries(
    compiled: cfrkit.CompiledGame,
    peers: Iterable[str],
    log: Log,
    trainers: Iterable[str] = TRAINER_NAMES,
) -> list[Entry]:
    """Every solver that runs on ``compiled``: cfrkit's trainers, then the ``peers`` named
    (``"openspiel"``, ``"liteefg"``), logging what is skipped and why."""
    peers = {p.lower() for p in peers}
    entries = [
        Entry(f"cfrkit {cls.__name__}", "cfrkit", lambda cls=cls: CfrkitSolver(cls, compiled))
        for cls in cfrkit_trainer_classes(log, trainers)
    ]
    if pyspiel is None:
        log("  OpenSpiel: not installed (pip install open_spiel), skipped")
        return entries
    if "openspiel" in peers:
        for cls in (pyspiel.CFRSolver, pyspiel.CFRPlusSolver):
            entries.append(
                Entry(f"OpenSpiel {cls.__name__} (C++)", "OpenSpiel",
                      lambda cls=cls: OpenSpielSolver(cls, compiled))
            )
    if leg is None:
        log("  LiteEFG: not installed (pip install liteefg), skipped")
    elif "liteefg" in peers:
        for baseline in liteefg_baselines():
            if compiled.num_players != 2 and not baseline.all_players:
                log(f"  LiteEFG {baseline.label}: its graph updates players 1 and 2 only, "
                    "skipped")
                continue
            entries.append(
                Entry(f"LiteEFG {baseline.label}", "LiteEFG",
                      lambda baseline=baseline: LiteEFGSolver(baseline, compiled))
            )
    return entries


# -- measuring and reporting -------------------------------------------------------------------------------


def _version(distribution: str) -> str:
    try:
        return importlib.metadata.version(distribution)
    except importlib.metadata.PackageNotFoundError:
        return "?"


def versions_line() -> str:
    """cfrkit, numpy, numba, OpenSpiel and LiteEFG versions, LiteEFG's threads, the cores."""
    import numba

    parts = [f"cfrkit {cfrkit.__version__}", f"numpy {np.__version__}",
             f"numba {numba.__version__}"]
    parts.append("OpenSpiel not installed" if pyspiel is None
                 else f"OpenSpiel {_version('open_spiel')}")
    if leg is None:
        parts.append("LiteEFG not installed")
    else:
        threads = leg.get_threads()
        parts.append(f"LiteEFG {_version('liteefg')} ({threads} thread{'s' * (threads != 1)})")
    cores = os.cpu_count()
    usable = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else cores
    parts.append(f"{cores} cores" + (f" ({usable} usable)" if usable != cores else ""))
    return ", ".join(parts)


def checkpoints(growth: float) -> Iterator[int]:
    """Iteration counts at which to evaluate: every iteration while that is within ``growth``,
    then counts ``growth`` apart (1.05: every iteration up to 20, then ~5% apart)."""
    value = 1
    while True:
        yield value
        value = max(value + 1, int(value * growth))


def fmt_rate(x: float) -> str:
    return f"{x:,.0f}" if x >= 100 else f"{x:,.1f}"


def fmt_time(seconds: float) -> str:
    if seconds < 1e-3:
        return f"{seconds * 1e6:.0f} µs"
    if seconds < 1:
        return f"{seconds * 1e3:.1f} ms"
    return f"{seconds:.2f} s"


def print_table(header: list[str], rows: list[list[str]], out: Log) -> None:
    """A markdown table; the first column left-aligned, the others right-aligned."""
    out("| " + " | ".join(header) + " |")
    out("| " + " | ".join("---" if i == 0 else "---:" for i in range(len(header))) + " |")
    for row in rows:
        out("| " + " | ".join(row) + " |")
