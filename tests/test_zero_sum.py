"""Zero-sum detection judges each terminal against its own payoffs: tiny payoffs are not
zero-sum by default, rounding in large ones is forgiven."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import assume, given, settings, strategies as st

import cfrkit
from cfrkit import compile_game
from cfrkit.games import MatrixGame

from spec_game import D, SpecGame, T


def matrix(row, column=None) -> MatrixGame:
    return MatrixGame("m", ("a", "b"), row, column)


@pytest.mark.parametrize("scale", [1e-12, 1e-300, 1e-3, 1.0, 1e150, 5e199])
def test_zero_sum_games_at_any_scale_are_zero_sum(scale):
    game = matrix(scale * np.array([[1.0, -1.0], [-0.5, 2.0]]))
    assert compile_game(game).zero_sum
    assert cfrkit.exploitability(game, cfrkit.Policy.uniform(game)) > 0


@pytest.mark.parametrize("scale", [1.0, 1e6, 1e-6])
def test_the_tolerance_is_1e_9_of_the_largest_payoff(scale):
    near = matrix(scale * np.array([[1.0, 0.0], [0.0, 1.0]]),
                  scale * np.array([[-1.0 + 5e-10, 0.0], [0.0, -1.0]]))
    off = matrix(scale * np.array([[1.0, 0.0], [0.0, 1.0]]),
                 scale * np.array([[-1.0 + 5e-9, 0.0], [0.0, -1.0]]))
    assert compile_game(near).zero_sum and not compile_game(off).zero_sum


@pytest.mark.parametrize("scale", [1e-12, 1e-9, 1e-300, 1.0])
def test_a_coordination_game_with_tiny_payoffs_is_not_zero_sum(scale):
    # the old tolerance was absolute below 1: payoffs of 1e-12 made any game "zero-sum"
    game = matrix(scale * np.eye(2), scale * np.eye(2))
    assert not compile_game(game).zero_sum
    with pytest.raises(ValueError, match="two-player zero-sum"):
        cfrkit.exploitability(game, cfrkit.Policy.uniform(game))


def test_each_terminal_is_judged_on_its_own_payoffs():
    # large zero-sum payoffs elsewhere do not excuse a small terminal that is not zero-sum
    game = SpecGame(D(0, "k", ("big", T(1e6, -1e6)), ("small", T(1e-4, 1e-4))))
    assert not compile_game(game).zero_sum


def test_rounding_in_computed_payoffs_is_forgiven():
    pot = 1000.1
    game = SpecGame(D(0, "k", ("x", T(pot - 1000.0, 1000.0 - pot)),
                         ("y", T(0.1 + 0.2, -0.3)), ("z", T(0.0, 0.0))))
    assert compile_game(game).zero_sum


def test_constant_sum_is_not_zero_sum():
    game = matrix([[1.0, 0.0], [0.0, 1.0]], [[0.0, 1.0], [1.0, 0.0]])  # sums to 1 everywhere
    assert not compile_game(game).zero_sum


def test_three_players_summing_to_zero_are_zero_sum():
    game = SpecGame(D(0, "k", ("x", T(1e-10, 2e-10, -3e-10)), ("y", T(5.0, -2.5, -2.5))),
                    num_players=3)
    assert compile_game(game).zero_sum


@settings(max_examples=200, deadline=None)
@given(st.integers(-300, 190), st.lists(st.floats(-1, 1, allow_subnormal=False), min_size=4,
                                        max_size=4), st.floats(1e-6, 1.0))
def test_scaling_never_changes_the_verdict(exponent, entries, mismatch):
    scale = 10.0 ** exponent
    row = scale * np.array(entries).reshape(2, 2)
    # a subnormal payoff has too few bits to carry a relative mismatch of 1e-6 (times 1 - 1e-6
    # it can round back to itself, and the game really is zero-sum)
    assume(np.all((row == 0.0) | (np.abs(row) >= 1e-300)))
    assert compile_game(matrix(row)).zero_sum
    # player 1 loses a share `mismatch` less than player 0 wins somewhere: not zero-sum
    column = -row.copy()
    column[0, 0] = -row[0, 0] * (1 - mismatch) if row[0, 0] != 0 else scale * mismatch
    assert not compile_game(matrix(row, column)).zero_sum


@pytest.mark.parametrize(
    "row, column, message",
    [
        ([[1, 2], [3]], None, "m: row_payoff is not a matrix of numbers (rows of different lengths)"),
        ([[1, 2], [3, 4]], [["a", "b"], ["c", "d"]], "m: column_payoff is not a matrix of numbers"),
        ([[1, 2, 3], [3, 4, 5]], None, "m: row_payoff has shape (2, 3), expected 2x2 (rows: "
         "actions; columns: actions, the same for both players)"),
        ([[1, 2], [3, 4]], [[1, 2, 3], [3, 4, 5]], "m: column_payoff has shape (2, 3), expected 2x2"),
        # numpy would read these as numbers; a game's utilities may not be them either
        ([["1", "2"], ["3", "4"]], None, "m: row_payoff is not a matrix of numbers (it holds str '1')"),
        ([[1, 0], [True, 1]], None, "m: row_payoff is not a matrix of numbers (it holds bool True)"),
        (np.ones((2, 2), dtype=bool), None, "m: row_payoff is not a matrix of numbers (it holds bool"),
        ([[1, 2], [3, None]], None, "m: row_payoff is not a matrix of numbers (it holds NoneType"),
        ([[1, 2], [3, 1j]], None, "m: row_payoff is not a matrix of numbers (it holds complex 1j)"),
        ([[1, 2], [3, 10**400]], None, "m: row_payoff holds inf, not a finite number"),
        ([[1, 2], [3, 4]], [[1, 2], [3, float("nan")]], "m: column_payoff holds nan, not a finite"),
    ],
)
def test_a_payoff_that_is_not_a_matrix_of_numbers_of_the_actions_shape_is_named(row, column,
                                                                                 message):
    with pytest.raises(cfrkit.GameError) as info:
        MatrixGame("m", ("a", "b"), row, column)
    assert str(info.value).startswith(message)
