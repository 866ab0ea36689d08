"""A sweep on a local Ray of 1 and of 2 CPUs, next to the same runs in a plain loop.

The grid: Leduc hold'em x eight full-pass trainers (vanilla, CFR+, linear, DCFR with alpha 1,
1.5 and 2, DCFR+, PDCFR+), each for a fixed number of iterations, so every run does the same
work however it is scheduled. Printed, side by side in one process: the wall time of a plain
Python loop over the runs (``trainer.solve`` one after the other, kernels already loaded), of
``cfrkit.sweep(..., num_cpus=1)`` and of ``cfrkit.sweep(..., num_cpus=2)`` -- each sweep's
time includes starting and stopping its Ray instance and loading the kernels in its workers --
and the ratios. The workers run at the loop's priority (``RAY_worker_niceness=0``, where Ray's
default is 15). The final NashConv of every run is checked to be the same in all three.
Measures; never asserts a time.

    python benchmarks/sweep_scaling.py [--iterations 20000] [--repeats 3]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import tempfile
import time

import cfrkit
from cfrkit.cli import TRAINERS, parse_game

TRAINER_NAMES = ["vanilla", "cfr+", "linear", "dcfr", "dcfr+", "pdcfr+"]
PARAMS = {"dcfr": {"alpha": [1.0, 1.5, 2.0]}}


def loop(iterations: int) -> tuple[float, dict]:
    """The runs one after the other in this process: what a hand-written loop does."""
    game = cfrkit.compile_game(parse_game("leduc"))
    runs = [(name, {}) for name in TRAINER_NAMES if name != "dcfr"]
    runs += [("dcfr", {"alpha": a}) for a in PARAMS["dcfr"]["alpha"]]
    for name, params in runs:  # load every kernel first: the sweeps' workers pay it, not this
        TRAINERS[name](game, **params).solve(max_iterations=1)
    finals = {}
    start = time.perf_counter()
    for name, params in runs:
        record = TRAINERS[name](game, **params).solve(max_iterations=iterations)
        finals[name, params.get("alpha")] = float(record.nash_conv[-1])
    return time.perf_counter() - start, finals


def swept(iterations: int, cpus: int) -> tuple[float, dict, float]:
    with tempfile.TemporaryDirectory() as folder:
        start = time.perf_counter()
        table = cfrkit.sweep("leduc", TRAINER_NAMES, params=PARAMS, max_iterations=iterations,
                             num_cpus=cpus, output=os.path.join(folder, "runs"))
        wall = time.perf_counter() - start
    runs = table.filter(table["last"]).to_pylist()
    if any(run["status"] != "ok" for run in runs):
        raise RuntimeError([run["error"] for run in runs if run["status"] != "ok"])
    finals = {}
    for run in runs:
        alpha = json.loads(run["params"]).get("alpha")
        finals[run["trainer"], alpha] = run["final_nash_conv"]
    return wall, finals, sum(run["final_seconds"] for run in runs)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--iterations", type=int, default=20_000)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    os.environ.setdefault("CFRKIT_QUIET", "1")
    # Ray runs its workers at nice 15 (its default), so on a machine shared with other work
    # they would yield to it while the loop, at nice 0, would not: compare at equal priority
    os.environ.setdefault("RAY_worker_niceness", "0")
    with open("/proc/loadavg") as stream:
        print(f"load average before: {stream.read().split()[:3]}; CPUs: {os.cpu_count()}")
    print(f"Leduc, {len(TRAINER_NAMES) + 2} runs of {args.iterations} iterations each; "
          f"median of {args.repeats} repeats (wall seconds)")
    times: dict[str, list[float]] = {"loop": [], "sweep, 1 CPU": [], "sweep, 2 CPUs": []}
    run_seconds = []
    for _ in range(args.repeats):
        seconds, reference = loop(args.iterations)
        times["loop"].append(seconds)
        for label, cpus in (("sweep, 1 CPU", 1), ("sweep, 2 CPUs", 2)):
            seconds, finals, total = swept(args.iterations, cpus)
            if finals != reference:
                raise RuntimeError(f"{label}: other results than the loop: {finals} {reference}")
            times[label].append(seconds)
            run_seconds.append(total)
    base = statistics.median(times["loop"])
    for label, values in times.items():
        median = statistics.median(values)
        print(f"  {label:<15} {median:7.2f} s   loop / this = {base / median:.2f}   "
              f"(all: {', '.join(f'{v:.2f}' for v in values)})")
    print(f"  sum of the runs' own seconds in the sweeps: median {statistics.median(run_seconds):.2f} s")
    with open("/proc/loadavg") as stream:
        print(f"load average after: {stream.read().split()[:3]}")


if __name__ == "__main__":
    main()
