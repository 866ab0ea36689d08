"""Games without a decision: every trainer runs on them, and evaluation gives their value.

A terminal root, or chance alone, is a legal game (a lottery); its policy is empty and its
NashConv 0. Each trainer's passes must take the root as it comes (the external-sampling pass
once drew a player's action at a terminal root and divided by its zero actions).
"""

from __future__ import annotations

import numpy as np
import pytest

import cfrkit
from cfrkit import Game, History


class _Node(History):
    """A history of a game without decisions: a terminal, or a chance node over terminals."""

    def __init__(self, outcomes: dict | None, utilities: tuple = ()) -> None:
        self._outcomes, self._utilities = outcomes, utilities

    def is_terminal(self) -> bool:
        return self._outcomes is None

    def is_chance(self) -> bool:
        return self._outcomes is not None

    def current_player(self) -> int:
        return -1

    def actions(self) -> tuple:
        return ()

    def chance_outcomes(self) -> tuple:
        return tuple((label, p) for label, (p, _) in self._outcomes.items())

    def child(self, action) -> History:
        return _Node(None, self._outcomes[action][1])

    def infoset_key(self) -> str:
        return ""

    def utilities(self) -> tuple:
        return self._utilities


class TerminalRoot(Game):
    num_players = 2
    name = "terminal root"

    def root(self) -> History:
        return _Node(None, (1.5, -1.5))


class Lottery(Game):
    num_players = 3
    name = "lottery"

    def root(self) -> History:
        return _Node({"low": (0.25, (-2.0, 1.0, 1.0)), "high": (0.75, (2.0, -1.0, 0.0))})


GAMES = {"terminal_root": (TerminalRoot(), [1.5, -1.5]),
         "lottery": (Lottery(), [1.0, -0.5, 0.25])}

TRAINERS = {
    "vanilla": lambda g: cfrkit.VanillaCFR(g),
    "pdcfr_plus": lambda g: cfrkit.PDCFRPlus(g),
    "pruned": lambda g: cfrkit.PrunedCFR(g),
    "pruned_predictive": lambda g: cfrkit.PrunedCFR(g, rule=cfrkit.RegretRule.predictive_plus()),
    "chance_sampled": lambda g: cfrkit.ChanceSampledCFR(g, seed=1),
    "chance_streams": lambda g: cfrkit.ChanceSampledCFR(g, seed=1, streams=2),
    "external": lambda g: cfrkit.ExternalSamplingCFR(g, seed=1),
    "external_streams": lambda g: cfrkit.ExternalSamplingCFR(g, seed=1, streams=2, samples=3),
    "outcome": lambda g: cfrkit.OutcomeSamplingCFR(g, seed=1),
    "outcome_streams": lambda g: cfrkit.OutcomeSamplingCFR(g, seed=1, streams=2),
    "fictitious": lambda g: cfrkit.FictitiousPlay(g),
    "result_table": lambda g: cfrkit.ResultTableLearner(g, seed=1),
}


@pytest.mark.parametrize("game_name", sorted(GAMES))
@pytest.mark.parametrize("trainer_name", sorted(TRAINERS))
def test_every_trainer_runs_on_a_game_without_decisions(game_name, trainer_name, tmp_path):
    game, values = GAMES[game_name]
    trainer = TRAINERS[trainer_name](game).iterate(5)
    assert trainer.iteration == 5
    policy = trainer.average_policy()
    assert len(policy) == 0
    assert cfrkit.nash_conv(game, policy) == 0.0
    np.testing.assert_allclose(cfrkit.expected_values(game, policy), values, rtol=0, atol=1e-15)
    if hasattr(trainer, "save"):
        trainer.save(tmp_path / "run.npz")
        resumed = cfrkit.load_trainer(tmp_path / "run.npz", game).iterate(2)
        assert resumed.iteration == 7


@pytest.mark.parametrize("game_name", sorted(GAMES))
def test_a_game_without_decisions_saves_and_loads(game_name, tmp_path):
    # no decision slots at all: a file of zero slots is a whole game, not a damaged one
    compiled = cfrkit.compile_game(GAMES[game_name][0])
    assert compiled.tree.num_action_slots == 0
    loaded = cfrkit.load_compiled(compiled.save(tmp_path / "g.npz"))
    assert loaded.fingerprint == compiled.fingerprint
    np.testing.assert_array_equal(loaded.tree.utility, compiled.tree.utility)
