"""Threads: full-pass CFR and exact evaluation on 1 and 2 threads, side by side.

For each game and trainer (VanillaCFR, CFRPlus), three trainers advance in turn, each by
about ``--seconds`` of iterations per turn, repeated (medians of the repeats are printed):

* ``threads=1``: the serial kernel;
* ``threads=2``: what a user gets (the serial kernel below ``PARALLEL_MIN_NODES`` nodes,
  ``EVALUATION_MIN_NODES`` for NashConv);
* ``parallel, 2``: the parallel kernel forced on two threads, whatever the game's size -- how
  the threshold was chosen.

Then the time of one NashConv of the average policy, the same three ways. Speedups are
``threads=1`` time over the others'. The machine's load (``/proc/loadavg``) is printed before
and after: on a machine whose other processes keep a core busy, two threads wait on each other
and the figures mean little. Measures; never asserts.

    python benchmarks/threads.py                       # Kuhn 2p/3p, Leduc, liar's dice, Leduc 3p
    python benchmarks/threads.py --games kuhn_poker(players=5),liars_dice(dice_sides=5)
    python benchmarks/threads.py --seconds 0.2 --repeats 7
    python benchmarks/threads.py --cold liars_dice(dice_sides=5)   # first-use compile times
    python benchmarks/threads.py --games liars_dice --busy 1          # another process busy
    python benchmarks/threads.py --games chain                        # a deep, narrow game
    python benchmarks/threads.py --games liars_dice --wave-sizes 512,2048,8192   # fixed sizes

``--busy N`` keeps N other processes spinning for the whole run, to see what threads do on a
machine whose cores are not free. cfrkit sets ``OMP_WAIT_POLICY=PASSIVE`` unless it is set;
``OMP_WAIT_POLICY=ACTIVE python benchmarks/threads.py ...`` shows spinning threads instead.

``--cold GAME`` instead times, in fresh processes with an empty numba cache, the first
``VanillaCFR(game, threads=t).iterate(1)`` and the first ``nash_conv(..., threads=t)`` for
``t`` = 1 and 2 (GAME must have at least ``EVALUATION_MIN_NODES`` nodes for 2 to differ).

Games are cfrkit's built-ins (``kuhn``, ``kuhn3``, ``leduc``), ``chain`` (120,000 levels of one
action, then a choice: a best-response wave per level, the case
``_threads.parallel_wave_size`` is for) or OpenSpiel game strings (``pip install open_spiel``).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

import cfrkit
from cfrkit import _threads
from cfrkit.games import KuhnPoker, LeducPoker

DEFAULT_GAMES = "kuhn,kuhn3,leduc,liars_dice,leduc_poker(players=3)"


class Chain(cfrkit.Game):
    """``levels`` histories of one action each, the players alternating, then a choice between
    a win and a loss: a deep, narrow game."""

    num_players = 2

    def __init__(self, levels: int) -> None:
        self.levels = levels
        self.name = f"chain of {levels:,} levels"

    def root(self) -> cfrkit.History:
        return _Link(self.levels, 0)


class _Link(cfrkit.History):
    def __init__(self, levels: int, depth: int) -> None:
        self.levels, self.depth = levels, depth

    def is_terminal(self) -> bool:
        return self.depth > self.levels

    def is_chance(self) -> bool:
        return False

    def current_player(self) -> int:
        return self.depth % 2

    def actions(self) -> tuple:
        return ("win", "lose") if self.depth == self.levels else ("on",)

    def chance_outcomes(self) -> tuple:
        return ()

    def child(self, action) -> cfrkit.History:
        return _Link(self.levels, self.depth + (1 if action != "lose" else 2))

    def infoset_key(self) -> str:
        return str(self.depth)

    def utilities(self) -> tuple:
        won = self.depth == self.levels + 1
        return (1.0, -1.0) if won else (-1.0, 1.0)


BUILTIN = {"kuhn": KuhnPoker, "kuhn3": lambda: KuhnPoker(players=3), "leduc": LeducPoker,
           "chain": lambda: Chain(120_000)}


def load(name: str) -> cfrkit.CompiledGame:
    if name in BUILTIN:
        return cfrkit.compile_game(BUILTIN[name](), progress=False)
    from cfrkit.openspiel import from_openspiel

    os.environ["CFRKIT_QUIET"] = "1"  # no compile progress bar: the table is the output
    return cfrkit.compile_game(from_openspiel(name))


def forced(call):
    """``call()`` with the parallel kernels used on any game."""
    saved = _threads.PARALLEL_MIN_NODES, _threads.EVALUATION_MIN_NODES
    _threads.PARALLEL_MIN_NODES = _threads.EVALUATION_MIN_NODES = 0
    try:
        return call()
    finally:
        _threads.PARALLEL_MIN_NODES, _threads.EVALUATION_MIN_NODES = saved


def timed(call) -> float:
    start = time.perf_counter()
    call()
    return time.perf_counter() - start


def batch_size(trainer, seconds: float) -> int:
    """Iterations per turn so that one turn takes about ``seconds``."""
    n = 1
    while True:
        elapsed = timed(lambda: trainer.iterate(n))
        if elapsed >= seconds / 4 or n >= 1 << 20:
            return max(1, int(n * seconds / max(elapsed, 1e-9)))
        n *= 4


def measure(compiled, cls, seconds: float, repeats: int) -> list[float]:
    """Seconds per iteration: threads=1, threads=2, parallel kernel on 2."""
    runs = [
        (cls(compiled, threads=1), False),
        (cls(compiled, threads=2), False),
        (cls(compiled, threads=2), True),
    ]
    for trainer, force in runs:  # compile (or load) the kernels, warm the caches
        (forced if force else (lambda c: c()))(lambda: trainer.iterate(1))
    # each its own batch: the forced parallel kernel can take 400x a small game's serial pass
    sizes = [(forced if force else (lambda c: c()))(lambda t=trainer: batch_size(t, seconds))
             for trainer, force in runs]
    times = [[] for _ in runs]
    for _ in range(repeats):
        for k, ((trainer, force), n) in enumerate(zip(runs, sizes)):
            call = (lambda t=trainer, n=n: t.iterate(n))
            times[k].append(timed((lambda: forced(call)) if force else call) / n)
    return [statistics.median(t) for t in times]


def measure_nash_conv(compiled, policy, repeats: int) -> list[float]:
    variants = [
        lambda: cfrkit.nash_conv(compiled, policy, threads=1),
        lambda: cfrkit.nash_conv(compiled, policy, threads=2),
        lambda: forced(lambda: cfrkit.nash_conv(compiled, policy, threads=2)),
    ]
    for call in variants:
        call()
    inner = [max(1, int(0.05 / max(timed(call), 1e-9))) for call in variants]
    times = [[] for _ in variants]
    for _ in range(repeats):
        for k, (call, n) in enumerate(zip(variants, inner)):
            times[k].append(timed(lambda: [call() for _ in range(n)]) / n)
    return [statistics.median(t) for t in times]


def measure_wave_sizes(compiled, policy, sizes, seconds: float, repeats: int) -> list[float]:
    """Seconds per NashConv on one thread, then on two with each fixed best-response wave size
    (``_threads.MIN_PARALLEL_WAVE``): turns of about ``seconds`` of calls, interleaved."""
    variants = [(1, None)] + [(2, size) for size in sizes]
    times = [[] for _ in variants]
    saved = _threads.MIN_PARALLEL_WAVE
    try:
        for _ in range(repeats):
            for k, (threads, size) in enumerate(variants):
                _threads.MIN_PARALLEL_WAVE = size
                calls, start = 0, time.perf_counter()
                while time.perf_counter() - start < seconds:
                    cfrkit.nash_conv(compiled, policy, threads=threads)
                    calls += 1
                times[k].append((time.perf_counter() - start) / calls)
    finally:
        _threads.MIN_PARALLEL_WAVE = saved
    return [statistics.median(t) for t in times]


def row(name, compiled, what, one, two, par) -> None:
    print(f"{name:<26}{compiled.num_nodes:>10,}  {what:<11}{one * 1e3:>10.4g}{two * 1e3:>10.4g}"
          f"{one / two:>8.2f}{par * 1e3:>11.4g}{one / par:>8.2f}", flush=True)


def load_average() -> str:
    try:
        with open("/proc/loadavg") as stream:
            return " ".join(stream.read().split()[:3])
    except OSError:
        return "n/a"


COLD_PROBE = r"""
import json, sys, time
sys.path.insert(0, BENCHMARKS)
from threads import load
import cfrkit
compiled = load(GAME)
start = time.perf_counter()
trainer = cfrkit.VanillaCFR(compiled, threads=THREADS).iterate(1)
trained = time.perf_counter()
cfrkit.nash_conv(compiled, trainer.average_policy(), threads=THREADS)
done = time.perf_counter()
print(json.dumps([trained - start, done - trained]))
"""


def cold(game: str, repeats: int) -> None:
    print(f"first use in a fresh process with an empty numba cache, {game}: seconds, median of "
          f"{repeats}")
    print(f"{'threads':>8}{'first iterate(1)':>18}{'first nash_conv':>17}")
    for threads in (1, 2):
        runs = []
        for _ in range(repeats):
            with tempfile.TemporaryDirectory() as cache:
                code = (COLD_PROBE.replace("BENCHMARKS", repr(os.path.dirname(__file__)))
                        .replace("GAME", repr(game)).replace("THREADS", str(threads)))
                out = subprocess.run([sys.executable, "-c", code], check=True, text=True,
                                     capture_output=True,
                                     env=dict(os.environ, NUMBA_CACHE_DIR=cache, CFRKIT_QUIET="1"))
                runs.append(json.loads(out.stdout.strip().splitlines()[-1]))
        print(f"{threads:>8}{statistics.median(r[0] for r in runs):>18.2f}"
              f"{statistics.median(r[1] for r in runs):>17.2f}", flush=True)
    print(f"load average after: {load_average()}")


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", default=DEFAULT_GAMES,
                        help=f"comma-separated (default {DEFAULT_GAMES})")
    parser.add_argument("--seconds", type=float, default=0.3, help="time per turn (default 0.3)")
    parser.add_argument("--repeats", type=int, default=5, help="turns per trainer (default 5)")
    parser.add_argument("--cold", metavar="GAME", help="time first-use compilation instead")
    parser.add_argument("--wave-sizes", metavar="N,N,...",
                        help="also NashConv with these fixed best-response wave sizes (rows "
                             "'wave N': one thread, then two)")
    parser.add_argument("--busy", type=int, default=0,
                        help="other processes to keep spinning meanwhile (default 0)")
    args = parser.parse_args(argv)
    if args.cold:
        cold(args.cold, args.repeats)
        return
    with spinning(args.busy):
        run(args)


@contextlib.contextmanager
def spinning(count: int):
    """``count`` other Python processes kept spinning on the cores while the block runs."""
    spinners = [subprocess.Popen([sys.executable, "-c", "while True: pass"])
                for _ in range(count)]
    try:
        yield
    finally:
        for spinner in spinners:
            spinner.kill()
            spinner.wait()


def run(args) -> None:
    import numba

    print(f"numba {numba.__version__}, threading layer: ", end="")
    forced(lambda: cfrkit.nash_conv(load("kuhn"), cfrkit.Policy.uniform(load("kuhn")),
                                    threads=2))  # starts the thread pool
    print(f"{numba.threading_layer()}, NUMBA_NUM_THREADS={numba.config.NUMBA_NUM_THREADS}, "
          f"PARALLEL_MIN_NODES={_threads.PARALLEL_MIN_NODES:,}, "
          f"EVALUATION_MIN_NODES={_threads.EVALUATION_MIN_NODES:,}, "
          f"OMP_WAIT_POLICY={os.environ.get('OMP_WAIT_POLICY')}")
    print(f"an empty parallel loop on 2 threads: {_threads.parallel_loop_seconds(2) * 1e6:.1f} us"
          f", so best-response waves run in parallel from {_threads.parallel_wave_size(2):,} "
          f"units ({_threads.UNIT_SECONDS * 1e9:g} ns a unit)")
    print(f"load average before: {load_average()}; {args.busy} spinning processes")
    print(f"medians of {args.repeats} interleaved turns; ms per iteration (per NashConv)")
    print()
    header = (f"{'game':<26}{'nodes':>10}  {'what':<11}{'threads=1':>10}{'threads=2':>10}"
              f"{'speedup':>8}{'parallel,2':>11}{'speedup':>8}")
    print(header)
    for name in [g.strip() for g in args.games.split(",") if g.strip()]:
        compiled = load(name)
        policy = None
        for cls in (cfrkit.VanillaCFR, cfrkit.CFRPlus):
            one, two, par = measure(compiled, cls, args.seconds, args.repeats)
            row(name, compiled, cls.__name__, one, two, par)
            if policy is None:
                policy = cls(compiled, threads=1).iterate(10).average_policy()
        one, two, par = measure_nash_conv(compiled, policy, args.repeats)
        row(name, compiled, "NashConv", one, two, par)
        if args.wave_sizes:
            sizes = [int(size) for size in args.wave_sizes.split(",")]
            one, *fixed = measure_wave_sizes(compiled, policy, sizes, args.seconds, args.repeats)
            for size, two in zip(sizes, fixed):
                print(f"{'':<36}{'wave ' + format(size, ','):<11}{one * 1e3:>10.4g}"
                      f"{two * 1e3:>10.4g}{one / two:>8.2f}", flush=True)
    print()
    print(f"load average after: {load_average()}")


if __name__ == "__main__":
    main()
