"""Every traversal x every regret rule against the pure-Python oracle, and what they share:
locking, seeds, block independence, read-only switches and argument errors."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import cfrkit
from cfrkit import RegretRule
from cfrkit.games import KuhnPoker, RockPaperScissors

from conftest import GAMES, LEDUC, RANDOM_GAMES, RULES, TRAVERSALS, OracleSchedule, replay_samples
from random_games import random_games
from reference import ReferenceCFR

TOL = 1e-12
ORACLE_GAMES = {**GAMES, **RANDOM_GAMES}


def oracle_rule(rule: RegretRule):
    """Presets go to the oracle as their five parameters (its own formulas); a custom
    schedule as its per-iteration factors."""
    return rule if type(rule) is RegretRule else OracleSchedule(rule)


def assert_tables_close(ours: dict, theirs: dict, what: str, table_scale: bool = False) -> None:
    """Entry by entry within ``TOL`` times the row's scale (at least 1), or the whole table's:
    under iterate weights like ``t^5`` a near-zero average weight carries the rounding of a
    probability times the largest weight."""
    assert ours.keys() == theirs.keys()
    largest = max(abs(v) for row in theirs.values() for v in row.values())
    for key, row in theirs.items():
        scale = max(1.0, largest if table_scale else max(abs(v) for v in row.values()))
        for action, value in row.items():
            got = ours[key][action]
            assert abs(got - value) <= TOL * scale, (what, key, action, got, value)


def adopt_tie_breaks(trainer, oracle) -> int:
    """Where regret matching sees an exact tie, let the oracle take the kernel's strategy.

    When every regret-matching input of an infoset is zero in exact arithmetic (an exact
    indifference, common in games with rational payoffs, e.g. Kuhn's equilibrium mixes), the
    computed inputs are rounding residues of either sign, and regret matching turns a residue of
    1e-16 into a pure strategy where the exact answer is uniform. The kernel and the oracle sum
    in different orders, so they may break such a tie differently; both are right. Only rows
    whose inputs are within 1e-12 of zero on both sides are adopted; returns how many.
    """
    current = trainer.current_policy().to_dict()
    regrets = trainer.cumulative_regrets()
    adopted = 0
    for key, row in oracle.current.items():
        if all(abs(current[key][a] - p) <= TOL for a, p in row.items()):
            continue
        theirs = [oracle.regrets[key][a] + oracle.prediction[key][a] for a in row]
        ours = [regrets[key][a] + trainer._state.prediction[
            trainer.game.tree.infoset_first_slot[trainer.game.key_index[key]] + j]
            for j, a in enumerate(row)]
        if max(map(abs, theirs + ours)) <= TOL:
            oracle.current[key] = dict(current[key])
            adopted += 1
    return adopted


def run_against_oracle(traversal: str, rule_name: str, game, alternating: bool, iterations: int):
    spec, rule = TRAVERSALS[traversal], RULES[rule_name]
    trainer = spec.make(game, rule, alternating=alternating)
    oracle = ReferenceCFR(game, alternating=alternating, rule=oracle_rule(rule))
    players = trainer.game.num_players
    for _ in range(iterations):
        if spec.sampled:
            samples = replay_samples(trainer, players if spec.per_player else 1)
            trainer.iterate(1)
            oracle.iterate_sampled(samples if spec.per_player else samples[0])
        else:
            trainer.iterate(1)
            oracle.iterate(1)
        adopt_tie_breaks(trainer, oracle)
    assert_tables_close(trainer.cumulative_regrets(), oracle.regrets, "regret")
    assert_tables_close(trainer.strategy_sums(), oracle.strategy_sum, "strategy sum", True)
    assert_tables_close(trainer.current_policy().to_dict(), oracle.current, "current")
    # the average is the strategy sums normalised: their tolerance, divided by the row's total
    largest = max(abs(v) for row in oracle.strategy_sum.values() for v in row.values())
    average, expected = trainer.average_policy().to_dict(), oracle.average_policy()
    for key, row in expected.items():
        total = sum(oracle.strategy_sum[key].values())
        bound = 2 * TOL * max(1.0, largest) / total if total > 0 else TOL
        for action, value in row.items():
            assert abs(average[key][action] - value) <= max(TOL, bound), ("average", key, action)


def _cases():
    for traversal, spec in TRAVERSALS.items():
        for alternating in (True, False):
            if alternating or spec.simultaneous_ok:
                yield traversal, alternating


@pytest.mark.parametrize("game_name", sorted(ORACLE_GAMES))
@pytest.mark.parametrize("rule_name", sorted(RULES))
@pytest.mark.parametrize("traversal, alternating", list(_cases()))
def test_kernels_match_the_oracle(traversal, alternating, rule_name, game_name):
    run_against_oracle(traversal, rule_name, ORACLE_GAMES[game_name], alternating, 12)


@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(game=random_games(), alternating=st.booleans())
@pytest.mark.parametrize("rule_name", sorted(RULES))
@pytest.mark.parametrize("traversal", sorted(TRAVERSALS))
def test_kernels_match_the_oracle_on_random_games(traversal, rule_name, game, alternating):
    # hypothesis draws 2- and 3-player, zero-sum and general-sum games
    if not alternating and not TRAVERSALS[traversal].simultaneous_ok:
        alternating = True
    run_against_oracle(traversal, rule_name, game, alternating, 6)


@pytest.mark.parametrize("rule_name", sorted(RULES))
def test_zero_reach_pruning_keeps_the_full_iterates_on_leduc(rule_name):
    rule = RULES[rule_name]
    # 40: the docs say the discounting rules' runs agree to 1e-9 for about 45 iterations
    full = cfrkit.CFR(LEDUC, rule=rule).iterate(40)
    pruned = cfrkit.PrunedCFR(LEDUC, rule=rule, regret_pruning=False).iterate(40)
    np.testing.assert_allclose(pruned.average_policy().table, full.average_policy().table, atol=1e-9)
    np.testing.assert_allclose(pruned.current_policy().table, full.current_policy().table, atol=1e-9)
    if not rule.discounts:  # the same sums in the same order: bit for bit, however long
        full.iterate(260)
        pruned.iterate(260)
        np.testing.assert_array_equal(pruned.average_policy().table, full.average_policy().table)
    else:
        # a lazily discounted regret (one product over the iterations an infoset was skipped)
        # rounds differently from one discounted every iteration; regret matching amplifies
        # that by ~1.3x per iteration on Leduc (1e-14 at 6 iterations, 1e-11 at 35), so long
        # runs take different but equally good paths
        full.iterate(260)
        pruned.iterate(260)
        a = cfrkit.nash_conv(LEDUC, full.average_policy())
        b = cfrkit.nash_conv(LEDUC, pruned.average_policy())
        assert b == pytest.approx(a, rel=0.2)  # measured: within 6%
    assert pruned.nodes_touched < 0.7 * full.nodes_touched


@pytest.mark.parametrize("rule_name", sorted(RULES))
@pytest.mark.parametrize("traversal", sorted(TRAVERSALS))
def test_blocks_and_calls_do_not_change_a_run(traversal, rule_name):
    # iterate() splits runs into kernel calls of any size; the state carries everything
    game = GAMES["kuhn3"]
    make, rule = TRAVERSALS[traversal].make, RULES[rule_name]
    one = make(game, rule).iterate(700)
    parts = make(game, rule)
    for n in (1, 2, 97, 600):
        parts.iterate(n)
    np.testing.assert_array_equal(one._state.regret, parts._state.regret)
    np.testing.assert_array_equal(one._state.strategy_sum, parts._state.strategy_sum)
    np.testing.assert_array_equal(one.current_policy().table, parts.current_policy().table)
    assert one.iteration == parts.iteration == 700
    assert one.nodes_touched == parts.nodes_touched


@pytest.mark.parametrize("rule_name", sorted(RULES))
def test_sampled_runs_are_reproducible_per_seed(rule_name):
    game, rule = GAMES["kuhn3"], RULES[rule_name]
    a = cfrkit.ChanceSampledCFR(game, seed=3, rule=rule).iterate(500)
    b = cfrkit.ChanceSampledCFR(game, seed=3, rule=rule).iterate(500)
    c = cfrkit.ChanceSampledCFR(game, seed=4, rule=rule).iterate(500)
    np.testing.assert_array_equal(a._state.regret, b._state.regret)
    np.testing.assert_array_equal(a.average_policy().table, b.average_policy().table)
    assert not np.array_equal(a._state.regret, c._state.regret)


@pytest.mark.parametrize("rule_name", sorted(RULES))
@pytest.mark.parametrize("traversal", sorted(TRAVERSALS))
def test_locked_infosets_keep_their_rows_and_the_others_respond(traversal, rule_name):
    fixed = {"P0": {"rock": 0.4, "paper": 0.3, "scissors": 0.3}}
    trainer = TRAVERSALS[traversal].make(RockPaperScissors(), RULES[rule_name], fixed=fixed)
    trainer.iterate(3000)
    assert dict(trainer.average_policy()["P0"]) == fixed["P0"]
    assert dict(trainer.current_policy()["P0"]) == fixed["P0"]
    assert trainer.average_policy()["P1"]["paper"] > 0.99  # paper beats the rock-heavy player


# -- the rule as a value ------------------------------------------------------------------------


def test_presets_are_the_documented_parameters():
    assert RegretRule.vanilla() == RegretRule()
    assert RegretRule.cfr_plus() == RegretRule(floor=True, gamma=1.0)
    assert RegretRule.linear() == RegretRule(alpha=1.0, beta=1.0, gamma=1.0)
    assert RegretRule.discounted() == RegretRule(alpha=1.5, beta=0.0, gamma=2.0)
    assert RegretRule.predictive_plus() == RegretRule(floor=True, gamma=2.0, predictive=True)
    assert RegretRule.dcfr_plus() == RegretRule(floor=True, alpha=1.5, gamma=4.0)
    assert RegretRule.pdcfr_plus() == RegretRule(floor=True, alpha=2.3, gamma=5.0, predictive=True)
    for cls, rule in [
        (cfrkit.VanillaCFR, RegretRule.vanilla()), (cfrkit.CFRPlus, RegretRule.cfr_plus()),
        (cfrkit.LinearCFR, RegretRule.linear()), (cfrkit.DiscountedCFR, RegretRule.discounted()),
        (cfrkit.PredictiveCFRPlus, RegretRule.predictive_plus()),
        (cfrkit.DCFRPlus, RegretRule.dcfr_plus()), (cfrkit.PDCFRPlus, RegretRule.pdcfr_plus()),
    ]:
        assert cls(KuhnPoker()).rule == rule
    assert cfrkit.DiscountedCFR(KuhnPoker(), alpha=2, beta=0.5, gamma=3).rule == RegretRule(
        alpha=2.0, beta=0.5, gamma=3.0)


def test_schedule_is_the_formula():
    t = np.array([1.0, 2.0, 10.0])
    factors = RegretRule.discounted(alpha=1.5, beta=0.0, gamma=2.0).schedule(t)
    np.testing.assert_allclose(factors[:, 0], t**1.5 / (t**1.5 + 1))
    np.testing.assert_allclose(factors[:, 1], 0.5)
    np.testing.assert_allclose(factors[:, 2], t**2)
    np.testing.assert_array_equal(RegretRule().schedule(t), np.ones((3, 3)))
    # a huge exponent is no discount at all, not an overflow
    assert RegretRule(alpha=1e6).schedule(np.array([5.0]))[0, 0] == 1.0
    # iterations count from 1 (t = 0 or -1 gave nan rows, a 2-D array numpy's broadcast error)
    for bad in (np.array([[1.0, 2.0]]), np.array([0.0, -1.0]), ["x"], np.array([np.inf])):
        with pytest.raises(ValueError, match="iterations must be a 1-D array of iteration numbers"):
            RegretRule.discounted().schedule(bad)


def test_linear_cfr_regrets_are_the_linearly_weighted_sum():
    # LinearCFR runs as DCFR(1, 1, 1): R_T = sum_t t r^t / (T + 1)
    game = KuhnPoker()
    trainer = cfrkit.LinearCFR(game)
    expected = {k: {a: 0.0 for a in row} for k, row in trainer.cumulative_regrets().items()}
    oracle = ReferenceCFR(game)  # a vanilla oracle would diverge; use the trainer's own profile
    previous = trainer.cumulative_regrets()
    for t in range(1, 6):
        trainer.iterate(1)
        now = trainer.cumulative_regrets()
        for key, row in now.items():
            for a in row:
                # undo the scale: (T+1) R_T - T R_{T-1} = T r^T
                expected[key][a] += (t + 1) * now[key][a] - t * previous[key][a]
        previous = now
    for key, row in trainer.cumulative_regrets().items():
        for a, value in row.items():
            assert value * 6 == pytest.approx(expected[key][a], abs=1e-12)
    del oracle


@pytest.mark.parametrize(
    "kwargs, message",
    [
        (dict(floor=1), "floor must be a bool"),
        (dict(predictive="yes"), "predictive must be a bool"),
        (dict(alpha="1.5"), "alpha must be a real number or None"),
        (dict(alpha=math.nan), "alpha must be finite"),
        (dict(beta=math.inf), "beta must be finite"),
        (dict(alpha=10**400), "alpha must be finite"),  # an int past float64: not OverflowError
        (dict(gamma=-(10**400)), "gamma must be finite"),
        (dict(gamma=-1.0), "gamma must be >= 0"),
        (dict(gamma=None), "gamma must be a real number"),
        (dict(floor=True, beta=0.0), "beta has no effect with floor=True"),
    ],
)
def test_rule_arguments_are_checked(kwargs, message):
    with pytest.raises(ValueError, match=message):
        RegretRule(**kwargs)


@pytest.mark.parametrize(
    "make, message",
    [
        (lambda: cfrkit.DiscountedCFR(KuhnPoker(), alpha=math.nan), "alpha must be finite"),
        (lambda: cfrkit.DiscountedCFR(KuhnPoker(), gamma=-2), "gamma must be >= 0"),
        (lambda: cfrkit.DCFRPlus(KuhnPoker(), alpha="x"), "alpha must be a real number"),
        (lambda: cfrkit.PDCFRPlus(KuhnPoker(), gamma=math.inf), "gamma must be finite"),
        (lambda: cfrkit.CFRPlus(KuhnPoker(), alternating="no"), "alternating must be a bool"),
    ],
)
def test_trainer_arguments_are_checked(make, message):
    with pytest.raises(ValueError, match=message):
        make()


def test_rule_must_be_a_rule():
    with pytest.raises(TypeError, match="rule must be a cfrkit.RegretRule"):
        cfrkit.CFR(KuhnPoker(), rule="cfr+")


class _BadSchedule(RegretRule):
    def __init__(self, rows):
        super().__init__()
        object.__setattr__(self, "_rows", rows)

    def schedule(self, iterations):
        return np.tile(self._rows, (len(iterations), 1))


@pytest.mark.parametrize(
    "row, message",
    [
        ([0.0, 1.0, 1.0], "discounts must lie in \\[2\\*\\*-1022, 1\\]"),
        ([1.0, 1.5, 1.0], "discounts must lie in \\[2\\*\\*-1022, 1\\]"),
        ([1.0, 1.0, -1.0], "average weights must be finite and >= 0"),
        ([1.0, 1.0, math.nan], "average weights must be finite and >= 0"),
        # pruned and sampled passes would skip the discounts of the infosets they do not visit
        ([0.5, 1.0, 1.0], "discounts the regrets, but alpha and beta are None"),
        ([1.0, 0.5, 1.0], "discounts the regrets, but alpha and beta are None"),
    ],
)
def test_custom_schedules_are_checked(row, message):
    trainer = cfrkit.CFR(KuhnPoker(), rule=_BadSchedule(np.array(row)))
    with pytest.raises(ValueError, match=message):
        trainer.iterate(3)
    assert trainer.iteration == 0  # nothing ran


def test_regret_pruning_refuses_unsound_combinations():
    with pytest.raises(ValueError, match="needs the vanilla rule"):
        cfrkit.PrunedCFR(KuhnPoker(), rule=RegretRule.cfr_plus(), regret_pruning=True)
    with pytest.raises(ValueError, match="this game has 3 players"):
        cfrkit.PrunedCFR(KuhnPoker(players=3), regret_pruning=True)
    # left to its default it runs where it is sound, and only there
    assert cfrkit.PrunedCFR(KuhnPoker()).regret_pruning


class _LinearAverage(RegretRule):
    """Plain regrets, iterate ``t`` weighing ``t``: the fields are the vanilla rule's."""

    def schedule(self, iterations):
        t = np.asarray(iterations, dtype=np.float64)
        return np.column_stack([np.ones_like(t), np.ones_like(t), t])


def test_a_custom_schedule_is_never_taken_for_the_vanilla_rule():
    # regret-based pruning's settlement reads unweighted sequence weights: with a weighted
    # average it left Kuhn at NashConv 0.333 after 300 iterations, against 0.0035 unpruned
    rule = _LinearAverage()
    assert not rule.is_vanilla and RegretRule().is_vanilla
    with pytest.raises(ValueError, match="needs the vanilla rule"):
        cfrkit.PrunedCFR(KuhnPoker(), rule=rule, regret_pruning=True)
    pruned = cfrkit.PrunedCFR(KuhnPoker(), rule=rule)
    assert not pruned.regret_pruning
    full = cfrkit.CFR(KuhnPoker(), rule=rule).iterate(300)
    pruned.iterate(300)
    assert np.array_equal(pruned.average_policy().table, full.average_policy().table)
    assert cfrkit.nash_conv(KuhnPoker(), full.average_policy()) < 0.01
    assert not cfrkit.PrunedCFR(KuhnPoker(), rule=RegretRule.linear()).regret_pruning
    assert not cfrkit.PrunedCFR(KuhnPoker(players=3)).regret_pruning


@pytest.mark.parametrize(
    "make, switch",
    [
        (lambda: cfrkit.ChanceSampledCFR(KuhnPoker(), seed=1), "alternating"),
        (lambda: cfrkit.ChanceSampledCFR(KuhnPoker(), seed=1), "sample_per_player"),
        (lambda: cfrkit.ChanceSampledCFR(KuhnPoker(), seed=1), "seed"),
        (lambda: cfrkit.PrunedCFR(KuhnPoker()), "threshold"),
        (lambda: cfrkit.PrunedCFR(KuhnPoker()), "regret_pruning"),
        (lambda: cfrkit.CFRPlus(KuhnPoker()), "rule"),
        (lambda: cfrkit.CFRPlus(KuhnPoker()), "iteration"),
        (lambda: cfrkit.CFRPlus(KuhnPoker()), "nodes_touched"),
    ],
)
def test_switches_and_counters_are_read_only(make, switch):
    trainer = make()
    before = getattr(trainer, switch)
    with pytest.raises(AttributeError):
        setattr(trainer, switch, False)
    assert getattr(trainer, switch) == before


# -- convergence of the presets (measured values in the comments; bounds about 2x) ---------------

CONVERGENCE = {
    # (game, iterations): {trainer: NashConv bound}
    ("kuhn2", 1000): {"VanillaCFR": 4e-3, "CFRPlus": 4e-4, "LinearCFR": 4e-4,  # 1.9e-3 1.8e-4 1.9e-4
                      "DiscountedCFR": 6e-4, "PredictiveCFRPlus": 1e-7,  # 2.9e-4 4.7e-8
                      "DCFRPlus": 5e-4, "PDCFRPlus": 1e-11},  # 2.4e-4 2.3e-13
    ("kuhn3", 1000): {"VanillaCFR": 8e-3, "CFRPlus": 7e-5, "LinearCFR": 3e-4,  # 3.9e-3 3.2e-5 1.5e-4
                      "DiscountedCFR": 5e-5, "PredictiveCFRPlus": 2e-5,  # 2.3e-5 8.4e-6
                      "DCFRPlus": 3e-6, "PDCFRPlus": 2e-9},  # 1.4e-6 5.9e-10
    ("leduc", 500): {"VanillaCFR": 9e-2, "CFRPlus": 4e-3, "LinearCFR": 4e-2,  # 4.3e-2 1.9e-3 2.0e-2
                     "DiscountedCFR": 2e-3, "PredictiveCFRPlus": 6e-3,  # 9.1e-4 2.9e-3
                     "DCFRPlus": 2e-3, "PDCFRPlus": 8e-3},  # 1.0e-3 3.7e-3
}


@pytest.mark.parametrize("case", sorted(CONVERGENCE), ids=lambda c: f"{c[0]}-{c[1]}")
def test_presets_converge_at_their_measured_rates(case):
    name, iterations = case
    game = LEDUC if name == "leduc" else GAMES[name]
    for trainer, bound in CONVERGENCE[case].items():
        run = getattr(cfrkit, trainer)(game).iterate(iterations)
        assert cfrkit.nash_conv(game, run.average_policy()) < bound, trainer
