"""Sampling with streams (external, outcome, chance): passes per second, and time to a target.

``ExternalSamplingCFR``, ``OutcomeSamplingCFR`` and ``ChanceSampledCFR`` take ``streams=k,
samples=b``: each player's pass of an iteration becomes ``k * b`` passes (``b`` on each of
``k`` independent random streams), whose estimates are averaged before one update; the
streams run on ``threads``.
This benchmark puts, side by side in one process and under the same load,

* ``plain``: ``streams=1, samples=1`` (one pass, one update), one thread;
* ``1 x b``: one stream of ``b`` passes per update, one thread (batching alone);
* ``k x b``: ``k`` streams of ``b`` passes, on ``k`` threads (at most the machine's).

Part 1, throughput: the trainers advance in turn, ``--seconds`` each, ``--repeats`` times;
the median microseconds per pass and the speed-up over ``plain`` are printed. Passes are
counted per player, here and in part 2: an iteration is ``k * b`` passes of *each* player, so
one "pass" of these figures is the work of a pass of every player (two passes' work on liar's
dice, three on three-player Leduc).

Part 2, time to target: each configuration runs ``solve(target_nash_conv=...)`` for
``--seeds`` seeds, interleaved; the median *training* seconds until the check that met the
target is printed (the evaluations, the same work for every configuration, are left out), with
the median passes (samples) it took -- averaging ``k * b`` passes per update changes how many
a run needs. A run that misses the target within ``--time-limit`` counts as infinitely long
in the median.

The machine's load (``/proc/loadavg``) is printed before and after. Measures; never asserts.

    python benchmarks/streams.py                                   # liar's dice and Leduc 3p
    python benchmarks/streams.py --games liars_dice --shapes 1x128,2x128,2x512 --seeds 5
    python benchmarks/streams.py --skip-target                     # throughput only
    python benchmarks/streams.py --games liars_dice --schemes external --target 0.01

Games are OpenSpiel game strings (``pip install open_spiel``), compiled once through a cache in
``--cache-dir``.
"""

from __future__ import annotations

import argparse
import math
import os
import statistics
import time

import numba

import cfrkit
from cfrkit.openspiel import from_openspiel
from threads import load_average

# per game and scheme, a target the plain trainer meets in seconds on one core
TARGETS = {
    ("liars_dice", "external"): 0.02,
    ("liars_dice", "outcome"): 0.25,
    ("leduc_poker(players=3)", "external"): 0.6,
    ("leduc_poker(players=3)", "outcome"): 1.5,
    ("liars_dice", "chance"): 0.03,
}
SCHEMES = {"external": cfrkit.ExternalSamplingCFR, "outcome": cfrkit.OutcomeSamplingCFR,
           "chance": cfrkit.ChanceSampledCFR}


def shapes_of(text: str) -> list[tuple[int, int]]:
    return [tuple(int(v) for v in item.split("x")) for item in text.split(",")]


def configurations(shapes: list[tuple[int, int]]) -> list[tuple[int, int, int]]:
    """(streams, samples, threads): the plain trainer first, then each shape on as many
    threads as it has streams (at most numba's)."""
    cores = numba.config.NUMBA_NUM_THREADS
    return [(1, 1, 1)] + [(k, b, min(k, cores)) for k, b in shapes]


def label(config: tuple[int, int, int]) -> str:
    k, b, t = config
    return "plain" if (k, b) == (1, 1) else f"{k} x {b}, {t} thread{'s' if t > 1 else ''}"


def throughput(compiled, cls, configs, seconds: float, repeats: int) -> dict:
    trainers = {c: cls(compiled, seed=1, streams=c[0], samples=c[1], threads=c[2]).iterate(1)
                for c in configs}
    times: dict = {c: [] for c in configs}
    for _ in range(repeats):
        for c, trainer in trainers.items():
            passes = c[0] * c[1]
            start = time.perf_counter()
            trainer.iterate(1)
            once = time.perf_counter() - start
            n = max(1, int(seconds / max(once, 1e-7)))
            start = time.perf_counter()
            trainer.iterate(n)
            times[c].append((time.perf_counter() - start) / (n * passes) * 1e6)
    return {c: statistics.median(v) for c, v in times.items()}


def time_to_target(compiled, cls, configs, target: float, seeds: int, limit: float) -> dict:
    runs: dict = {c: [] for c in configs}
    for seed in range(seeds):
        for c in configs:
            trainer = cls(compiled, seed=seed, streams=c[0], samples=c[1], threads=c[2])
            record = trainer.solve(target_nash_conv=target, time_limit=limit)
            if record.stopped == "target":
                passes = int(record.iterations[-1]) * c[0] * c[1]
                runs[c].append((float(record.training_seconds[-1]), passes))
            else:
                runs[c].append(None)
    return runs


def median_run(runs: list) -> tuple[float, float]:
    """The median (seconds, passes) over all seeds, a missed run counting as infinite."""
    def median_of(values):
        return statistics.median(sorted(values))
    seconds = median_of(math.inf if r is None else r[0] for r in runs)
    passes = median_of(math.inf if r is None else r[1] for r in runs)
    return seconds, passes


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", default="liars_dice,leduc_poker(players=3)")
    parser.add_argument("--schemes", default="external,outcome",
                        help="comma-separated: external, outcome, chance")
    parser.add_argument("--shapes", default="1x128,2x32,2x128,2x512",
                        help="streams x samples, comma-separated")
    parser.add_argument("--seconds", type=float, default=0.3, help="per turn (throughput)")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--time-limit", type=float, default=120.0, help="per run (target)")
    parser.add_argument("--target", type=float, default=None,
                        help="NashConv target for every game and scheme (default: per game)")
    parser.add_argument("--skip-target", action="store_true")
    parser.add_argument("--cache-dir", default=os.path.join(os.path.expanduser("~"), ".cache",
                                                            "cfrkit-benchmarks"))
    args = parser.parse_args()
    os.environ["CFRKIT_QUIET"] = "1"
    configs = configurations(shapes_of(args.shapes))
    print(f"load average before: {load_average()}; numba threads: "
          f"{numba.config.NUMBA_NUM_THREADS}")
    for name in args.games.split(";" if ";" in args.games else ","):
        compiled = cfrkit.compile_game(from_openspiel(name, cache_dir=args.cache_dir))
        for scheme in args.schemes.split(","):
            cls = SCHEMES[scheme]
            print(f"\n{name}, {cls.__name__} ({compiled.num_nodes:,} histories)")
            speed = throughput(compiled, cls, configs, args.seconds, args.repeats)
            base = speed[configs[0]]
            print(f"  {'configuration':<22} {'us/pass':>8} {'speed-up':>9}")
            for c in configs:
                print(f"  {label(c):<22} {speed[c]:8.2f} {base / speed[c]:8.2f}x")
            if args.skip_target:
                continue
            target = args.target if args.target is not None else TARGETS.get((name, scheme))
            if target is None:
                continue
            runs = time_to_target(compiled, cls, configs, target, args.seeds, args.time_limit)
            print(f"  time to NashConv {target} (median of {args.seeds} seeds; training "
                  "seconds, passes):")
            # a missed run counts as infinitely long: the median is of every seed, not of
            # the lucky ones
            medians = {c: median_run(runs[c]) for c in configs}
            base_seconds = medians[configs[0]][0]
            for c in configs:
                seconds, passes = medians[c]
                missed = sum(r is None for r in runs[c])
                note = f"  ({missed} of {len(runs[c])} missed)" if missed else ""
                if math.isinf(seconds):
                    print(f"  {label(c):<22} {'> limit':>9} {'-':>7} {'-':>12}{note}")
                    continue
                ratio = "-" if math.isinf(base_seconds) else f"{base_seconds / seconds:.2f}x"
                print(f"  {label(c):<22} {seconds:7.2f} s {ratio:>7} {passes:>12,.0f} passes"
                      f"{note}")
    print(f"\nload average after: {load_average()}")


if __name__ == "__main__":
    main()
