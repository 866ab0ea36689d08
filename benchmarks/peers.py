"""The solvers the benchmarks compare, behind one small interface, and their shared helpers.

Used by ``compare.py`` and ``time_to_epsilon.py`` (run those; this module prints nothing):

- :class:`CfrkitSolver` drives any cfrkit trainer (``iterate(n)`` is one kernel call);
- :class:`OpenSpielSolver` drives OpenSpiel's C++ ``pyspiel.CFRSolver`` / ``CFRPlusSolver``;
- :class:`OpenSpielMCCFRSolver` drives OpenSpiel's C++ ``ExternalSamplingMCCFRSolver`` (simple
  averaging) and ``OutcomeSamplingMCCFRSolver`` (exploration 0.6), seeded, and reads their
  average policies exactly with :class:`OpenSpielPolicyReader`;
- :class:`LiteEFGSolver` drives a ``LiteEFG.baselines`` graph with the loop of
  ``LiteEFG.baselines.utils.train`` and measures it with LiteEFG's own ``exploitability``.

Every solver reports **NashConv** (the sum over players of what a best response gains), so the
benchmarks can halve it into exploitability for two-player zero-sum games themselves:

- cfrkit and OpenSpiel: cfrkit's exact evaluator (OpenSpiel's average policy is read back with
  ``cfrkit.openspiel.from_openspiel_policy``; the two evaluators agree to 1e-9).
- OpenSpiel's MCCFR solvers return a C++ ``CFRAveragePolicy``, not a tabular policy: it falls
  back to a uniform policy at information states the solver never reached, and that fallback
  answers for states only, so ``pyspiel.nash_conv`` on it fails wherever one is left (Leduc:
  "GetStatePolicy(const std::string&) unimplemented"). :class:`OpenSpielPolicyReader` walks the
  OpenSpiel game once, keeps one state per information state of the compiled game, and asks
  the policy ``get_state_policy_as_parallel_vectors(state)`` for each; the table it builds is
  evaluated by cfrkit (on Kuhn it matches ``pyspiel.nash_conv`` of the same policy to 1e-12:
  :func:`check_reader`).
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
#: cfrkit's Monte Carlo trainers (seeded; seed=0 in the adapters). Not in TRAINER_NAMES, so
#: compare.py and plot_convergence.py keep their rows; time_to_epsilon.py adds them.
SAMPLED_TRAINER_NAMES = ("ExternalSamplingCFR", "OutcomeSamplingCFR")

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
    """A cfrkit trainer (seed=0 where it takes one, unless ``options`` give another);
    NashConv by cfrkit's exact evaluator. ``options`` are more constructor arguments (e.g. a
    ``rule``), ``name`` replaces the default ``cfrkit <class name>``."""

    family = "cfrkit"

    def __init__(
        self, cls: type, compiled: cfrkit.CompiledGame, name: str | None = None, **options: Any
    ) -> None:
        kwargs = {"seed": 0} if "seed" in inspect.signature(cls).parameters else {}
        kwargs.update(options)
        self.name = name or f"cfrkit {cls.__name__}"
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


class OpenSpielPolicyReader:
    """Reads any OpenSpiel policy (one that answers for states) into a cfrkit Policy exactly.

    Construction walks the OpenSpiel game once (about 7 microseconds per history, as
    ``from_openspiel``) and keeps, for every information state of ``compiled``, one OpenSpiel
    state in it. :meth:`read` then asks the policy for each of them -- one C++ call per
    information state (Leduc 936, liar's dice 24,576) -- and fills cfrkit's table. Policies of
    perfect-recall games are functions of the information state, so any state of it will do.
    """

    def __init__(self, compiled: cfrkit.CompiledGame) -> None:
        game = compiled.game
        index = compiled.key_index
        states: list[Any] = [None] * compiled.num_infosets
        missing = compiled.num_infosets
        stack = [game.openspiel_game.new_initial_state()]
        while stack and missing:
            state = stack.pop()
            if state.is_terminal():
                continue
            if not state.is_chance_node():
                player = state.current_player()
                text = state.information_state_string(player)
                key = f"p{player}|{text}" if game.keys_per_player else text
                i = index.get(key)
                if i is not None and states[i] is None:
                    states[i] = state
                    missing -= 1
            stack.extend(state.child(a) for a in state.legal_actions())
        if missing:
            raise ValueError(f"{missing} information states of {game!r} not found in OpenSpiel")
        self.compiled = compiled
        self.states = states
        first = compiled.tree.infoset_first_slot
        self._slices = [slice(int(first[i]), int(first[i]) + len(actions))
                        for i, actions in enumerate(compiled.infoset_actions)]
        self._actions = [list(actions) for actions in compiled.infoset_actions]

    def read(self, policy: Any) -> cfrkit.Policy:
        """``policy`` (e.g. ``pyspiel.ExternalSamplingMCCFRSolver.average_policy()``) as a cfrkit
        Policy of the compiled game; raises ValueError if it names an action the game does
        not have at some information state."""
        table = np.zeros(self.compiled.tree.num_action_slots)
        ask = policy.get_state_policy_as_parallel_vectors
        for state, where, actions in zip(self.states, self._slices, self._actions):
            theirs, probabilities = ask(state)
            if theirs == actions:  # OpenSpiel lists legal actions in the same order
                table[where] = probabilities
            else:
                row = dict(zip(theirs, probabilities))
                if set(row) - set(actions):
                    raise ValueError(f"policy has actions {sorted(set(row) - set(actions))} "
                                     f"that the game does not at {state}")
                table[where] = [row.get(a, 0.0) for a in actions]
        return cfrkit.Policy(self.compiled, table, normalise=True)


#: OpenSpiel's sampled solvers: kind -> pyspiel class name
OPENSPIEL_MCCFR = {"ES": "ExternalSamplingMCCFRSolver", "OS": "OutcomeSamplingMCCFRSolver"}


class OpenSpielMCCFRSolver(Solver):
    """OpenSpiel's C++ external- (``kind="ES"``, simple averaging, OpenSpiel's default) or
    outcome-sampling (``kind="OS"``, exploration 0.6, OpenSpiel's default) MCCFR solver,
    seeded; ``step(n)`` calls ``run_iteration()`` n times (one iteration = one pass per
    player, as cfrkit's). Its average policy is read by :class:`OpenSpielPolicyReader` and
    measured by cfrkit's exact evaluator."""

    family = "OpenSpiel"

    def __init__(
        self, kind: str, compiled: cfrkit.CompiledGame, seed: int = 0,
        reader: OpenSpielPolicyReader | None = None,
    ) -> None:
        game = compiled.game.openspiel_game
        if kind == "ES":
            self.solver = pyspiel.ExternalSamplingMCCFRSolver(
                game, seed=seed, avg_type=pyspiel.MCCFRAverageType.SIMPLE)
        elif kind == "OS":
            self.solver = pyspiel.OutcomeSamplingMCCFRSolver(game, seed=seed, epsilon=0.6)
        else:
            raise ValueError(f"kind must be 'ES' or 'OS', got {kind!r}")
        self.name = f"OpenSpiel {OPENSPIEL_MCCFR[kind]} (C++)"
        self.compiled = compiled
        self.reader = reader or OpenSpielPolicyReader(compiled)

    def step(self, n: int) -> None:
        run = self.solver.run_iteration
        for _ in range(n):
            run()

    def policy(self) -> cfrkit.Policy:
        """OpenSpiel's average policy, read into a cfrkit Policy."""
        return self.reader.read(self.solver.average_policy())

    def nash_conv(self) -> float:
        return cfrkit.nash_conv(self.compiled, self.policy())


def check_reader(compiled: cfrkit.CompiledGame, iterations: int = 2000) -> float:
    """The largest difference between cfrkit's NashConv of what the reader reads and
    ``pyspiel.nash_conv`` of OpenSpiel's own average policy, for both MCCFR solvers after
    ``iterations`` iterations. OpenSpiel's nash_conv works only once the solver has reached
    every information state (else it fails, see the module docstring): Kuhn after a few
    hundred iterations, not Leduc (raises ``pyspiel.SpielError`` there)."""
    worst = 0.0
    reader = OpenSpielPolicyReader(compiled)
    for kind in OPENSPIEL_MCCFR:
        solver = OpenSpielMCCFRSolver(kind, compiled, seed=1, reader=reader)
        solver.step(iterations)
        theirs = pyspiel.nash_conv(compiled.game.openspiel_game, solver.solver.average_policy())
        worst = max(worst, abs(theirs - solver.nash_conv()))
    return worst


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


def is_sampled(name: str) -> bool:
    """Whether the solver of this entry name samples (its results depend on its seed)."""
    return name in {f"cfrkit {n}" for n in SAMPLED_TRAINER_NAMES} | {
        f"OpenSpiel {cls} (C++)" for cls in OPENSPIEL_MCCFR.values()}


def solver_entries(
    compiled: cfrkit.CompiledGame,
    peers: Iterable[str],
    log: Log,
    trainers: Iterable[str] = TRAINER_NAMES,
) -> list[Entry]:
    """Every solver that runs on ``compiled``: cfrkit's trainers, then the ``peers`` named
    (``"openspiel"``: CFRSolver and CFRPlusSolver; ``"openspiel-mccfr"``: the external- and
    outcome-sampling MCCFR solvers, seed 0; ``"liteefg"``), logging what is skipped and why."""
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
    if "openspiel-mccfr" in peers:
        readers: list[OpenSpielPolicyReader] = []  # one walk of the game, by the first solver

        def make_mccfr(kind: str) -> OpenSpielMCCFRSolver:
            if not readers:
                readers.append(OpenSpielPolicyReader(compiled))
            return OpenSpielMCCFRSolver(kind, compiled, seed=0, reader=readers[0])

        for kind, cls_name in OPENSPIEL_MCCFR.items():
            entries.append(
                Entry(f"OpenSpiel {cls_name} (C++)", "OpenSpiel",
                      lambda kind=kind: make_mccfr(kind))
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
    then counts ``growth`` apart (1.05: every iteration up to 40, then ~5% apart; the first step
    larger than 1 is where int(value * growth) passes value + 1)."""
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
