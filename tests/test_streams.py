"""Streams: external, outcome and chance sampling with several random streams and passes per
round.

``streams=k, samples=b`` makes, for each player and iteration, ``k * b`` independent passes (``b``
on each of ``k`` jumped xoshiro streams) and averages their estimates. The oracle replays every
stream's draws; the parallel kernel, forced on small games by lowering the node threshold, must
give the serial kernel's arrays bit for bit on any thread count.
"""

from __future__ import annotations

import json

import numba
import numpy as np
import pytest

import cfrkit
from cfrkit import _threads
from cfrkit._kernels.random import jump, seed_state, stream_states
from cfrkit.games import KuhnPoker, LeducPoker
from conftest import GAMES, RANDOM_GAMES, RULES, OracleSchedule, finishes, strain_phased_loops
from reference_mccfr import ReferenceMCCFR, assert_tables_close, table_of

TWO = min(2, numba.config.NUMBA_NUM_THREADS)
CLASSES = {"external": cfrkit.ExternalSamplingCFR, "outcome": cfrkit.OutcomeSamplingCFR,
           "chance": cfrkit.ChanceSampledCFR}
ORACLE_GAMES = {"kuhn2": GAMES["kuhn2"], "kuhn3": GAMES["kuhn3"], **RANDOM_GAMES}


@pytest.fixture
def parallel_everywhere(monkeypatch):
    """Every game runs the parallel kernel when given more than one thread."""
    monkeypatch.setattr(_threads, "PARALLEL_MIN_NODES", 0)


def test_jump_matches_the_published_vector_and_streams_differ():
    # xoshiro256's jump from (0, 0, 0, 1), as in the xoshiro-fortran test data (the ++ and **
    # generators share the linear engine, so their jumps agree)
    expected = [0x934D05E8B2076310, 0xEABDD0BF76A1BE51, 0x75DD6A992ACCB1E8, 0xC660C602A7330187]
    assert [int(x) for x in jump(np.array([0, 0, 0, 1], dtype=np.uint64))] == expected
    states = stream_states(5, 4)
    assert np.array_equal(states[0], seed_state(5))
    assert np.array_equal(states[3], jump(jump(jump(seed_state(5)))))
    assert len({tuple(row) for row in states}) == 4


@pytest.mark.parametrize("alternating", [True, False])
@pytest.mark.parametrize("shape", [(3, 1), (1, 4), (2, 3)], ids=lambda s: f"k{s[0]}b{s[1]}")
@pytest.mark.parametrize("rule_name", ["vanilla", "linear", "discounted"])
@pytest.mark.parametrize("game_name", sorted(ORACLE_GAMES))
@pytest.mark.parametrize("scheme", sorted(CLASSES))
def test_every_shape_matches_the_oracle(scheme, game_name, rule_name, shape, alternating):
    game, rule = ORACLE_GAMES[game_name], RULES[rule_name]
    streams, samples = shape
    trainer = CLASSES[scheme](game, seed=7, rule=rule, alternating=alternating,
                              streams=streams, samples=samples, threads=1)
    oracle = ReferenceMCCFR(game, trainer, outcome=scheme == "outcome",
                            chance=scheme == "chance", rule=OracleSchedule(rule),
                            alternating=alternating)
    iterations = 40 if scheme == "outcome" else 12
    trainer.iterate(iterations // 3).iterate(iterations - iterations // 3)
    oracle.iterate(iterations)
    assert_tables_close(table_of(trainer, "regrets"), oracle.regrets)
    assert_tables_close(table_of(trainer, "sums"), oracle.strategy_sum)
    current = trainer.current_policy()
    assert_tables_close({k: dict(current[k]) for k in oracle.current}, oracle.current)


@pytest.mark.parametrize("scheme", sorted(CLASSES))
def test_a_one_player_game_with_streams_matches_the_oracle(scheme):
    from random_games import RandomGame

    game = RandomGame(seed=21, num_players=1, max_depth=5, max_nodes=120)
    trainer = CLASSES[scheme](game, seed=2, streams=2, samples=2, threads=1)
    oracle = ReferenceMCCFR(game, trainer, outcome=scheme == "outcome", chance=scheme == "chance")
    trainer.iterate(30)
    oracle.iterate(30)
    assert_tables_close(table_of(trainer, "regrets"), oracle.regrets)
    assert_tables_close(table_of(trainer, "sums"), oracle.strategy_sum)


def _arrays(trainer) -> list[np.ndarray]:
    return [np.asarray(a) for a in trainer._state] + [trainer._pool.rng.copy()]


@pytest.mark.parametrize("alternating", [True, False])
@pytest.mark.parametrize("scheme", sorted(CLASSES))
def test_any_thread_count_gives_the_same_bits(parallel_everywhere, scheme, alternating):
    game = cfrkit.compile_game(LeducPoker())
    runs = []
    for threads in (1, TWO, 1):
        trainer = CLASSES[scheme](game, seed=11, streams=5, samples=3, threads=threads,
                                  alternating=alternating, rule=cfrkit.RegretRule.linear())
        trainer.iterate(25)
        runs.append(trainer)
    for other in runs[1:]:
        for x, y in zip(_arrays(runs[0]), _arrays(other)):
            assert np.array_equal(x, y)
        assert other.nodes_touched == runs[0].nodes_touched
    # and a trainer whose thread count changes between calls
    switching = CLASSES[scheme](game, seed=11, streams=5, samples=3, threads=TWO,
                                alternating=alternating, rule=cfrkit.RegretRule.linear())
    switching.iterate(10)
    switching.threads = 1
    switching.iterate(15)
    for x, y in zip(_arrays(runs[0]), _arrays(switching)):
        assert np.array_equal(x, y)


@pytest.mark.parametrize("threads, rounds", [
    (1, None),  # one thread runs both workers, one after the other
    (TWO, 0),  # a worker stops waiting for a phase at once: the other carries the call
])
@pytest.mark.parametrize("scheme", sorted(CLASSES))
def test_rounds_wait_for_no_worker(parallel_everywhere, monkeypatch, scheme, threads, rounds):
    """A call's rounds run in one parallel loop of phases (passes, then merge) that waits for
    no worker holding no task: with the workers run in turn by one thread, or leaving as soon
    as they find nothing to take, the run has the bits of a run on one thread."""
    game = cfrkit.compile_game(LeducPoker())
    one = CLASSES[scheme](game, seed=5, streams=3, samples=2, threads=1).iterate(12)
    strain_phased_loops(monkeypatch, threads, rounds=rounds)
    two = CLASSES[scheme](game, seed=5, streams=3, samples=2, threads=TWO)
    assert finishes(lambda: two.iterate(12)), "the rounds' parallel loop hung"
    for x, y in zip(_arrays(one), _arrays(two)):
        assert np.array_equal(x, y)
    assert one.nodes_touched == two.nodes_touched


def test_each_worker_compiles_once_for_the_serial_and_the_parallel_kernels(parallel_everywhere):
    # a parallel loop's index is unsigned and a serial loop's signed: the workers are called
    # with one type, so numba compiles each once for both kernels (twice made a first
    # multi-threaded use 15-20 s longer). Checked where numba compiles them in this process,
    # as with CI's empty cache; a worker loaded from the cache lists no signature.
    from cfrkit._kernels import mccfr as kernels

    game = cfrkit.compile_game(KuhnPoker())
    workers = (kernels._rounds_worker, kernels._merge_worker)
    for scheme in sorted(CLASSES):  # a scheme is a constant of its kernels: one each
        before = [len(worker.signatures) for worker in workers]
        for threads in (1, TWO):
            CLASSES[scheme](game, seed=1, streams=2, samples=1, threads=threads).iterate(1)
        for worker, count in zip(workers, before):
            assert len(worker.signatures) - count <= 1, (scheme, worker.py_func.__name__)
    if not any(worker.signatures for worker in workers):
        pytest.skip("the kernels came from numba's cache: nothing was compiled to count")


def test_streams_change_the_run_and_one_stream_one_sample_is_the_plain_trainer():
    game = cfrkit.compile_game(KuhnPoker())
    plain = cfrkit.ExternalSamplingCFR(game, seed=4).iterate(50)
    explicit = cfrkit.ExternalSamplingCFR(game, seed=4, streams=1, samples=1, threads=2 if TWO == 2 else 1)
    explicit.iterate(50)
    assert np.array_equal(plain._state.strategy_sum, explicit._state.strategy_sum)
    batched = cfrkit.ExternalSamplingCFR(game, seed=4, samples=2).iterate(50)
    assert not np.array_equal(plain._state.strategy_sum, batched._state.strategy_sum)
    # a pass per sample: twice the nodes of the plain trainer's iterations, roughly
    assert 1.5 * plain.nodes_touched < batched.nodes_touched < 2.5 * plain.nodes_touched


@pytest.mark.parametrize("scheme", sorted(CLASSES))
def test_checkpoints_keep_every_stream(parallel_everywhere, scheme, tmp_path):
    game = cfrkit.compile_game(LeducPoker())
    straight = CLASSES[scheme](game, seed=9, streams=3, samples=2, threads=TWO).iterate(20)
    first = CLASSES[scheme](game, seed=9, streams=3, samples=2, threads=1).iterate(8)
    first.save(tmp_path / "run.npz")
    loaded = cfrkit.load_trainer(tmp_path / "run.npz", game, threads=TWO)
    assert (loaded.streams, loaded.samples, loaded.threads) == (3, 2, TWO)
    loaded.iterate(12)
    for x, y in zip(_arrays(straight), _arrays(loaded)):
        assert np.array_equal(x, y)


def test_streams_converge_on_kuhn():
    trainer = cfrkit.ExternalSamplingCFR(KuhnPoker(), seed=1, streams=2, samples=4)
    trainer.iterate(3000)
    assert cfrkit.exploitability(trainer.game, trainer.average_policy()) < 0.01


@pytest.mark.parametrize("name,bad", [
    ("streams", 0), ("streams", 1025), ("streams", 2.0), ("streams", True),
    ("samples", 0), ("samples", "3"), ("samples", 2**20 + 1),
])
def test_bad_shapes_are_refused_by_name(name, bad):
    with pytest.raises(ValueError, match=f"^{name} must be an integer from 1 to"):
        cfrkit.OutcomeSamplingCFR(KuhnPoker(), seed=1, **{name: bad})
    with pytest.raises(ValueError, match="^threads must be"):
        cfrkit.ExternalSamplingCFR(KuhnPoker(), seed=1, threads=0)


def test_the_command_line_takes_streams_and_samples(tmp_path, capsys):
    from cfrkit.cli import main

    out = tmp_path / "run.json"
    assert main(["solve", "kuhn", "--trainer", "external-sampling", "--streams", "2",
                 "--samples", "3", "--threads", "1", "--iterations", "40", "--seed", "5",
                 "--quiet", "--json", str(out), "--checkpoint", str(tmp_path / "c.npz")]) == 0
    expected = cfrkit.ExternalSamplingCFR(KuhnPoker(), seed=5, streams=2, samples=3).iterate(40)
    assert json.loads(out.read_text())["nash_conv"] == pytest.approx(
        cfrkit.nash_conv(expected.game, expected.average_policy()), abs=1e-15)
    assert main(["solve", "kuhn", "--trainer", "cfr+", "--streams", "2"]) == 2
    assert "--streams applies to chance-sampled, external-sampling, outcome-sampling, not cfr+" \
        in capsys.readouterr().err
    assert main(["solve", "kuhn", "--resume", str(tmp_path / "c.npz"), "--samples", "2"]) == 2
    assert "--samples does not apply with --resume" in capsys.readouterr().err
    assert main(["solve", "kuhn", "--trainer", "outcome-sampling", "--streams", "5000"]) == 2
    assert "--streams must be an integer from 1 to 1024" in capsys.readouterr().err


@pytest.mark.parametrize("alternating", [True, False])
@pytest.mark.parametrize("rule_name", ["vanilla", "cfr_plus"])
@pytest.mark.parametrize("game_name", ["kuhn3", "random3"])
def test_chance_streams_with_a_sample_per_player_match_the_oracle(game_name, rule_name,
                                                                   alternating):
    # a fresh set of samples for each player's round (the shared ones are covered above)
    game, rule = ORACLE_GAMES[game_name], RULES[rule_name]
    trainer = cfrkit.ChanceSampledCFR(game, seed=3, rule=rule, alternating=alternating,
                                      sample_per_player=True, streams=2, samples=2, threads=1)
    oracle = ReferenceMCCFR(game, trainer, chance=True, rule=OracleSchedule(rule),
                            alternating=alternating)
    trainer.iterate(5).iterate(7)
    oracle.iterate(12)
    assert_tables_close(table_of(trainer, "regrets"), oracle.regrets)
    assert_tables_close(table_of(trainer, "sums"), oracle.strategy_sum)


def test_chance_streams_share_the_samples_between_players_unless_asked_not_to():
    game = cfrkit.compile_game(KuhnPoker(players=3))
    shared = cfrkit.ChanceSampledCFR(game, seed=5, streams=2, samples=3, threads=1).iterate(4)
    fresh = cfrkit.ChanceSampledCFR(game, seed=5, streams=2, samples=3, threads=1,
                                    sample_per_player=True).iterate(4)
    # shared: each round replays the iteration's draws, so the streams end 4 rounds of draws
    # in; fresh: 4 iterations of 3 players' rounds
    draws = 3 * 2  # per stream and round: 3 samples of one chance node (the deal), whose alias
    # draw takes two numbers
    assert np.array_equal(shared._pool.rng, _advanced(stream_states(5, 2), 4 * draws))
    assert np.array_equal(fresh._pool.rng, _advanced(stream_states(5, 2), 12 * draws))
    assert not np.array_equal(shared._state.regret, fresh._state.regret)


def _advanced(states: np.ndarray, draws: int) -> np.ndarray:
    from cfrkit._kernels.random import next_uint64

    states = states.copy()
    for row in states:
        for _ in range(draws):
            next_uint64(row)
    return states


def test_chance_streams_refuse_a_predictive_rule_and_converge():
    with pytest.raises(ValueError, match="^ChanceSampledCFR takes a predictive rule only with"):
        cfrkit.ChanceSampledCFR(KuhnPoker(), seed=1, samples=2,
                                rule=cfrkit.RegretRule.predictive_plus())
    cfrkit.ChanceSampledCFR(KuhnPoker(), seed=1, rule=cfrkit.RegretRule.predictive_plus())
    trainer = cfrkit.ChanceSampledCFR(KuhnPoker(), seed=1, streams=2, samples=4,
                                      rule=cfrkit.RegretRule.linear())
    trainer.iterate(2000)
    assert cfrkit.exploitability(trainer.game, trainer.average_policy()) < 0.01


@pytest.mark.parametrize("per_player", [False, True])
def test_chance_stream_zero_draws_the_one_stream_trainers_samples(per_player):
    game = cfrkit.compile_game(LeducPoker())  # two chance nodes on a path: the deal, the board
    plain = cfrkit.ChanceSampledCFR(game, seed=8, sample_per_player=per_player).iterate(6)
    streams = cfrkit.ChanceSampledCFR(game, seed=8, sample_per_player=per_player, streams=3,
                                      threads=1).iterate(6)
    assert np.array_equal(streams._pool.rng[0], plain._state.rng)
    assert not np.array_equal(streams._pool.rng[1], plain._state.rng)
