"""Ctrl-C during iterate or solve: honoured quickly, counters and arrays agree, the trainer goes
on; kernels release the GIL."""

from __future__ import annotations

import os
import signal
import threading
import time

import numpy as np
import pytest

import cfrkit
from cfrkit._kernels import best_response, drivers, update
from cfrkit.games import KuhnPoker, LeducPoker

pytestmark = pytest.mark.skipif(not hasattr(signal, "pthread_kill"), reason="POSIX signals")


def interrupt_after(seconds: float) -> list[float]:
    """Send this process SIGINT after ``seconds``; the list gets the time it was sent."""
    sent: list[float] = []

    def fire():
        time.sleep(seconds)
        sent.append(time.perf_counter())
        os.kill(os.getpid(), signal.SIGINT)

    threading.Thread(target=fire, daemon=True).start()
    return sent


def assert_consistent(trainer, make) -> None:
    """The arrays hold exactly ``trainer.iteration`` iterations (a fresh run says so)."""
    fresh = make().iterate(trainer.iteration)
    for name, a, b in zip(trainer._state._fields, trainer._state, fresh._state):
        np.testing.assert_array_equal(a, b, err_msg=name)
    assert trainer.nodes_touched == fresh.nodes_touched


@pytest.mark.parametrize("make", [lambda: cfrkit.VanillaCFR(LeducPoker()),
                                  lambda: cfrkit.ChanceSampledCFR(KuhnPoker(players=3), seed=1)],
                         ids=["vanilla_leduc", "sampled_kuhn3"])
def test_ctrl_c_during_iterate(make):
    trainer = make().iterate(1)  # compile first: the signal then lands in training
    handler = signal.getsignal(signal.SIGINT)
    sent = interrupt_after(0.3)
    with pytest.raises(KeyboardInterrupt):
        trainer.iterate(10**12)
    honoured = time.perf_counter()
    assert sent and honoured - sent[0] < 1.0
    assert 1 < trainer.iteration < 10**12
    assert signal.getsignal(signal.SIGINT) is handler  # the user's handler is back
    assert_consistent(trainer, make)
    # and it keeps working
    before = trainer.iteration
    trainer.iterate(5)
    assert trainer.iteration == before + 5
    assert_consistent(trainer, make)


def test_ctrl_c_during_solve():
    trainer = cfrkit.VanillaCFR(LeducPoker()).iterate(1)
    # solve's checks need the evaluation kernels: load (or, with an empty numba cache, compile)
    # them first, so that the second below times the answer to Ctrl-C, not a compilation
    cfrkit.nash_conv(trainer.game, trainer.average_policy())
    sent = interrupt_after(0.5)
    with pytest.raises(KeyboardInterrupt):
        trainer.solve(target_nash_conv=1e-9, progress=False)
    assert time.perf_counter() - sent[0] < 1.0
    assert_consistent(trainer, lambda: cfrkit.VanillaCFR(LeducPoker()))


def test_kernels_release_the_gil():
    for kernel in (drivers.run_full, drivers.run_pruned, drivers.run_chance_sampled,
                   update.synced_regrets, best_response.expected_values,
                   best_response.best_response_order, best_response.best_response_value):
        assert kernel.targetoptions.get("nogil") is True, kernel.__name__


def test_another_thread_runs_while_a_kernel_works():
    # a pure-Python counter next to a kernel call of about half a second: with the GIL held
    # it would barely move (it fell from millions to tens of thousands of steps per second)
    trainer = cfrkit.VanillaCFR(LeducPoker()).iterate(1)
    counts, stop = [0], threading.Event()

    def count():
        while not stop.is_set():
            counts[0] += 1

    alone = threading.Thread(target=count)
    alone.start()
    time.sleep(0.3)
    stop.set()
    alone.join()
    idle_rate = counts[0] / 0.3
    counts[0] = 0
    stop.clear()
    beside = threading.Thread(target=count)
    beside.start()
    start = time.perf_counter()
    trainer.iterate(5000)
    busy = time.perf_counter() - start
    stop.set()
    beside.join()
    assert counts[0] / busy > 0.1 * idle_rate


def test_a_trainer_in_another_thread_does_not_take_the_main_threads_ctrl_c():
    # a worker inside its own critical stretch while the main thread runs outside one: the
    # signal is the main thread's at once (it was deferred, then raised in the worker)
    from cfrkit import _interrupt

    inside, leave, raised_in_worker = threading.Event(), threading.Event(), []

    def worker():
        try:
            with _interrupt.critical():
                inside.set()
                leave.wait(5)
        except KeyboardInterrupt:
            raised_in_worker.append(True)

    with _interrupt.interruptible():
        thread = threading.Thread(target=worker)
        thread.start()
        assert inside.wait(5)
        try:
            with pytest.raises(KeyboardInterrupt):
                signal.getsignal(signal.SIGINT)(signal.SIGINT, None)  # as the signal would
        finally:
            leave.set()
            thread.join()
    assert not raised_in_worker


def test_two_threads_iterating_one_trainer_take_turns_by_blocks():
    # each block whole: 2 x 300 iterations from two threads are 600 iterations, bit for bit
    # (the kernels wrote over each other's buffers: NashConv 0.049 instead of 0.0003)
    make = lambda: cfrkit.VanillaCFR(LeducPoker())  # noqa: E731
    trainer = make().iterate(1)
    threads = [threading.Thread(target=trainer.iterate, args=(300,)) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert trainer.iteration == 601
    assert_consistent(trainer, make)


def test_readers_wait_for_the_running_block():
    # a block holds the lock; a reader in another thread waits for it (an average policy read
    # halfway through a block had rows that did not sum to 1)
    trainer = cfrkit.VanillaCFR(KuhnPoker()).iterate(10)
    got = []
    with trainer._blocks.lock:  # as a running block holds it
        reader = threading.Thread(target=lambda: got.append(trainer.average_policy()))
        reader.start()
        reader.join(0.3)
        assert reader.is_alive() and not got
    reader.join(5)
    assert got and np.array_equal(got[0].table, trainer.average_policy().table)


def test_blocks_grow_to_the_target_in_a_few_calls_and_halve_past_twice_it(monkeypatch):
    # a fake clock: a call costs 20 us of its own and 1 us per iteration
    from cfrkit import _interrupt

    now = [0.0]
    monkeypatch.setattr(_interrupt.time, "perf_counter", lambda: now[0])
    counts: list[int] = []

    def step(count: int) -> None:
        counts.append(count)
        now[0] += 20e-6 + count * 1e-6

    blocks = _interrupt.Blocks(seconds=0.01)
    blocks.run(100_000, step)
    assert sum(counts) == 100_000
    # 21 us: 5 ms is 2^7.9 times that, so 2^7 times the block; 148 us: 2^5 more; 4.1 ms:
    # doubled; 8.2 ms: kept (doubling alone would have taken 13 calls to get there)
    assert counts[:4] == [1, 128, 4096, 8192]
    assert set(counts[4:-1]) == {8192}

    # a call over twice the target halves the block
    counts.clear()
    monkeypatch.setattr(blocks, "seconds", 0.001)
    blocks.run(20_000, step)
    assert counts[:2] == [8192, 4096]


def test_each_kernel_is_warmed_up_and_announced_once_per_process(monkeypatch):
    # a trainer's first iterate() makes an empty first call of its kernel under the compile
    # notice; a later trainer of the same kernel skips both (the notice starts a thread)
    import contextlib

    from cfrkit import _notice

    announced: list[str] = []

    @contextlib.contextmanager
    def recording(what):
        announced.append(what)
        yield

    monkeypatch.setattr(_notice, "_called", set())
    monkeypatch.setattr(_notice, "compile_notice", recording)
    game = cfrkit.compile_game(KuhnPoker())
    cfrkit.CFRPlus(game).iterate(3)
    cfrkit.DCFRPlus(game).iterate(3)  # the same full-pass kernel
    cfrkit.PrunedCFR(game).iterate(3)
    cfrkit.PrunedCFR(game).iterate(3)
    cfrkit.FictitiousPlay(game).iterate(3)
    cfrkit.FictitiousPlay(game).iterate(3)
    assert announced == [
        "the CFRPlus kernels", "the PrunedCFR kernels", "the FictitiousPlay kernel",
    ]


def test_ctrl_c_while_compiling_waits_for_the_end_or_a_second_one(capsys):
    # numba's compiler can lose a KeyboardInterrupt raised inside it, or be left half done:
    # the first Ctrl-C is said and delivered when the compilation ends, a second one at once
    from cfrkit._interrupt import critical, interruptible
    from cfrkit._notice import compile_notice

    went_on = []
    with pytest.raises(KeyboardInterrupt):
        with compile_notice("the test kernels"):
            signal.raise_signal(signal.SIGINT)  # the handler runs before the next line
            went_on.append("after the first")
    assert went_on == ["after the first"]
    assert capsys.readouterr().err == ("cfrkit: Ctrl-C: stopping once the kernels are compiled "
                                       "(press it again to stop at once)\n")
    with pytest.raises(KeyboardInterrupt):
        with compile_notice("the test kernels"):
            signal.raise_signal(signal.SIGINT)
            went_on.append("after the first, again")
            signal.raise_signal(signal.SIGINT)
            went_on.append("after the second")
    assert went_on[1:] == ["after the first, again"]
    assert capsys.readouterr().err.count("stopping once the kernels are compiled") == 1
    # nothing left pending: the next stretch runs to its end, and a plain one stays silent
    with interruptible(), critical():
        went_on.append("a stretch")
    assert went_on[-1] == "a stretch"
    with pytest.raises(KeyboardInterrupt):
        with interruptible(), critical():
            signal.raise_signal(signal.SIGINT)
            went_on.append("in a plain stretch")
    assert went_on[-1] == "in a plain stretch"
    assert "Ctrl-C" not in capsys.readouterr().err
