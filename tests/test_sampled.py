"""ChanceSampledCFR: reproducibility, unbiased regret increments, convergence."""

import numpy as np
import pytest

import cfrkit
from cfrkit import ChanceSampledCFR, Policy, VanillaCFR, compile_game
from cfrkit.games import RPSLS, KuhnPoker, LeducPoker, RockPaperScissors

from random_games import RandomGame


def test_same_seed_is_bit_identical_and_seeds_differ():
    game = KuhnPoker(players=3)
    a = ChanceSampledCFR(game, seed=11).iterate(2000)
    b = ChanceSampledCFR(game, seed=11).iterate(1500).iterate(500)
    c = ChanceSampledCFR(game, seed=12).iterate(2000)
    np.testing.assert_array_equal(a._state.regret, b._state.regret)
    np.testing.assert_array_equal(a.average_policy().table, b.average_policy().table)
    assert a.nodes_touched == b.nodes_touched
    assert not np.array_equal(a._state.regret, c._state.regret)


def test_unseeded_trainers_record_their_seed():
    a = ChanceSampledCFR(KuhnPoker())
    b = ChanceSampledCFR(KuhnPoker(), seed=a.seed)
    a.iterate(100)
    b.iterate(100)
    np.testing.assert_array_equal(a._state.regret, b._state.regret)


@pytest.mark.parametrize("bad", [-1, 1.5, "7", True])
def test_seed_is_checked(bad):
    with pytest.raises(ValueError, match="seed"):
        ChanceSampledCFR(KuhnPoker(), seed=bad)


def test_alias_tables_sample_the_chance_probabilities():
    game = RandomGame(seed=5, num_players=2, max_depth=5, max_nodes=300)
    trainer = ChanceSampledCFR(game, seed=0)
    tree = trainer.game.tree
    from cfrkit._kernels.chance import sample_outcome

    for n in np.flatnonzero(tree.node_kind == 1):
        start = tree.node_slot[n] - tree.num_action_slots
        m = tree.node_num_children[n]
        draws = 40_000
        counts = np.bincount(
            [sample_outcome(trainer._state.rng, trainer._statics.alias_prob, trainer._statics.alias_index, start, m)
             for _ in range(draws)], minlength=m)
        probs = tree.chance_prob[start : start + m]
        # 5 standard errors of a binomial proportion
        assert np.all(np.abs(counts / draws - probs) <= 5 * np.sqrt(probs * (1 - probs) / draws) + 1e-12)


def _fixed_profile(game, seed):
    compiled = compile_game(game)
    rng = np.random.default_rng(seed)
    return Policy.from_dict(
        compiled,
        {key: rng.dirichlet(np.ones(len(info.actions))) for key, info in compiled.infosets.items()},
    )


@pytest.mark.parametrize(
    "game", [KuhnPoker(), KuhnPoker(players=3), RandomGame(seed=3, num_players=3, max_depth=6)],
    ids=["kuhn2", "kuhn3", "random3"],
)
def test_sampled_regret_increments_are_unbiased(game):
    # Every infoset fixed: the profile never changes, so each iteration adds one independent
    # sampled regret increment; vanilla CFR adds the exact one.
    profile = _fixed_profile(game, 1)
    exact = VanillaCFR(game, fixed=profile).iterate(1)._state.regret.copy()
    sampled = ChanceSampledCFR(game, seed=2024, fixed=profile)
    samples = 20_000
    increments = np.empty((samples, exact.shape[0]))
    previous = np.zeros_like(exact)
    for k in range(samples):
        sampled.iterate(1)
        increments[k] = sampled._state.regret - previous
        previous = sampled._state.regret.copy()
    mean = increments.mean(axis=0)
    stderr = increments.std(axis=0, ddof=1) / np.sqrt(samples)
    # |mean - exact| within 5 standard errors per slot: with ~100 slots the chance of a false
    # alarm is below 1e-4, while a missing or doubled chance factor moves the mean by many
    assert np.all(np.abs(mean - exact) <= 5 * stderr + 1e-12)
    assert np.any(stderr > 0)


def test_without_chance_nodes_sampling_is_vanilla():
    for game in (RockPaperScissors(), RPSLS()):
        vanilla = VanillaCFR(game).iterate(200)
        sampled = ChanceSampledCFR(game, seed=1).iterate(200)
        np.testing.assert_allclose(sampled.average_policy().table, vanilla.average_policy().table, atol=1e-12)
        np.testing.assert_allclose(sampled._state.regret, vanilla._state.regret, atol=1e-12)


def test_kuhn_two_player_convergence():
    trainer = ChanceSampledCFR(KuhnPoker(), seed=7).iterate(100_000)
    assert cfrkit.nash_conv(trainer.game, trainer.average_policy()) < 5e-3


def test_kuhn_three_player_convergence():
    trainer = ChanceSampledCFR(KuhnPoker(players=3), seed=7).iterate(1_000_000)
    assert cfrkit.nash_conv(trainer.game, trainer.average_policy()) < 1e-2


def test_leduc_convergence():
    # uniform play has NashConv 4.7 on Leduc; 3e5 sampled deals bring it to about 0.06
    trainer = ChanceSampledCFR(LeducPoker(), seed=7).iterate(300_000)
    assert cfrkit.nash_conv(trainer.game, trainer.average_policy()) < 0.1


@pytest.mark.parametrize("options", [dict(alternating=False), dict(sample_per_player=True)])
def test_other_iteration_semantics_converge(options):
    trainer = ChanceSampledCFR(KuhnPoker(), seed=3, **options).iterate(100_000)
    assert cfrkit.nash_conv(trainer.game, trainer.average_policy()) < 1e-2


def test_sampling_touches_a_small_part_of_the_tree():
    trainer = ChanceSampledCFR(KuhnPoker(players=3), seed=0).iterate(1000)
    per_iteration = trainer.nodes_touched / 1000
    # one of 24 deals: at most the 25-node betting tree per player pass, plus the deal node
    assert 3 * 2 <= per_iteration <= 3 * 26


@pytest.mark.parametrize(
    "game", [KuhnPoker(players=3), RandomGame(seed=8, num_players=3, max_depth=6)],
    ids=["kuhn3", "random3"],
)
def test_joint_walk_matches_per_player_passes(game):
    # With every infoset fixed the profile never changes, so the simultaneous single walk and
    # the alternating per-player passes see the same samples (same seed, same draw order) and
    # the same profile: their regrets and average weights must agree.
    profile = _fixed_profile(game, 4)
    joint = ChanceSampledCFR(game, seed=9, alternating=False, fixed=profile).iterate(3000)
    passes = ChanceSampledCFR(game, seed=9, fixed=profile).iterate(3000)
    np.testing.assert_allclose(joint._state.regret, passes._state.regret, atol=1e-9, rtol=1e-12)
    np.testing.assert_allclose(joint._state.strategy_sum, passes._state.strategy_sum, atol=1e-9, rtol=1e-12)
    # one walk touches each sampled node once, the passes once per player
    assert joint.nodes_touched * game.num_players == pytest.approx(passes.nodes_touched, rel=0.02)
