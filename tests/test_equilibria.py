"""Closed-form equilibria the trainers must find."""

import numpy as np
import pytest

import cfrkit
from cfrkit import Policy, VanillaCFR
from cfrkit.games import RPSLS, KuhnPoker, MatrixGame, RockPaperScissors


@pytest.fixture(scope="module")
def kuhn2():
    game = KuhnPoker()
    return game, VanillaCFR(game).iterate(10_000).average_policy()


@pytest.fixture(scope="module")
def kuhn3():
    game = KuhnPoker(players=3)
    return game, VanillaCFR(game).iterate(10_000).average_policy()


@pytest.mark.parametrize("game_class, k", [(RockPaperScissors, 3), (RPSLS, 5)])
def test_matrix_games_converge_to_uniform(game_class, k):
    game = game_class()
    policy = VanillaCFR(game).iterate(10_000).average_policy()
    assert cfrkit.nash_conv(game, policy) < 1e-3
    for key in ("P0", "P1"):
        np.testing.assert_allclose(list(policy[key].values()), np.full(k, 1 / k), atol=1e-3)
    np.testing.assert_allclose(cfrkit.expected_values(game, policy), [0.0, 0.0], atol=1e-3)


def test_players_with_different_actions_play_a_rectangular_game():
    # rows: 0 1 3 / 1 0 2; the third column is dominated for the minimising column player,
    # and the rest is matching pennies: value 1/2, both mix (1/2, 1/2)
    game = MatrixGame("2x3", ("top", "bottom"), [[0, 1, 3], [1, 0, 2]],
                      column_actions=("left", "middle", "right"))
    compiled = cfrkit.compile_game(game)
    assert compiled.infosets["P0"].actions == ("top", "bottom")
    assert compiled.infosets["P1"].actions == ("left", "middle", "right")
    assert compiled.zero_sum
    policy = cfrkit.CFRPlus(game).iterate(3000).average_policy()
    assert cfrkit.nash_conv(game, policy) < 1e-3
    assert cfrkit.expected_values(game, policy)[0] == pytest.approx(0.5, abs=1e-3)
    assert policy["P1"]["right"] < 1e-3
    # exact: the equilibrium's best responses
    exact = cfrkit.Policy.from_dict(game, {"P0": {"top": 0.5, "bottom": 0.5},
                                           "P1": {"left": 0.5, "middle": 0.5, "right": 0.0}})
    assert cfrkit.nash_conv(game, exact) == pytest.approx(0.0, abs=1e-15)
    # a square game's identity does not name column actions: cache keys made before stay
    square = MatrixGame("m", ("a", "b"), [[1, 0], [0, 1]])
    assert "column_actions" not in square.identity
    assert square.identity == MatrixGame("m", ("a", "b"), [[1, 0], [0, 1]],
                                         column_actions=("a", "b")).identity
    assert "column_actions=('left', 'middle', 'right')" in game.identity


def test_rpsls_payoffs():
    game = RPSLS()
    beats = {"rock": {"scissors", "lizard"}, "paper": {"rock", "spock"},
             "scissors": {"paper", "lizard"}, "lizard": {"paper", "spock"},
             "spock": {"rock", "scissors"}}
    for i, a in enumerate(game.action_labels):
        for j, b in enumerate(game.action_labels):
            expected = 1 if b in beats[a] else -1 if a in beats[b] else 0
            assert game.row_payoff[i, j] == expected


def test_uniform_kuhn_nash_conv_is_eleven_twelfths():
    assert cfrkit.nash_conv(KuhnPoker(), Policy.uniform(KuhnPoker())) == pytest.approx(11 / 12, abs=1e-12)


def test_published_exploitability_after_1000_iterations():
    trainer = VanillaCFR(KuhnPoker()).iterate(1000)
    assert cfrkit.exploitability(trainer.game, trainer.average_policy()) == pytest.approx(9.376e-4, abs=5e-8)


def test_kuhn_value_is_minus_one_eighteenth(kuhn2):
    game, policy = kuhn2
    values = cfrkit.expected_values(game, policy)
    assert values[0] == pytest.approx(-1 / 18, abs=1e-3)
    assert values[1] == pytest.approx(1 / 18, abs=1e-3)
    assert cfrkit.exploitability(game, policy) < 1e-3


def test_kuhn_average_strategy_lies_in_the_alpha_family(kuhn2):
    _, policy = kuhn2
    bet = {key: row["bet"] for key, row in policy.items()}
    alpha = bet["J"]
    assert 0.0 <= alpha <= 1 / 3 + 0.01
    expected = {
        # player 0 opening
        "J": alpha, "Q": 0.0, "K": 3 * alpha,
        # player 0 after pass-bet: fold J, call Q with alpha + 1/3, call K
        "Jpb": 0.0, "Qpb": alpha + 1 / 3, "Kpb": 1.0,
        # player 1 facing a bet: fold J, call Q with 1/3, call K
        "Jb": 0.0, "Qb": 1 / 3, "Kb": 1.0,
        # player 1 after a pass: bet J with 1/3, never Q, always K
        "Jp": 1 / 3, "Qp": 0.0, "Kp": 1.0,
    }
    for key, probability in expected.items():
        assert bet[key] == pytest.approx(probability, abs=0.01), key


def test_three_player_kuhn(kuhn3):
    game, policy = kuhn3
    result = cfrkit.evaluate(game, policy)
    assert result.nash_conv < 1e-3
    assert result.exploitability is None
    # Szafron, Gibson and Sturtevant (2013): the second player ("P2") has value -1/48
    assert result.values[1] == pytest.approx(-1 / 48, abs=1e-3)
    assert result.values.sum() == pytest.approx(0.0, abs=1e-12)


def test_simultaneous_updates_also_converge():
    game = KuhnPoker()
    policy = VanillaCFR(game, alternating=False).iterate(5_000).average_policy()
    assert cfrkit.exploitability(game, policy) < 5e-3
    # and they really are a different schedule
    a = VanillaCFR(game).iterate(3).average_policy().table
    b = VanillaCFR(game, alternating=False).iterate(3).average_policy().table
    assert np.max(np.abs(a - b)) > 1e-3
