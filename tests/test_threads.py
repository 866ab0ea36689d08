"""Threads: the parallel kernels give the serial kernels' results bit for bit.

The games here are small, so the parallel kernels are forced on them by lowering the node
threshold (``_threads.PARALLEL_MIN_NODES``, and ``_threads.MIN_PARALLEL_WAVE`` for the best
response's waves), and the split level of the parallel layout
(``statics.SPLIT_MIN_NODES``) is varied so that the top, the tasks and the infoset chunks all
get exercised. Results are compared exactly (``np.array_equal``); the issue's tolerance, 1e-12
on NashConv, is a weaker statement that these comparisons imply.
"""

from __future__ import annotations

import os
import threading
import time

import numba
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings

import cfrkit
from cfrkit import _threads, statics
from cfrkit._kernels.drivers import run_full
from cfrkit._kernels.parallel import run_full_parallel
from cfrkit.games import KuhnPoker
from cfrkit.rules import kernel_schedule
from conftest import LEDUC, RANDOM_GAMES, finishes, strain_phased_loops
from random_games import random_games
from spec_game import D, SpecGame, T

TWO = min(2, numba.config.NUMBA_NUM_THREADS)
TRAINERS = {
    "vanilla": cfrkit.VanillaCFR,
    "cfr_plus": cfrkit.CFRPlus,
    "dcfr": cfrkit.DiscountedCFR,
    "pdcfr_plus": cfrkit.PDCFRPlus,
}
GAMES = {"leduc": LEDUC, "kuhn3": KuhnPoker(players=3), **RANDOM_GAMES}


def fresh(game) -> cfrkit.CompiledGame:
    """The compiled game without a parallel layout cached from another split setting."""
    compiled = cfrkit.compile_game(game)
    compiled._cache.pop("parallel_layout", None)
    return compiled


@pytest.fixture
def parallel_everywhere(monkeypatch):
    """Every game runs the parallel kernels when given more than one thread."""
    monkeypatch.setattr(_threads, "PARALLEL_MIN_NODES", 0)
    monkeypatch.setattr(_threads, "EVALUATION_MIN_NODES", 0)
    monkeypatch.setattr(_threads, "MIN_PARALLEL_WAVE", 0)


def state_arrays(trainer) -> list[np.ndarray]:
    return [np.asarray(array) for array in trainer._state]


def assert_same_run(a, b) -> None:
    for name, x, y in zip(type(a._state)._fields, state_arrays(a), state_arrays(b)):
        assert np.array_equal(x, y), name
    assert a.iteration == b.iteration and a.nodes_touched == b.nodes_touched


@pytest.mark.parametrize("split", [1, 8, 10**9])
@pytest.mark.parametrize("name", list(TRAINERS))
@pytest.mark.parametrize("game_name", list(GAMES))
def test_two_threads_same_as_one(parallel_everywhere, monkeypatch, game_name, name, split):
    """100 iterations on two threads (the parallel kernel) and on one (the serial kernel): the
    same regrets, strategy sums and strategies, so the same NashConv."""
    monkeypatch.setattr(statics, "SPLIT_MIN_NODES", split)
    compiled = fresh(GAMES[game_name])
    one = TRAINERS[name](compiled, threads=1).iterate(100)
    two = TRAINERS[name](compiled, threads=TWO).iterate(100)
    assert_same_run(one, two)
    nash_one = cfrkit.nash_conv(compiled, one.average_policy(), threads=1)
    nash_two = cfrkit.nash_conv(compiled, two.average_policy(), threads=TWO)
    assert abs(nash_one - nash_two) <= 1e-12
    assert nash_one == nash_two
    assert nash_one < cfrkit.nash_conv(compiled, cfrkit.Policy.uniform(compiled))  # it learned


@pytest.mark.parametrize("alternating", [True, False])
def test_simultaneous_and_fixed(parallel_everywhere, alternating):
    """Simultaneous updates (slot sums at pass time) and locked infosets, on the parallel
    kernel."""
    compiled = fresh(RANDOM_GAMES["random3"])
    key = compiled.infoset_keys[0]
    row = [1.0] + [0.0] * (len(compiled.infoset_actions[0]) - 1)
    fixed = {key: row}
    rule = cfrkit.RegretRule(floor=True, alpha=1.5, gamma=2.0)
    one = cfrkit.CFR(compiled, rule=rule, alternating=alternating, fixed=fixed, threads=1)
    two = cfrkit.CFR(compiled, rule=rule, alternating=alternating, fixed=fixed, threads=TWO)
    assert_same_run(one.iterate(60), two.iterate(60))
    assert list(two.average_policy().to_dict()[key].values()) == row


def test_parallel_kernel_on_one_thread(parallel_everywhere):
    """The parallel kernel itself on one thread, called directly: the serial kernel's bits."""
    compiled = fresh(LEDUC)
    a = cfrkit.CFRPlus(compiled, threads=1)
    b = cfrkit.CFRPlus(compiled, threads=1)
    schedule = kernel_schedule(a.rule, 1, 50)
    run_full(compiled.tree, a._state, a._scratch, schedule, True, 0.0, False)
    previous = numba.get_num_threads()
    numba.set_num_threads(1)
    try:
        run_full_parallel(compiled.tree, statics.parallel_layout(compiled),
                          _threads.workers(1), b._state, b._scratch, schedule, True, 0.0,
                          False)
    finally:
        numba.set_num_threads(previous)
    for x, y in zip(state_arrays(a), state_arrays(b)):
        assert np.array_equal(x, y)


@pytest.mark.parametrize("threads, workers, rounds", [
    (1, 3, None),  # one thread runs the three workers one after the other
    (TWO, 3, None),  # a thread runs two workers in turn
    (TWO, TWO, 1),  # a worker stops waiting for a phase at once: the others carry the call
    (TWO, TWO, 0),
])
def test_phased_loops_wait_for_no_worker(parallel_everywhere, monkeypatch, threads, workers,
                                         rounds):
    """The phased parallel loops (full passes, best responses) wait for no worker that holds
    no task: with more workers than threads, run in turn (as OpenMP within another parallel
    region, or TBB, may run them), or with workers that stop waiting for a phase at once, they
    finish with the serial kernels' bits. A loop that waited for every worker at each phase
    would hang here."""
    strain_phased_loops(monkeypatch, threads, workers, rounds)
    compiled = fresh(RANDOM_GAMES["random3"])
    rule = cfrkit.RegretRule(floor=True, alpha=1.5, gamma=2.0, predictive=True)
    results = {}

    def run():
        for alternating in (True, False):
            for count in (1, TWO):
                trainer = cfrkit.CFR(compiled, rule=rule, alternating=alternating,
                                     threads=count).iterate(40)
                policy = trainer.average_policy()
                responses = [cfrkit.best_response(compiled, policy, p, threads=count)
                             for p in range(compiled.num_players)]
                results[alternating, count] = (trainer, responses)

    assert finishes(run), "a phased loop hung"
    for alternating in (True, False):
        (one, serial), (two, parallel) = results[alternating, 1], results[alternating, TWO]
        assert_same_run(one, two)
        for a, b in zip(serial, parallel):
            assert a.value == b.value and a.policy == b.policy


def test_threads_change_between_calls(parallel_everywhere):
    """``threads`` is a runtime choice: switching kernels midway continues the same run."""
    compiled = fresh(LEDUC)
    straight = cfrkit.VanillaCFR(compiled, threads=1).iterate(60)
    switched = cfrkit.VanillaCFR(compiled, threads=1).iterate(25)
    switched.threads = TWO
    switched.iterate(20)
    switched.threads = None
    switched.iterate(15)
    assert switched.threads is None
    assert_same_run(straight, switched)


@pytest.mark.parametrize("make", [
    lambda game: cfrkit.CFRPlus(game, threads=1),
    lambda game: cfrkit.ExternalSamplingCFR(game, seed=0, streams=2, threads=1),
])
def test_threads_wait_for_the_block_under_way(make):
    """A pass in another thread reads the thread count and the per-thread buffers the setter
    replaces (a sampled trainer's streams): set in the middle of a block, a pass on two
    threads used buffers for one and wrote past them. The setter waits for the block."""
    trainer = make(KuhnPoker())
    in_block, release = threading.Event(), threading.Event()

    def block():
        with trainer._blocks.lock:  # what a block of iterate() holds
            in_block.set()
            release.wait(10)

    holder = threading.Thread(target=block)
    holder.start()
    in_block.wait(10)
    setter = threading.Thread(target=setattr, args=(trainer, "threads", TWO))
    setter.start()
    setter.join(0.3)
    assert setter.is_alive() and trainer.threads == 1  # waiting for the block
    release.set()
    setter.join(10)
    holder.join(10)
    assert trainer.threads == TWO


def test_a_threads_setter_stopped_halfway_leaves_a_consistent_trainer(parallel_everywhere):
    """Ctrl-C can land between the setter's replacing a sampled trainer's per-thread buffers
    and its storing the setting: the passes must follow the buffers, not the setting (with
    a count of two, buffers for one)."""
    straight = cfrkit.ExternalSamplingCFR(KuhnPoker(), seed=3, streams=2, threads=1).iterate(30)
    stopped = cfrkit.ExternalSamplingCFR(KuhnPoker(), seed=3, streams=2, threads=TWO).iterate(10)
    stopped._use_threads(1)  # what the setter does before it stores threads=1
    workers = stopped._pool.merged_count.shape[0]
    assert stopped._kernel(np.zeros((1, 1))).threads == workers == 1  # not threads=TWO's count
    stopped.iterate(20)  # two workers' passes on buffers for one wrote past them
    assert stopped.threads == TWO
    assert_same_run(straight, stopped)


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(game=random_games(max_nodes=400))
def test_random_games(game):
    """Any random game, any split: the parallel kernel's run and evaluation are the serial
    ones."""
    saved = (_threads.PARALLEL_MIN_NODES, _threads.EVALUATION_MIN_NODES,
             _threads.MIN_PARALLEL_WAVE, statics.SPLIT_MIN_NODES)
    _threads.PARALLEL_MIN_NODES, _threads.EVALUATION_MIN_NODES = 0, 0
    _threads.MIN_PARALLEL_WAVE = game.seed % 8  # some waves in parallel, some on one thread
    statics.SPLIT_MIN_NODES = 1 + game.seed % 16
    try:
        compiled = fresh(game)
        one = cfrkit.CFRPlus(compiled, threads=1).iterate(20)
        two = cfrkit.CFRPlus(compiled, threads=TWO).iterate(20)
        assert_same_run(one, two)
        policy = one.average_policy()
        a = cfrkit.evaluate(compiled, policy, threads=1)
        b = cfrkit.evaluate(compiled, policy, threads=TWO)
        assert np.array_equal(a.best_response_values, b.best_response_values)
        assert np.array_equal(a.values, b.values)
    finally:
        (_threads.PARALLEL_MIN_NODES, _threads.EVALUATION_MIN_NODES,
         _threads.MIN_PARALLEL_WAVE, statics.SPLIT_MIN_NODES) = saved
        cfrkit.compile_game(game)._cache.pop("parallel_layout", None)


@pytest.mark.parametrize("min_wave", [0, 40, 10**9])
@pytest.mark.parametrize("game_name", ["leduc", "kuhn3", "random3"])
def test_evaluation_same_on_two_threads(parallel_everywhere, monkeypatch, game_name, min_wave):
    """Every evaluation function, on one thread and on two: equal results (the best response's
    waves all in parallel, the small ones on the calling thread, all on it)."""
    monkeypatch.setattr(_threads, "MIN_PARALLEL_WAVE", min_wave)
    compiled = fresh(GAMES[game_name])
    rng = np.random.default_rng(5)
    table = rng.random(compiled.tree.num_action_slots) + 0.01
    policy = cfrkit.Policy(compiled, table / np.repeat(
        np.add.reduceat(table, compiled.tree.infoset_first_slot),
        compiled.tree.infoset_num_actions))
    assert np.array_equal(cfrkit.expected_values(compiled, policy, threads=1),
                          cfrkit.expected_values(compiled, policy, threads=TWO))
    for player in range(compiled.num_players):
        a = cfrkit.best_response(compiled, policy, player, threads=1)
        b = cfrkit.best_response(compiled, policy, player, threads=TWO)
        assert a == b
        assert np.array_equal(a.as_policy().table, b.as_policy().table)
    a = cfrkit.evaluate(compiled, policy, threads=1)
    b = cfrkit.evaluate(compiled, policy, threads=TWO)
    for field in ("player_improvements", "values", "best_response_values"):
        assert np.array_equal(getattr(a, field), getattr(b, field))
    assert a.nash_conv == b.nash_conv == cfrkit.nash_conv(compiled, policy, threads=TWO)
    assert a.nash_conv > 0.0
    if compiled.num_players == 2 and compiled.zero_sum:
        assert (cfrkit.exploitability(compiled, policy, threads=TWO)
                == cfrkit.exploitability(compiled, policy, threads=1))


DEPTH = 3_000


def chain() -> SpecGame:
    """A deep, narrow game: 3,000 levels of one action, then a choice (a wave per level)."""
    node = D(DEPTH % 2, str(DEPTH), ("a", T(1.0, -1.0)), ("b", T(-2.0, 2.0)))
    for depth in range(DEPTH - 1, -1, -1):
        node = D(depth % 2, str(depth), ("a", node))
    return SpecGame(node, name="chain")


@pytest.mark.parametrize("min_wave", [0, None])
def test_a_deep_narrow_game(monkeypatch, min_wave):
    """A wave per level: every wave in parallel, or (the measured size, at least 512) all of
    them in one call on one thread."""
    monkeypatch.setattr(_threads, "EVALUATION_MIN_NODES", 0)
    monkeypatch.setattr(_threads, "MIN_PARALLEL_WAVE", min_wave)
    compiled = cfrkit.compile_game(chain())
    _, wave_start = cfrkit.evaluation._response_waves(compiled, 0)
    assert len(wave_start) - 1 > DEPTH and np.diff(wave_start).max() < 512
    policy = cfrkit.Policy.uniform(compiled)
    # player 0 gains 1.5 by taking "a" (1 instead of the uniform mix's -0.5); player 1 nothing
    assert cfrkit.nash_conv(compiled, policy, threads=TWO) == 1.5
    assert cfrkit.best_response(compiled, policy, 0, threads=TWO).policy[str(DEPTH)] == "a"


def test_wave_size_is_the_loop_cost_in_units(monkeypatch):
    """The measured wave size: the median time of an empty parallel loop over
    ``UNIT_SECONDS``, within the bounds, measured once per thread count; a set
    ``MIN_PARALLEL_WAVE`` wins."""
    monkeypatch.setattr(_threads, "_loop_seconds", {})
    calls = []

    def slow_start(counter):  # a loop that takes 2 ms, but 40 ms once (not the median)
        calls.append(int(counter[1]))
        time.sleep(0.04 if len(calls) == 3 else 0.002)

    monkeypatch.setattr(_threads, "start_workers", slow_start)
    monkeypatch.setattr(_threads, "UNIT_SECONDS", 1e-6)
    size = _threads.parallel_wave_size(TWO)
    assert 2_000 <= size < 10_000  # 2 ms in microsecond units (the sleep may overrun)
    assert calls == [TWO] * (1 + _threads._LAUNCHES)  # a first call, then the timed ones
    assert _threads.parallel_wave_size(TWO) == size  # timed once: no more calls
    monkeypatch.setattr(_threads, "UNIT_SECONDS", 1.0)  # the loop costs less than a unit
    assert _threads.parallel_wave_size(TWO) == _threads.WAVE_SIZE_BOUNDS[0]
    monkeypatch.setattr(_threads, "UNIT_SECONDS", 1e-12)
    assert _threads.parallel_wave_size(TWO) == _threads.WAVE_SIZE_BOUNDS[1]
    assert len(calls) == 1 + _threads._LAUNCHES
    monkeypatch.setattr(_threads, "MIN_PARALLEL_WAVE", 7)
    assert _threads.parallel_wave_size(TWO) == 7


def test_loop_timed_on_the_real_kernel(monkeypatch):
    """The real empty loop runs (a positive time, well under a second) and the calling
    thread's thread count is restored after it."""
    monkeypatch.setattr(_threads, "_loop_seconds", {})
    before = numba.get_num_threads()
    assert 0.0 < _threads.parallel_loop_seconds(TWO) < 0.5
    assert numba.get_num_threads() == before


def test_concurrent_trainers(parallel_everywhere):
    """Two Python threads running parallel kernels at once (OpenMP and TBB allow it; under
    numba's workqueue layer cfrkit serialises them): both runs are the serial run."""
    compiled = fresh(LEDUC)
    reference = cfrkit.CFRPlus(compiled, threads=1).iterate(40)
    trainers = [cfrkit.CFRPlus(compiled, threads=TWO) for _ in range(2)]
    workers = [threading.Thread(target=t.iterate, args=(40,)) for t in trainers]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    for trainer in trainers:
        assert_same_run(reference, trainer)


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")
def test_forked_child(parallel_everywhere):
    """A child forked after the parallel kernels ran (GNU OpenMP does not survive a fork, and
    numba kills a child that uses it) runs the serial kernel: the same numbers, no crash."""
    compiled = fresh(LEDUC)
    parent = cfrkit.CFRPlus(compiled, threads=TWO).iterate(20)
    expected = parent.average_policy().table.tobytes()
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: report and leave without running the parent's cleanup
        code = 1
        try:
            child = cfrkit.CFRPlus(compiled, threads=TWO).iterate(20)
            os.write(write, b"same" if child.average_policy().table.tobytes() == expected
                     else b"different")
            code = 0
        finally:
            os._exit(code)
    os.close(write)
    with os.fdopen(read, "rb") as stream:
        answer = stream.read()
    _, status = os.waitpid(pid, 0)
    assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0, status
    assert answer == b"same"


def test_thread_setting_restored(parallel_everywhere):
    """numba's per-thread setting is put back after each call."""
    compiled = fresh(LEDUC)
    before = numba.get_num_threads()
    cfrkit.VanillaCFR(compiled, threads=1 if before > 1 else TWO).iterate(3)
    cfrkit.nash_conv(compiled, cfrkit.Policy.uniform(compiled), threads=TWO)
    assert numba.get_num_threads() == before


BAD_THREADS = [0, -1, 1.5, True, "2", numba.config.NUMBA_NUM_THREADS + 1]


@pytest.mark.parametrize("threads", BAD_THREADS)
def test_bad_threads_refused(threads, tmp_path):
    compiled = cfrkit.compile_game(KuhnPoker())
    policy = cfrkit.Policy.uniform(compiled)
    calls = [
        lambda: cfrkit.VanillaCFR(compiled, threads=threads),
        lambda: cfrkit.CFR(compiled, threads=threads),
        lambda: cfrkit.DiscountedCFR(compiled, threads=threads),
        lambda: cfrkit.evaluate(compiled, policy, threads=threads),
        lambda: cfrkit.nash_conv(compiled, policy, threads=threads),
        lambda: cfrkit.exploitability(compiled, policy, threads=threads),
        lambda: cfrkit.expected_values(compiled, policy, threads=threads),
        lambda: cfrkit.best_response(compiled, policy, 0, threads=threads),
    ]
    for call in calls:
        with pytest.raises(ValueError, match="threads must be an integer from 1 to"):
            call()
    trainer = cfrkit.CFRPlus(compiled, threads=1)
    with pytest.raises(ValueError, match="threads must be"):
        trainer.threads = threads
    assert trainer.threads == 1
    path = tmp_path / "t.npz"
    trainer.iterate(2).save(path)
    with pytest.raises(ValueError, match="threads must be"):
        cfrkit.load_trainer(path, compiled, threads=threads)


def test_load_trainer_threads(parallel_everywhere, tmp_path):
    """Checkpoints do not keep ``threads`` (results do not depend on it); load_trainer takes it
    for every trainer (a pruned one's evaluations use it) and refuses it for the result-table
    learner, which has no evaluations."""
    compiled = fresh(LEDUC)
    path = tmp_path / "cfr.npz"
    cfrkit.CFRPlus(compiled, threads=TWO).iterate(10).save(path)
    loaded = cfrkit.load_trainer(path, compiled, threads=TWO)
    assert loaded.threads == TWO
    assert cfrkit.load_trainer(path, compiled).threads is None
    straight = cfrkit.CFRPlus(compiled, threads=1).iterate(20)
    assert_same_run(straight, loaded.iterate(10))
    pruned = tmp_path / "pruned.npz"
    cfrkit.PrunedCFR(compiled).iterate(2).save(pruned)
    assert cfrkit.load_trainer(pruned, compiled, threads=1).threads == 1
    assert cfrkit.load_trainer(pruned, compiled).iteration == 2
    learner = tmp_path / "learner.npz"
    cfrkit.ResultTableLearner(compiled, seed=0).iterate(2).save(learner)
    with pytest.raises(ValueError, match="a ResultTableLearner runs on one core"):
        cfrkit.load_trainer(learner, compiled, threads=1)
    with pytest.raises(ValueError, match="^rule applies to the CFR trainers; a ResultTableLear"):
        cfrkit.load_trainer(learner, compiled, rule=cfrkit.RegretRule())  # not ignored


def test_pruned_threads_set_its_evaluations_and_not_its_pass(monkeypatch):
    """PrunedCFR's ``threads`` reaches solve()'s NashConv checks (a sweep gives each run the
    cores Ray reserved for it); its queued pass stays serial, with the same iterates."""
    compiled = fresh(LEDUC)
    seen = []
    real = cfrkit.trainers.base.evaluate
    monkeypatch.setattr(cfrkit.trainers.base, "evaluate",
                        lambda *a, **k: seen.append(k.get("threads")) or real(*a, **k))
    one = cfrkit.PrunedCFR(compiled, threads=1)
    record = one.solve(max_iterations=4)
    assert seen and set(seen) == {1}
    assert one.threads == 1 and record.iterations[-1] == 4
    both = cfrkit.PrunedCFR(compiled, threads=TWO).iterate(4)
    np.testing.assert_array_equal(both._state.regret, one._state.regret)
    call = both._kernel(kernel_schedule(both.rule, 5, 1))
    assert call.kernel is cfrkit._kernels.drivers.run_pruned and call.threads == 1
    with pytest.raises(ValueError, match="threads must be an integer from 1"):
        cfrkit.PrunedCFR(compiled, threads=0)


def test_serial_below_threshold(monkeypatch):
    """Games under PARALLEL_MIN_NODES nodes, and one thread, run the serial kernel."""
    kuhn = cfrkit.compile_game(KuhnPoker())
    assert kuhn.num_nodes < _threads.PARALLEL_MIN_NODES
    assert _threads.parallel_threads(kuhn.num_nodes, 2) == 1
    assert _threads.parallel_threads(_threads.PARALLEL_MIN_NODES, 1) == 1
    assert _threads.parallel_threads(_threads.PARALLEL_MIN_NODES, 2) == 2
    assert (_threads.parallel_threads(_threads.PARALLEL_MIN_NODES, None)
            == numba.config.NUMBA_NUM_THREADS)
    between = _threads.EVALUATION_MIN_NODES - 1
    assert _threads.PARALLEL_MIN_NODES <= between  # passes parallel, evaluation not
    assert _threads.parallel_threads(between, 2) == 2
    assert _threads.parallel_threads(between, 2, evaluation=True) == 1
    assert _threads.parallel_threads(_threads.EVALUATION_MIN_NODES, 2, evaluation=True) == 2

    def refuse(*args):
        raise AssertionError("the parallel kernel ran on a small game")

    from cfrkit.trainers import full

    monkeypatch.setattr(full, "run_full_parallel", refuse)
    monkeypatch.setattr(cfrkit.evaluation._parallel, "best_response_value_parallel", refuse)
    trainer = cfrkit.VanillaCFR(kuhn, threads=TWO).iterate(5)
    cfrkit.nash_conv(kuhn, trainer.average_policy(), threads=TWO)
    trainer.solve(max_iterations=5)


def test_parallel_layout_tiles_the_levels(monkeypatch):
    """The tasks' ranges tile every level from the split down, each task holding whole
    subtrees: the ranges of one row are the children of the row above."""
    for split in (1, 8, 10**9):
        monkeypatch.setattr(statics, "SPLIT_MIN_NODES", split)
        compiled = fresh(LEDUC)
        tree = compiled.tree
        layout = statics.parallel_layout(compiled)
        bound = layout.task_bound
        levels = statics._levels(tree)
        first_row = next(k for k, (lo, hi) in enumerate(levels) if lo == bound[0, 0])
        assert layout.top_forward_end == bound[0, 0]
        for r in range(bound.shape[0]):
            lo, hi = levels[first_row + r]
            assert bound[r, 0] == lo and bound[r, -1] == hi
            assert np.all(np.diff(bound[r]) >= 0)
            if r:
                parents = tree.node_parent[bound[r, 0]:bound[r, -1]]
                task_of_node = np.searchsorted(bound[r - 1], parents, side="right") - 1
                task_of_child = np.searchsorted(bound[r], np.arange(lo, hi), side="right") - 1
                assert np.array_equal(task_of_node, task_of_child)
        chunks = layout.infoset_chunks
        for p in range(tree.num_players):
            first, end = tree.player_infoset_start[p : p + 2]
            assert chunks[p, 0] == first and chunks[p, -1] == end
            assert np.all(np.diff(chunks[p]) >= 0)
