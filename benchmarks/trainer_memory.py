"""Memory per history of the compiled tree and of each trainer, on one game.

Each trainer is built in a fresh Python process on the compiled game, loaded from a
compiled-game cache that a process of its own fills first (a process that walked the game
itself would hand the trainer memory the walk freed, or leave it fragmented: the first trainer
measured 8 B per history on three-player Leduc where the others measured 37), and runs one
iteration; the resident memory it added, divided by the histories, is its *bytes per history*. The process
first runs the same trainer class on Kuhn poker, through the same kernels (serial or parallel),
so that loading numba's compiled kernels is not counted. Measures; never asserts.

    python benchmarks/trainer_memory.py                                  # leduc_poker(players=3)
    python benchmarks/trainer_memory.py --game openspiel:liars_dice
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile

PROBE = r"""
import json, resource, sys
import numpy as np
import cfrkit
from cfrkit import _threads
from cfrkit.cli import parse_game
from cfrkit.games import KuhnPoker

def rss():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * resource.getpagesize()

compiled = cfrkit.compile_game(parse_game(sys.argv[1], cache_dir=sys.argv[2]))
tree = sum(a.nbytes for a in compiled.tree if isinstance(a, np.ndarray))
name = sys.argv[3]
cls = getattr(cfrkit, name)
make = lambda game: cls(game, seed=0) if "Sampl" in name else cls(game)
# load the kernels first (from numba's cache, or compiling them): tens of MB that are the
# process's, not the trainer's. Kuhn takes the big game's kernels with the threshold at 0.
threshold = _threads.PARALLEL_MIN_NODES
if compiled.num_nodes >= threshold:
    _threads.PARALLEL_MIN_NODES = 0
make(KuhnPoker()).iterate(2)
_threads.PARALLEL_MIN_NODES = threshold
before = rss()
trainer = make(compiled)
trainer.iterate(1)
print(json.dumps({"nodes": compiled.num_nodes, "tree": tree, "trainer": rss() - before}))
"""

TRAINERS = ("VanillaCFR", "CFRPlus", "DCFRPlus", "PrunedCFR", "ChanceSampledCFR",
            "ExternalSamplingCFR", "OutcomeSamplingCFR")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--game", default="openspiel:leduc_poker(players=3)",
                        help="a game as the command line names it")
    parser.add_argument("--trainers", default=",".join(TRAINERS))
    args = parser.parse_args()
    env = dict(os.environ, CFRKIT_QUIET="1")
    with tempfile.TemporaryDirectory() as cache:
        fill = ("import sys, cfrkit; from cfrkit.cli import parse_game; "
                "cfrkit.compile_game(parse_game(sys.argv[1], cache_dir=sys.argv[2]))")
        subprocess.run([sys.executable, "-c", fill, args.game, cache], check=True, env=env)
        print(f"{'trainer':<22} {'histories':>11} {'tree B/history':>15} {'trainer B/history':>18}")
        for name in args.trainers.split(","):
            done = subprocess.run([sys.executable, "-c", PROBE, args.game, cache, name],
                                  capture_output=True, text=True, env=env)
            if done.returncode != 0:
                print(f"{name:<22} failed: {(done.stderr.strip().splitlines() or ['?'])[-1]}")
                continue
            r = json.loads(done.stdout)
            print(f"{name:<22} {r['nodes']:>11,} {r['tree'] / r['nodes']:>15.0f} "
                  f"{r['trainer'] / r['nodes']:>18.0f}")


if __name__ == "__main__":
    main()
