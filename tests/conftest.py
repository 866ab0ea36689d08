"""Registries shared by the test modules: games, traversals and regret rules.

Every trainer is a traversal (how a pass visits the tree) times a rule (how regrets are folded
in); tests parametrise over :data:`TRAVERSALS` x :data:`RULES` instead of copying themselves
per trainer. A new traversal or rule is one entry here, and gets the oracle, locking and seed
tests at once.
"""

from __future__ import annotations

import sys
import threading
from collections import deque
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))  # tests/ helpers: reference, random_games

import cfrkit  # noqa: E402
from cfrkit import RegretRule, _threads  # noqa: E402
from cfrkit._kernels.chance import sample_outcome  # noqa: E402
from cfrkit.games import RPSLS, KuhnPoker, LeducPoker, RockPaperScissors  # noqa: E402
from cfrkit.tree import CHANCE  # noqa: E402

from random_games import RandomGame  # noqa: E402

# -- games -------------------------------------------------------------------------------------

GAMES = {
    "rps": RockPaperScissors(),
    "rpsls": RPSLS(),
    "kuhn2": KuhnPoker(),
    "kuhn3": KuhnPoker(players=3),
}
"""Small built-in games the pure-Python oracle handles in well under a second."""

LEDUC = LeducPoker()

# fixed random games with chance, hidden actions and several histories per infoset
RANDOM_GAMES = {
    "random2zs": RandomGame(seed=11, num_players=2, max_depth=6, max_nodes=200, zero_sum=True),
    "random2": RandomGame(seed=12, num_players=2, max_depth=6, max_nodes=200),
    "random3": RandomGame(seed=13, num_players=3, max_depth=6, max_nodes=200),
}


# -- rules ---------------------------------------------------------------------------------------


class HalvingRule(RegretRule):
    """A custom schedule (time-varying exponents are what subclasses are for): positive regrets
    keep a factor that grows towards 1, negative ones are halved, iterate ``t`` weighs
    ``log(1 + t)``."""

    def schedule(self, iterations):
        t = np.asarray(iterations, dtype=np.float64)
        return np.column_stack([1.0 - 1.0 / (t + 2.0), np.full_like(t, 0.5), np.log1p(t)])


RULES = {
    "vanilla": RegretRule.vanilla(),
    "cfr_plus": RegretRule.cfr_plus(),
    "linear": RegretRule.linear(),
    "discounted": RegretRule.discounted(),
    "predictive_plus": RegretRule.predictive_plus(),
    "dcfr_plus": RegretRule.dcfr_plus(),
    "pdcfr_plus": RegretRule.pdcfr_plus(),
    "custom": HalvingRule(alpha=1.0, beta=1.0),
}
"""Every preset, and one custom schedule (its alpha/beta only mark it as discounting)."""


class OracleSchedule:
    """The oracle's view of a rule: per-iteration factors taken from the rule's own schedule,
    so a custom schedule is checked as well (the oracle applies them eagerly)."""

    def __init__(self, rule: RegretRule) -> None:
        self.floor, self.predictive = rule.floor, rule.predictive
        self._rule = rule

    def _row(self, t: int) -> np.ndarray:
        return self._rule.schedule(np.array([float(t)]))[0]

    def positive_discount(self, t: int) -> float:
        return float(self._row(t)[0])

    def negative_discount(self, t: int) -> float:
        return float(self._row(t)[1])

    def average_weight(self, t: int) -> float:
        return float(self._row(t)[2])


# -- traversals ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Traversal:
    """How to build a trainer of one traversal, and how the oracle replays its passes."""

    make: Callable[..., cfrkit.Trainer]  # (game, rule, alternating, fixed) -> trainer
    sampled: bool = False  # chance-sampled: the oracle replays the kernel's draws
    per_player: bool = False  # a fresh sample for each player's pass
    simultaneous_ok: bool = True  # the oracle covers simultaneous updates for this traversal


TRAVERSALS = {
    "full": Traversal(lambda g, rule, alternating=True, fixed=None:
                      cfrkit.CFR(g, rule=rule, alternating=alternating, fixed=fixed)),
    "pruned": Traversal(lambda g, rule, alternating=True, fixed=None:
                        cfrkit.PrunedCFR(g, rule=rule, regret_pruning=False,
                                         alternating=alternating, fixed=fixed)),
    "sampled": Traversal(lambda g, rule, alternating=True, fixed=None:
                         cfrkit.ChanceSampledCFR(g, seed=5, rule=rule, alternating=alternating,
                                                 fixed=fixed), sampled=True),
    "sampled_per_player": Traversal(lambda g, rule, alternating=True, fixed=None:
                                    cfrkit.ChanceSampledCFR(g, seed=6, rule=rule,
                                                            alternating=alternating, fixed=fixed,
                                                            sample_per_player=True),
                                    sampled=True, per_player=True, simultaneous_ok=False),
}
"""Every exact-for-every-rule traversal (regret-based pruning needs the vanilla rule and is
tested in test_pruned.py)."""


# -- replaying a sampled trainer's draws in the oracle ----------------------------------------


def node_paths(game) -> list[tuple]:
    """The action path of every compiled node, by the compiler's breadth-first order (each
    node's children in the order the game lists them, appended level by level)."""
    paths = [()]
    frontier = deque([(game.root(), ())])
    while frontier:
        history, path = frontier.popleft()
        if history.is_terminal():
            continue
        if history.is_chance():
            labels = [label for label, _ in history.chance_outcomes()]
        else:
            labels = list(history.actions())
        for label in labels:
            paths.append(path + (label,))
            frontier.append((history.child(label), path + (label,)))
    return paths


def replay_samples(trainer: cfrkit.ChanceSampledCFR, count: int) -> list[dict[tuple, object]]:
    """The chance outcomes the trainer's next ``count`` samples will draw, as oracle mappings
    ``{chance node path: outcome label}``.

    Replays the kernel's draws on a copy of its random state: a sampled walk draws each chance
    node's outcome when the node first comes off its breadth-first queue, and visits every
    history consistent with the sample (all actions, all players).
    """
    compiled = trainer.game
    rng = trainer._state.rng.copy()
    paths = compiled._cache.get("test_node_paths")
    if paths is None:
        paths = compiled._cache["test_node_paths"] = node_paths(compiled.game)
    return [draw_one_sample(compiled.tree, trainer._statics, rng, paths) for _ in range(count)]


def draw_one_sample(tree, statics, rng, paths: list[tuple]) -> dict[tuple, object]:
    """One sample's outcomes, ``{chance node path: outcome label}``, drawn from ``rng`` (in
    place) as the layout kernels draw them: breadth first, at each chance node reached."""
    chosen: dict[tuple, object] = {}
    queue = deque([0])
    while queue:
        n = queue.popleft()
        first, m = int(tree.node_first_child[n]), int(tree.node_num_children[n])
        if tree.node_kind[n] == CHANCE:
            k = sample_outcome(rng, statics.alias_prob, statics.alias_index,
                               int(tree.node_slot[n]) - tree.num_action_slots, m)
            chosen[paths[n]] = paths[first + k][-1]
            children = [first + k]
        else:
            children = range(first, first + m)
        queue.extend(c for c in children if tree.node_num_children[c] > 0)
    return chosen


def strain_phased_loops(monkeypatch, threads: int, workers: int | None = None,
                        rounds: int | None = None) -> None:
    """Make the phased parallel loops (``_kernels/phases.py``) run on ``threads`` threads
    whatever they ask for, with ``workers`` workers (default: the count asked for) that spin
    at most ``rounds`` rounds for a phase (default: as timed) -- the ways a loop that waited for
    every worker would hang."""
    real_workers, real_running = _threads.workers, _threads.running

    def strained_workers(count):
        counter = real_workers(count if workers is None else workers)
        if rounds is not None:
            counter[3] = rounds
        return counter

    monkeypatch.setattr(_threads, "workers", strained_workers)
    monkeypatch.setattr(_threads, "running", lambda count: real_running(threads))


def finishes(run: Callable[[], object], seconds: float = 120.0) -> bool:
    """Whether ``run()``, in a thread of its own (the kernels release the GIL), returns within
    ``seconds``: a hung parallel loop fails a test instead of stopping the suite."""
    runner = threading.Thread(target=run, daemon=True)
    runner.start()
    runner.join(timeout=seconds)
    return not runner.is_alive()
