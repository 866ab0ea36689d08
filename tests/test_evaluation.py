"""Evaluation: best responses, NashConv and values, with property tests on random policies."""

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import cfrkit
from cfrkit import Policy, compile_game
from cfrkit.games import KuhnPoker, RockPaperScissors

from spec_game import C, D, SpecGame, T
from random_games import random_policy
from reference import reference_best_response

GAMES = {"rps": RockPaperScissors(), "kuhn2": KuhnPoker(), "kuhn3": KuhnPoker(players=3)}


@settings(max_examples=40, deadline=None)
@given(name=st.sampled_from(sorted(GAMES)), seed=st.integers(0, 2**32 - 1))
def test_best_response_dominates_the_policy(name, seed):
    game = GAMES[name]
    policy = random_policy(game, seed)
    result = cfrkit.evaluate(game, policy)
    assert np.all(result.player_improvements >= -1e-12)
    assert result.nash_conv == pytest.approx(result.player_improvements.sum(), abs=1e-15)
    for player in range(compile_game(game).num_players):
        value, pure = cfrkit.best_response(game, policy, player)
        assert value == pytest.approx(result.best_response_values[player], abs=1e-12)
        # one action per infoset of that player, and playing it achieves the value
        infosets = compile_game(game).infosets
        assert set(pure) == {k for k, i in infosets.items() if i.player == player}
        swapped = policy.to_dict()
        for key, action in pure.items():
            swapped[key] = {action: 1.0}
        assert cfrkit.expected_values(game, swapped)[player] == pytest.approx(value, abs=1e-12)


def test_best_response_in_rps_against_rock_heavy_opponent():
    game = RockPaperScissors()
    policy = Policy.from_dict(game, {"P0": [0.5, 0.25, 0.25], "P1": [1 / 3, 1 / 3, 1 / 3]})
    value, pure = cfrkit.best_response(game, policy, 1)
    assert pure == {"P1": "paper"}
    assert value == pytest.approx(0.5 - 0.25)


def test_best_response_ties_go_to_the_first_action():
    # against uniform every RPS action is a best response; in Kuhn, holding the king against
    # a uniform opponent, passing and betting both win 1.5 on average (then calling, or the
    # opponent folding half the time); the reference takes the first maximum too
    game = RockPaperScissors()
    assert cfrkit.best_response(game, Policy.uniform(game), 0).policy == {"P0": "rock"}
    kuhn = KuhnPoker()
    uniform = Policy.uniform(kuhn)
    for player in range(2):
        value, pure = cfrkit.best_response(kuhn, uniform, player)
        expected_value, expected = reference_best_response(kuhn, uniform, player)
        assert pure == expected and value == pytest.approx(expected_value, abs=1e-15)
    assert cfrkit.best_response(kuhn, uniform, 0).policy["K"] == "pass"


def test_evaluate_gives_exploitability_as_half_of_nash_conv():
    game = KuhnPoker()
    policy = random_policy(game, seed=11)
    result = cfrkit.evaluate(game, policy)
    assert result.exploitability == result.nash_conv / 2 == cfrkit.exploitability(game, policy)
    assert result.nash_conv == cfrkit.nash_conv(game, policy) > 0.1


def test_evaluations_compare_by_their_numbers():
    game = KuhnPoker()
    policy = random_policy(game, seed=11)
    first, again = cfrkit.evaluate(game, policy), cfrkit.evaluate(game, policy)
    assert first == again and not first != again  # equal arrays, not one object
    other = cfrkit.evaluate(game, random_policy(game, seed=12))
    assert first != other and first != first.nash_conv
    # a non-zero-sum game: exploitability None on both sides
    general = cfrkit.games.MatrixGame("m", ("a", "b"), [[1, 0], [0, 2]], [[0, 1], [1, 0]])
    uniform = Policy.uniform(general)
    assert cfrkit.evaluate(general, uniform) == cfrkit.evaluate(general, uniform)
    with pytest.raises(TypeError, match="unhashable"):
        hash(first)


def test_best_response_needs_information_sets():
    # player 1 cannot see the coin: it must guess once for both histories
    game = SpecGame(
        C(
            ("heads", 0.7, D(1, "guess", ("H", T(-1, 1)), ("T", T(1, -1)))),
            ("tails", 0.3, D(1, "guess", ("H", T(1, -1)), ("T", T(-1, 1)))),
        )
    )
    value, pure = cfrkit.best_response(game, {"guess": {"H": 0.5, "T": 0.5}}, 1)
    assert pure == {"guess": "H"}
    assert value == pytest.approx(0.7 - 0.3)


def test_expected_values_of_uniform_kuhn():
    # showdowns cancel over the deals; what remains is pass-bet-fold (1/8, player 0 loses 1)
    # and bet-fold (1/4, player 0 wins 1): 1/4 - 1/8 = +1/8 for player 0
    values = cfrkit.expected_values(KuhnPoker(), Policy.uniform(KuhnPoker()))
    assert values[0] == pytest.approx(0.125, abs=1e-12) and values.sum() == pytest.approx(0)


def test_exploitability_rejects_non_two_player_zero_sum():
    with pytest.raises(ValueError, match="two-player zero-sum"):
        cfrkit.exploitability(KuhnPoker(players=3), Policy.uniform(KuhnPoker(players=3)))
    general_sum = SpecGame(D(0, "k", ("x", T(1, 1)), ("y", T(0, 0))))
    with pytest.raises(ValueError, match="not zero-sum"):
        cfrkit.exploitability(general_sum, {"k": {"x": 1.0}})
    assert cfrkit.evaluate(general_sum, {"k": {"y": 1.0}}).nash_conv == pytest.approx(1.0)


def test_best_response_player_is_checked():
    with pytest.raises(ValueError, match="out of range"):
        cfrkit.best_response(KuhnPoker(), Policy.uniform(KuhnPoker()), 2)


def test_evaluation_accepts_plain_mappings_and_foreign_policies():
    game = KuhnPoker()
    other = KuhnPoker()
    policy = random_policy(other, 7)
    assert cfrkit.nash_conv(game, policy) == pytest.approx(cfrkit.nash_conv(other, policy), abs=1e-15)
    assert cfrkit.nash_conv(game, policy.to_dict()) == pytest.approx(cfrkit.nash_conv(other, policy), abs=1e-15)


def test_evaluation_str_mentions_everything():
    text = str(cfrkit.evaluate(KuhnPoker(), Policy.uniform(KuhnPoker())))
    assert "NashConv" in text and "exploitability" in text and "player values" in text
