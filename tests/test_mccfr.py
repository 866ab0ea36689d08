"""External- and outcome-sampling MCCFR: the oracle number for number, unbiased estimates,
convergence, seeds, locking, refusals."""

from __future__ import annotations

import math

import numpy as np
import pytest

import cfrkit
from cfrkit import ExternalSamplingCFR, OutcomeSamplingCFR, RegretRule
from cfrkit.games import KuhnPoker, LeducPoker, RockPaperScissors

from conftest import GAMES, RANDOM_GAMES, RULES, OracleSchedule
from reference import infosets, regret_pass
from reference_mccfr import ReferenceMCCFR, assert_tables_close, table_of

SCHEMES = {
    "external": dict(cls=ExternalSamplingCFR, options={}, outcome=False),
    "outcome": dict(cls=OutcomeSamplingCFR, options={}, outcome=True),
    "outcome_e0.25": dict(cls=OutcomeSamplingCFR, options={"exploration": 0.25}, outcome=True),
}
SOUND_RULES = ["vanilla", "linear", "discounted", "custom"]
ORACLE_GAMES = {**{k: GAMES[k] for k in ("rps", "kuhn2", "kuhn3")}, **RANDOM_GAMES}


def make(scheme: str, game, seed: int = 7, **kwargs):
    spec = SCHEMES[scheme]
    return spec["cls"](game, seed=seed, **spec["options"], **kwargs)


def oracle_for(scheme: str, game, trainer, **options) -> ReferenceMCCFR:
    spec = SCHEMES[scheme]
    return ReferenceMCCFR(game, trainer, outcome=spec["outcome"],
                          exploration=spec["options"].get("exploration", 0.6), **options)


def assert_matches(trainer, oracle) -> None:
    assert_tables_close(table_of(trainer, "regrets"), oracle.regrets)
    assert_tables_close(table_of(trainer, "sums"), oracle.strategy_sum)
    current = trainer.current_policy()
    assert_tables_close({k: dict(current[k]) for k in oracle.current}, oracle.current)


# -- the oracle, number for number ---------------------------------------------------------------


@pytest.mark.parametrize("alternating", [True, False])
@pytest.mark.parametrize("rule_name", SOUND_RULES)
@pytest.mark.parametrize("game_name", sorted(ORACLE_GAMES))
@pytest.mark.parametrize("scheme", sorted(SCHEMES))
def test_every_scheme_and_sound_rule_matches_the_oracle(scheme, game_name, rule_name, alternating):
    game, rule = ORACLE_GAMES[game_name], RULES[rule_name]
    trainer = make(scheme, game, rule=rule, alternating=alternating)
    oracle = oracle_for(scheme, game, trainer, rule=OracleSchedule(rule), alternating=alternating)
    iterations = 40 if scheme == "external" else 150
    trainer.iterate(iterations // 3).iterate(iterations - iterations // 3)
    oracle.iterate(iterations)
    assert_matches(trainer, oracle)


@pytest.mark.parametrize("scheme", sorted(SCHEMES))
def test_leduc_matches_the_oracle(scheme):
    game = LeducPoker()
    trainer = make(scheme, game, rule=RegretRule.linear())
    oracle = oracle_for(scheme, game, trainer, rule=OracleSchedule(RegretRule.linear()))
    iterations = 8 if scheme == "external" else 60
    trainer.iterate(iterations)
    oracle.iterate(iterations)
    assert_matches(trainer, oracle)


@pytest.mark.parametrize("scheme", sorted(SCHEMES))
def test_locked_rows_are_sampled_as_fixed_and_match_the_oracle(scheme):
    game = GAMES["kuhn3"]
    fixed = {"Q": {"pass": 0.25, "bet": 0.75}, "Jpbp": {"pass": 0.5, "bet": 0.5}}
    keys = infosets(game)
    assert all(k in keys for k in fixed)  # the rows exist: the test means something
    trainer = make(scheme, game, fixed=fixed)
    oracle = oracle_for(scheme, game, trainer, fixed=fixed)
    trainer.iterate(60)
    oracle.iterate(60)
    assert_matches(trainer, oracle)
    average = trainer.average_policy()
    for key, row in fixed.items():
        assert dict(average[key]) == pytest.approx(row, abs=1e-15)


def test_a_one_player_game_averages_its_own_histories():
    from random_games import RandomGame

    game = RandomGame(seed=21, num_players=1, max_depth=5, max_nodes=120)
    for scheme in SCHEMES:
        trainer = make(scheme, game)
        oracle = oracle_for(scheme, game, trainer)
        trainer.iterate(50)
        oracle.iterate(50)
        assert_matches(trainer, oracle)
        assert trainer.strategy_sums() and any(
            x > 0 for row in trainer.strategy_sums().values() for x in row.values()
        )


# -- unbiased estimates -------------------------------------------------------------------------


def _locked(game, seed: int):
    """A random profile with every action's probability at least 0.05, as locked rows."""
    compiled = cfrkit.compile_game(game)
    rng = np.random.default_rng(seed)
    rows = {}
    for key, actions in zip(compiled.infoset_keys, compiled.infoset_actions):
        p = rng.dirichlet(np.ones(len(actions))) * (1 - 0.05 * len(actions)) + 0.05
        rows[key] = dict(zip(actions, p / p.sum()))
    return rows


def _batch_means(trainer, table: str, batches: int, size: int):
    """Per-slot mean and standard error of one iteration's increment of ``table``."""
    array = getattr(trainer._state, table)
    sums = []
    before = array.copy()
    for _ in range(batches):
        trainer.iterate(size)
        sums.append(array - before)
        before = array.copy()
    sums = np.array(sums) / size
    return sums.mean(axis=0), sums.std(axis=0, ddof=1) / math.sqrt(batches)


def _slots(compiled, rows):
    """``rows`` (key -> action -> value) as an array over the decision slots."""
    out = np.zeros(compiled.tree.num_action_slots)
    for i, (key, actions) in enumerate(zip(compiled.infoset_keys, compiled.infoset_actions)):
        start = compiled.tree.infoset_first_slot[i]
        for j, a in enumerate(actions):
            out[start + j] = rows.get(key, {}).get(a, 0.0)
    return out


def _expected_average(game, profile, scheme: str) -> dict:
    """The expected strategy-sum increment of one iteration under a fixed ``profile``, by
    enumeration: external sampling, ``sum_h pi_c(h) pi_q(h) sigma(I)`` at each ``q``'s
    histories (the traverser before ``q`` walks every action of its own, samples the rest);
    outcome sampling, ``sum_h pi_q(h) sigma(I)`` over the histories chance reaches (importance
    weights undo the sampling)."""
    n = game.num_players
    out: dict = {}

    def walk(h, chance: float, reach: list[float]):
        if h.is_terminal():
            return
        if h.is_chance():
            for outcome, prob in h.chance_outcomes():
                walk(h.child(outcome), chance * prob, reach)
            return
        q, key = h.current_player(), h.infoset_key()
        sigma = profile[key]
        # outcome sampling reaches only histories chance can reach: the support of the sampling
        weight = chance * reach[q] if scheme == "external" else reach[q] * (chance > 0.0)
        row = out.setdefault(key, {a: 0.0 for a in h.actions()})
        for a in h.actions():
            row[a] += weight * sigma[a]
            child = list(reach)
            child[q] *= sigma[a]
            walk(h.child(a), chance, child)

    walk(game.root(), 1.0, [1.0] * n)
    return out


@pytest.mark.parametrize("game_name", ["kuhn2", "kuhn3", "random2", "random3", "leduc"])
@pytest.mark.parametrize("scheme", ["external", "outcome"])
def test_regret_and_average_increments_are_unbiased(scheme, game_name):
    game = {**GAMES, **RANDOM_GAMES, "leduc": LeducPoker()}[game_name]
    compiled = cfrkit.compile_game(game)
    profile = _locked(game, seed=5)
    exact = regret_pass(game, profile, range(game.num_players))
    expected_regret = _slots(compiled, exact.regrets)
    expected_average = _slots(compiled, _expected_average(game, profile, scheme))
    batches, size = (300, 200) if scheme == "external" else (300, 2000)
    if game_name == "leduc":  # more histories per infoset, more variance per slot
        size *= 2 if scheme == "external" else 10
    # vanilla rule, every row locked: the regrets add up the raw estimates, the profile stays
    trainer = make(scheme, game, seed=11, fixed=profile)
    mean, error = _batch_means(trainer, "regret", batches, size)
    slack = 1e-9 * np.abs(expected_regret) + 1e-12  # rounding, where a slot never varies
    assert np.all(np.abs(mean - expected_regret) <= 5 * error + slack), (
        np.max(np.abs(mean - expected_regret) / (error + 1e-300)))
    # a wrong estimator would be detectable: the errors are small next to the regrets
    assert np.max(error) < 0.1 * np.max(np.abs(expected_regret))
    trainer = make(scheme, game, seed=12, fixed=profile)
    mean, error = _batch_means(trainer, "strategy_sum", batches, size)
    slack = 1e-9 * np.abs(expected_average) + 1e-12
    assert np.all(np.abs(mean - expected_average) <= 5 * error + slack), (
        np.max(np.abs(mean - expected_average) / (error + 1e-300)))


def test_the_three_player_average_needs_its_importance_weight():
    # without 1 / pi_o the expected external-sampling increment would be sum_h pi_c pi_q pi_o:
    # on three-player Kuhn under a skewed profile it differs from the target by far more
    # than the estimate's error, so the test above would catch a dropped weight
    game = GAMES["kuhn3"]
    compiled = cfrkit.compile_game(game)
    profile = _locked(game, seed=5)
    target = _slots(compiled, _expected_average(game, profile, "external"))
    trainer = make("external", game, seed=11, fixed=profile)
    mean, error = _batch_means(trainer, "strategy_sum", 300, 200)
    assert np.all(np.abs(mean - target) <= 5 * error + 1e-9 * np.abs(target) + 1e-12)
    biased = np.zeros_like(target)  # pi_c pi_q pi_o, o the third player

    def walk(h, chance, reach):
        if h.is_terminal():
            return
        if h.is_chance():
            for outcome, prob in h.chance_outcomes():
                walk(h.child(outcome), chance * prob, reach)
            return
        q = h.current_player()
        other = 3 - q - ((q + 2) % 3)  # the player that is neither q nor q's traverser
        sigma = profile[h.infoset_key()]
        i = compiled.key_index[h.infoset_key()]
        start = compiled.tree.infoset_first_slot[i]
        for j, a in enumerate(h.actions()):
            biased[start + j] += chance * reach[q] * reach[other] * sigma[a]
            child = list(reach)
            child[q] *= sigma[a]
            walk(h.child(a), chance, child)

    walk(game.root(), 1.0, [1.0] * 3)
    assert np.max(np.abs(biased - target) / (error + 1e-12)) > 20


# -- convergence ----------------------------------------------------------------------------------


# bounds: about 1.5x the worst NashConv of seeds 0-5 at these counts (measured: external Kuhn
# 0.004-0.008, outcome Kuhn 0.007-0.015, external 3-player Kuhn 0.007-0.025, external Leduc
# 0.079-0.110, outcome Leduc 0.23-0.29); a biased estimator stalls far above them
@pytest.mark.parametrize("scheme, game, iterations, bound", [
    ("external", KuhnPoker(), 100_000, 0.012),
    ("outcome", KuhnPoker(), 300_000, 0.025),
    ("external", KuhnPoker(players=3), 100_000, 0.04),
    ("external", LeducPoker(), 200_000, 0.16),
    ("outcome", LeducPoker(), 2_000_000, 0.42),
])
def test_convergence_on_kuhn_and_leduc(scheme, game, iterations, bound):
    nash_conv = cfrkit.nash_conv(game, make(scheme, game, seed=2).iterate(iterations).average_policy())
    assert nash_conv < bound


def test_linear_mccfr_converges_on_leduc():
    game = LeducPoker()
    trainer = make("external", game, seed=3, rule=RegretRule.linear()).iterate(50_000)
    assert cfrkit.nash_conv(game, trainer.average_policy()) < 0.25


# -- seeds, blocks, counters, checkpoints -----------------------------------------------------------


@pytest.mark.parametrize("scheme", sorted(SCHEMES))
def test_same_seed_is_bit_identical_however_split_and_seeds_differ(scheme):
    game = GAMES["kuhn3"]
    a = make(scheme, game, seed=9).iterate(3000)
    b = make(scheme, game, seed=9).iterate(1).iterate(1999).iterate(1000)
    c = make(scheme, game, seed=10).iterate(3000)
    for name in ("regret", "strategy_sum", "probs", "rng"):
        np.testing.assert_array_equal(getattr(a._state, name), getattr(b._state, name))
    assert a.nodes_touched == b.nodes_touched
    assert not np.array_equal(a._state.regret, c._state.regret)


def test_nodes_touched_count_the_sampled_nodes():
    # rock-paper-scissors: player 0 moves, then player 1 without seeing it.
    # external: player 0's pass touches the root, its 3 children and one sampled leaf under
    # each (7); player 1's, the root, its sampled child and 3 leaves (5). Outcome: one path of
    # 3 nodes per pass.
    rps = RockPaperScissors()
    assert make("external", rps).iterate(10).nodes_touched == 10 * (7 + 5)
    assert make("outcome", rps).iterate(10).nodes_touched == 10 * 2 * 3


@pytest.mark.parametrize("scheme", sorted(SCHEMES))
def test_checkpoints_continue_bit_for_bit(scheme, tmp_path):
    game = GAMES["kuhn3"]
    straight = make(scheme, game, seed=4, rule=RegretRule.discounted()).iterate(700)
    first = make(scheme, game, seed=4, rule=RegretRule.discounted()).iterate(300)
    first.save(tmp_path / "run.npz")
    resumed = cfrkit.load_trainer(tmp_path / "run.npz", game)
    assert type(resumed) is type(straight) and resumed.seed == 4
    assert getattr(resumed, "exploration", None) == getattr(straight, "exploration", None)
    resumed.iterate(400)
    for name in ("regret", "strategy_sum", "probs", "rng", "stamp_scale", "stamp_exponent"):
        np.testing.assert_array_equal(getattr(resumed._state, name), getattr(straight._state, name))
    assert resumed.cumulative_regrets() == straight.cumulative_regrets()


def test_solve_reaches_a_target():
    game = KuhnPoker()
    trainer = make("external", game, seed=1)
    record = trainer.solve(target_nash_conv=0.05, max_iterations=10**6)
    assert record.stopped == "target" and record.nash_conv[-1] <= 0.05


# -- refusals -----------------------------------------------------------------------------------------


@pytest.mark.parametrize("rule", [RegretRule.cfr_plus(), RegretRule.predictive_plus(),
                                  RegretRule.dcfr_plus(), RegretRule(predictive=True)])
@pytest.mark.parametrize("cls", [ExternalSamplingCFR, OutcomeSamplingCFR])
def test_unstable_rules_are_refused_with_the_reason(cls, rule):
    with pytest.raises(ValueError, match="unstable") as info:
        cls(KuhnPoker(), rule=rule)
    assert cls.__name__ in str(info.value) and "RegretRule.linear()" in str(info.value)


@pytest.mark.parametrize("bad", [0, 0.0, -0.1, 1.5, math.nan, math.inf, 10**400, "0.6", True, None])
def test_exploration_must_lie_in_0_1(bad):
    with pytest.raises(ValueError, match=r"exploration must be a number in \(0, 1\]"):
        OutcomeSamplingCFR(KuhnPoker(), exploration=bad)
    assert OutcomeSamplingCFR(KuhnPoker(), exploration=1).exploration == 1.0


@pytest.mark.parametrize("cls", [ExternalSamplingCFR, OutcomeSamplingCFR])
@pytest.mark.parametrize("bad", [-1, 2**64, 1.5, "3", True])
def test_seeds_are_checked(cls, bad):
    with pytest.raises(ValueError, match=r"seed must be an integer in \[0, 2\*\*64\)"):
        cls(KuhnPoker(), seed=bad)
    assert 0 <= cls(KuhnPoker()).seed < 2**64


def test_the_command_line_runs_them(tmp_path, capsys):
    from cfrkit.cli import main

    for name in ("external-sampling", "outcome-sampling"):
        out = tmp_path / f"{name}.json"
        assert main(["solve", "kuhn", "--trainer", name, "--seed", "3", "--iterations", "2000",
                     "--json", str(out)]) == 0
        assert out.exists()
    capsys.readouterr()


