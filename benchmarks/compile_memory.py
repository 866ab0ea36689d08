"""Peak memory and time of compiling a game, per node.

Each game is compiled in a fresh Python process: the peak resident memory the compilation
added (``ru_maxrss`` after it, minus the resident memory just before it), divided by the
number of nodes, is the *peak bytes per node* -- what decides how big a game fits in memory.
The compiled tree's own arrays (what stays after the walk) are printed next to it.
Measures; never asserts.

    python benchmarks/compile_memory.py                  # Kuhn 5 and 6 players, OpenSpiel games
    python benchmarks/compile_memory.py --games kuhn6
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys

PROBE = r"""
import json, resource, sys, time
import numpy as np
import cfrkit
NAME = sys.argv[1]
if NAME.startswith("kuhn"):
    from cfrkit.games import KuhnPoker
    game = KuhnPoker(players=int(NAME[4:]))
elif NAME == "leduc":
    from cfrkit.games import LeducPoker
    game = LeducPoker()
else:
    import pyspiel
    from cfrkit.openspiel import OpenSpielGame
    game = OpenSpielGame(pyspiel.load_game(NAME))  # the wrapper, not yet compiled

def rss() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * resource.getpagesize()

before = rss()
start = time.perf_counter()
compiled = cfrkit.compile_game(game, progress=False)
seconds = time.perf_counter() - start
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # Linux: KiB
tree_bytes = sum(a.nbytes for a in compiled.tree if isinstance(a, np.ndarray))
print(json.dumps({"nodes": compiled.num_nodes, "seconds": seconds,
                  "peak": peak - before, "tree": tree_bytes}))
"""

GAMES = ("kuhn5", "kuhn6", "leduc_poker", "liars_dice")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", default=",".join(GAMES),
                        help="comma-separated: kuhnN (N players), leduc, or an OpenSpiel name")
    args = parser.parse_args()
    env = dict(os.environ, CFRKIT_QUIET="1")
    print(f"{'game':<14} {'nodes':>10} {'seconds':>8} {'peak MB':>8} {'peak B/node':>11} "
          f"{'tree B/node':>11}")
    for name in args.games.split(","):
        done = subprocess.run([sys.executable, "-c", PROBE, name], capture_output=True,
                              text=True, env=env)
        if done.returncode != 0:
            last = (done.stderr.strip().splitlines() or ["failed"])[-1]
            print(f"{name:<14} skipped: {last}")
            continue
        r = json.loads(done.stdout)
        print(f"{name:<14} {r['nodes']:>10,} {r['seconds']:>8.2f} {r['peak'] / 1e6:>8.0f} "
              f"{r['peak'] / r['nodes']:>11.0f} {r['tree'] / r['nodes']:>11.0f}")


if __name__ == "__main__":
    main()
