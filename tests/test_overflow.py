"""Finite numbers that would overflow: utilities beyond what the kernels can accumulate are
refused when the game is compiled; at the limit, every traversal and rule stays finite."""

from __future__ import annotations

import numpy as np
import pytest

import cfrkit
from cfrkit import GameError, compile_game
from cfrkit.games import KuhnPoker, MatrixGame
from cfrkit.limits import MAX_ABS_UTILITY, MAX_ITERATIONS

from conftest import RULES, TRAVERSALS
from probe_game import Probe


class Scaled(cfrkit.Game):
    """``base`` with every utility multiplied by ``factor``."""

    def __init__(self, base: cfrkit.Game, factor: float) -> None:
        self.base, self.factor = base, factor
        self.num_players, self.name = base.num_players, f"{base.name}*{factor:g}"

    def root(self):
        return ScaledHistory(self.base.root(), self.factor)


class ScaledHistory(cfrkit.History):
    def __init__(self, inner, factor):
        self.inner, self.factor = inner, factor

    def is_terminal(self):
        return self.inner.is_terminal()

    def is_chance(self):
        return self.inner.is_chance()

    def current_player(self):
        return self.inner.current_player()

    def actions(self):
        return self.inner.actions()

    def chance_outcomes(self):
        return self.inner.chance_outcomes()

    def child(self, action):
        return ScaledHistory(self.inner.child(action), self.factor)

    def infoset_key(self):
        return self.inner.infoset_key()

    def utilities(self):
        return tuple(self.factor * u for u in self.inner.utilities())


@pytest.mark.parametrize("value", [1e308, -1e308, 1.7976931348623157e308, 1e201, -2e200,
                                   float(MAX_ABS_UTILITY) * (1 + 2**-52), 10**250])
def test_utilities_beyond_the_limit_are_refused(value):
    with pytest.raises(GameError) as info:
        compile_game(Probe("utilities", 3, (value, 0.0)))
    message = str(info.value)
    assert "beyond +-1e+200" in message and "rescale the payoffs" in message
    assert "history ['h', 'a', 'x']" in message and len(message) < 300


def test_utilities_at_the_limit_are_accepted():
    compiled = compile_game(Probe("utilities", 3, (MAX_ABS_UTILITY, -MAX_ABS_UTILITY)))
    assert np.abs(compiled.tree.utility).max() == MAX_ABS_UTILITY


def test_the_limit_leaves_room_for_the_largest_accumulations():
    # what the limit promises (see cfrkit.limits): four times the largest |utility| times the
    # square of the most iterations -- a linear-weighted cumulative regret -- stays far below
    # float64's overflow, with room for sampling weights
    worst = 4.0 * MAX_ABS_UTILITY * float(MAX_ITERATIONS) ** 2
    assert np.isfinite(worst) and worst * 1e75 < np.finfo(np.float64).max


@pytest.mark.parametrize("rule", sorted(RULES))
@pytest.mark.parametrize("traversal", sorted(TRAVERSALS))
def test_every_trainer_stays_finite_at_the_largest_utilities(traversal, rule):
    # the NaN the old checks let through came from u - (-u) = inf at |u| = 1e308
    game = Scaled(KuhnPoker(), MAX_ABS_UTILITY / 2)  # Kuhn's payoffs reach 2
    trainer = TRAVERSALS[traversal].make(game, RULES[rule])
    trainer.iterate(2000)
    regrets = np.array([r for row in trainer.cumulative_regrets().values() for r in row.values()])
    assert np.all(np.isfinite(regrets)) and np.abs(regrets).max() > 1e190
    average = trainer.average_policy()
    assert np.all(np.isfinite(average.table))
    value = cfrkit.nash_conv(game, average)
    assert np.isfinite(value) and value >= 0.0


def test_evaluation_at_the_largest_utilities_matches_the_unscaled_game():
    factor = MAX_ABS_UTILITY / 2
    policy = cfrkit.CFRPlus(KuhnPoker()).iterate(300).average_policy()
    scaled = Scaled(KuhnPoker(), factor)
    scaled_policy = cfrkit.Policy(scaled, policy.table)
    assert cfrkit.nash_conv(scaled, scaled_policy) == pytest.approx(
        factor * cfrkit.nash_conv(KuhnPoker(), policy), rel=1e-12)
    np.testing.assert_allclose(cfrkit.expected_values(scaled, scaled_policy),
                               factor * cfrkit.expected_values(KuhnPoker(), policy), rtol=1e-12)


def test_large_payoff_matrices_are_refused_too():
    with pytest.raises(GameError, match="beyond"):
        compile_game(MatrixGame("huge", ("a", "b"), [[1e250, 0.0], [0.0, 1.0]]))


class _Chain(cfrkit.Game):
    """Two players alternate along a chain of ``depth`` moves: ``x`` or ``y`` end it (winning
    or losing 1 for the mover), ``g`` goes on (ending at 0.5 at the bottom). Uniform play
    gives the deep histories a reach of 3^-depth, which underflows float64 near depth 680."""

    num_players = 2

    def __init__(self, depth: int) -> None:
        self.depth, self.name = depth, f"chain{depth}"

    def root(self):
        return _ChainHistory(self, "")


class _ChainHistory(cfrkit.History):
    def __init__(self, game, path):
        self.game, self.path = game, path

    def is_terminal(self):
        return self.path.endswith(("x", "y")) or len(self.path) == self.game.depth

    def is_chance(self):
        return False

    def current_player(self):
        return len(self.path) % 2

    def actions(self):
        return ("x", "y", "g")

    def chance_outcomes(self):
        return ()

    def child(self, action):
        return _ChainHistory(self.game, self.path + action)

    def infoset_key(self):
        return self.path

    def utilities(self):
        mover = (len(self.path) - 1) % 2
        v = {"x": 1.0, "y": -1.0, "g": 0.5}[self.path[-1]]
        return (v, -v) if mover == 0 else (-v, v)


@pytest.mark.parametrize("depth", [700, 1400, 3000])
def test_reach_underflowing_deep_in_a_tree_leaves_no_nan(depth):
    # regrets of histories whose reach is subnormal sum to a subnormal total: regret matching
    # must not turn 1 / total = inf into 0 * inf = NaN
    trainer = cfrkit.VanillaCFR(_Chain(depth)).iterate(5)
    for name in ("regret", "strategy_sum", "probs"):
        assert np.all(np.isfinite(getattr(trainer._state, name))), name
    table = trainer.average_policy().table
    assert np.all(np.isfinite(table))
