"""OpenMP's wait policy against cfrkit's default, each setting in processes of its own.

``benchmarks/threads.py`` times one and two threads in turns within one process; this script
runs each (wait policy, thread count) in a fresh Python process that makes only those calls:
``VanillaCFR(game, threads=k)`` iterations and ``cfrkit.nash_conv(..., threads=k)``, medians of
``--repeats`` timed batches after a warm-up. The policies: cfrkit's default (it sets
``OMP_WAIT_POLICY=PASSIVE`` before numba starts OpenMP unless you set it), ``ACTIVE`` (idle
threads spin), and libgomp's own default (``OMP_WAIT_POLICY`` set empty: spin a while, then
sleep; with ``--spin-counts``, also a row for each ``GOMP_SPINCOUNT``, how long that while
is). ``--busy N`` keeps N other processes spinning meanwhile. The processes run one after the
other, so the machine's drift between them shows in the figures: compare them with that in
mind. Measures; never asserts.

    python benchmarks/wait_policy.py                      # liar's dice
    python benchmarks/wait_policy.py --busy 1
    python benchmarks/wait_policy.py --spin-counts 10000,100000
    python benchmarks/wait_policy.py --game "leduc_poker(players=3)" --iterations 20
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys

from threads import load_average, spinning

PROBE = r"""
import json, statistics, sys, time
import cfrkit
from cfrkit.openspiel import from_openspiel

game = from_openspiel(sys.argv[1])
threads, iterations, repeats = int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
trainer = cfrkit.VanillaCFR(game, threads=threads)
trainer.iterate(iterations)  # loads the kernels, starts the threads
passes = []
for _ in range(repeats):
    start = time.perf_counter()
    trainer.iterate(iterations)
    passes.append((time.perf_counter() - start) / iterations)
policy = trainer.average_policy()
cfrkit.nash_conv(game, policy, threads=threads)
checks = []
for _ in range(repeats):
    start = time.perf_counter()
    cfrkit.nash_conv(game, policy, threads=threads)
    checks.append(time.perf_counter() - start)
print(json.dumps([statistics.median(passes), statistics.median(checks)]))
"""

POLICIES = [("cfrkit's default (PASSIVE)", None, None), ("ACTIVE", "ACTIVE", None),
            ("libgomp's default", "", None)]


def probe(game: str, threads: int, policy: str | None, spin_count: str | None,
          args) -> list[float]:
    env = dict(os.environ, CFRKIT_QUIET="1")
    for name, value in (("OMP_WAIT_POLICY", policy), ("GOMP_SPINCOUNT", spin_count)):
        env.pop(name, None)
        if value is not None:
            env[name] = value
    out = subprocess.run([sys.executable, "-c", PROBE, game, str(threads), str(args.iterations),
                          str(args.repeats)], check=True, text=True, capture_output=True, env=env)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--game", default="liars_dice", help="an OpenSpiel game name")
    parser.add_argument("--iterations", type=int, default=100, help="iterations per batch")
    parser.add_argument("--repeats", type=int, default=7, help="timed batches per process")
    parser.add_argument("--busy", type=int, default=0,
                        help="other processes to keep spinning meanwhile (default 0)")
    parser.add_argument("--spin-counts", metavar="N,N,...", default="",
                        help="also libgomp's default with these GOMP_SPINCOUNT values")
    args = parser.parse_args(argv)
    settings = POLICIES + [(f"GOMP_SPINCOUNT={n}", "", n.strip())
                           for n in args.spin_counts.split(",") if n.strip()]
    with spinning(args.busy):
        print(f"{args.game}: VanillaCFR ms per iteration and NashConv ms, each setting in a "
              f"process of its own; {args.busy} spinning processes; load average before: "
              f"{load_average()}")
        print(f"{'wait policy':<28}{'1 thread':>10}{'2 threads':>10}{'speedup':>9}"
              f"{'NashConv 1':>12}{'NashConv 2':>12}{'speedup':>9}")
        for label, policy, spin_count in settings:
            (pass1, check1), (pass2, check2) = (probe(args.game, k, policy, spin_count, args)
                                                for k in (1, 2))
            print(f"{label:<28}{pass1 * 1e3:>10.3f}{pass2 * 1e3:>10.3f}{pass1 / pass2:>8.2f}x"
                  f"{check1 * 1e3:>12.3f}{check2 * 1e3:>12.3f}{check1 / check2:>8.2f}x",
                  flush=True)
        print(f"load average after: {load_average()}")


if __name__ == "__main__":
    main()
