"""Cold start: a fresh process, an empty numba cache, until the first iteration has run.

For each trainer, a new Python process with ``NUMBA_CACHE_DIR`` pointed at an empty directory
times ``import cfrkit``, compiling the game, and the trainer's first ``iterate(1)``, numba's
compilation included -- what a new user waits for the first time. A second process with the
cache now filled shows what every later run pays (cache load instead of compilation).
Measures; never asserts.

    python benchmarks/cold_start.py                     # every trainer on Kuhn poker
    python benchmarks/cold_start.py --trainers CFRPlus --repeats 5
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

PROBE = r"""
import json, time
start = time.perf_counter()
import cfrkit
from cfrkit.games import KuhnPoker
imported = time.perf_counter()
game = cfrkit.compile_game(KuhnPoker())
compiled = time.perf_counter()
name = NAME
kwargs = {"seed": 0} if name == "ChanceSampledCFR" else {}
getattr(cfrkit, name)(game, **kwargs).iterate(1)
done = time.perf_counter()
print(json.dumps([imported - start, compiled - imported, done - compiled, done - start]))
"""

TRAINERS = ("VanillaCFR", "CFRPlus", "DiscountedCFR", "PDCFRPlus", "PrunedCFR", "ChanceSampledCFR")


def probe(name: str, cache_dir: str) -> list[float]:
    env = dict(os.environ, NUMBA_CACHE_DIR=cache_dir)
    code = PROBE.replace("NAME", repr(name))
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trainers", default=",".join(TRAINERS))
    parser.add_argument("--repeats", type=int, default=3, help="cold runs per trainer (median)")
    args = parser.parse_args(argv)
    print("seconds, median of", args.repeats, "cold runs (empty numba cache each) and 1 warm run")
    print()
    print(f"{'trainer':18s} {'import':>7s} {'compile game':>13s} {'first iterate':>14s} "
          f"{'total cold':>11s} {'total warm':>11s}")
    for name in [t.strip() for t in args.trainers.split(",") if t.strip()]:
        cold = []
        for _ in range(args.repeats):
            with tempfile.TemporaryDirectory() as cache:
                cold.append(probe(name, cache))
        with tempfile.TemporaryDirectory() as cache:
            probe(name, cache)
            warm = probe(name, cache)
        median = [statistics.median(run[i] for run in cold) for i in range(4)]
        print(f"{name:18s} {median[0]:7.2f} {median[1]:13.3f} {median[2]:14.2f} "
              f"{median[3]:11.2f} {warm[3]:11.2f}")


if __name__ == "__main__":
    main()
