"""The numba kernels agree with the pure-Python oracle (tests/reference.py) to ~1e-12."""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings

import cfrkit
from cfrkit import Policy, VanillaCFR, compile_game
from cfrkit.games import RPSLS, KuhnPoker, RockPaperScissors

from random_games import random_games
from reference import (
    reference_best_response,
    reference_cfr,
    reference_expected_values,
    reference_nash_conv,
)

TOL = 1e-12
BUILTIN = {
    "rps": RockPaperScissors(),
    "rpsls": RPSLS(),
    "kuhn2": KuhnPoker(),
    "kuhn3": KuhnPoker(players=3),
}


def assert_rows_close(ours: dict, theirs: dict, tol: float = TOL) -> None:
    assert set(ours) == set(theirs)
    for key in ours:
        for action, value in theirs[key].items():
            assert ours[key][action] == pytest.approx(value, abs=tol, rel=tol), (key, action)


def check_trainer_matches_oracle(game, iterations: int, alternating: bool) -> None:
    trainer = VanillaCFR(game, alternating=alternating).iterate(iterations)
    oracle = reference_cfr(game, iterations, alternating=alternating)
    assert_rows_close(trainer.cumulative_regrets(), oracle.regrets)
    assert_rows_close(trainer.strategy_sums(), oracle.strategy_sum)
    assert_rows_close(trainer.current_policy().to_dict(), oracle.current)
    average = trainer.average_policy()
    assert_rows_close(average.to_dict(), oracle.average)
    check_evaluation_matches_oracle(game, average)


def check_evaluation_matches_oracle(game, policy: Policy) -> None:
    as_dict = policy.to_dict()
    result = cfrkit.evaluate(game, policy)
    np.testing.assert_allclose(result.values, reference_expected_values(game, as_dict), atol=TOL)
    for player in range(compile_game(game).num_players):
        value, _ = reference_best_response(game, as_dict, player)
        assert result.best_response_values[player] == pytest.approx(value, abs=TOL)
    assert result.nash_conv == pytest.approx(reference_nash_conv(game, as_dict), abs=TOL)


@pytest.mark.parametrize("name", sorted(BUILTIN))
@pytest.mark.parametrize("alternating", [True, False])
def test_builtin_games_match_oracle(name, alternating):
    check_trainer_matches_oracle(BUILTIN[name], 25, alternating)


@pytest.mark.parametrize("name", sorted(BUILTIN))
def test_uniform_policy_evaluation_matches_oracle(name):
    check_evaluation_matches_oracle(BUILTIN[name], Policy.uniform(BUILTIN[name]))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(game=random_games())
def test_random_games_match_oracle_alternating(game):
    check_trainer_matches_oracle(game, 12, alternating=True)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(game=random_games())
def test_random_games_match_oracle_simultaneous(game):
    check_trainer_matches_oracle(game, 8, alternating=False)
