"""This checkout against an earlier git revision, side by side in one process.

The revision's ``src/cfrkit`` is exported with ``git archive`` into a temporary directory as a
package of another name (its imports are relative), so both versions run in the same process,
alternately, under the same machine load: for each game the same trainer's ``iterate(n)`` is
timed in turn, several rounds, and the table gives ns per node-visit (time / (iterations x nodes
x players)) and the ratio this / revision (below 1: this checkout is faster). Only the public
API is used, so any revision with the trainer works. Measures; never asserts.

    python benchmarks/against_revision.py --rev 12cccd2          # VanillaCFR, built-in games
    python benchmarks/against_revision.py --rev HEAD~3 --trainer PrunedCFR --games leduc
    python benchmarks/against_revision.py --rev 12cccd2 --trainer ChanceSampledCFR --scale 100
"""

from __future__ import annotations

import argparse
import importlib
import io
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

import cfrkit

ROOT = Path(__file__).resolve().parent.parent
GAMES = {
    "rps": ("RockPaperScissors", {}, 1_000_000),
    "kuhn2": ("KuhnPoker", {}, 200_000),
    "kuhn3": ("KuhnPoker", {"players": 3}, 10_000),
    "leduc": ("LeducPoker", {}, 1_000),
}


def load_revision(rev: str, into: Path):
    """``src/cfrkit`` at ``rev`` as the importable package ``cfrkit_at_revision``."""
    archive = subprocess.run(
        ["git", "-C", str(ROOT), "archive", rev, "src/cfrkit"],
        check=True, capture_output=True,
    ).stdout
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        tar.extractall(into, filter="data")
    (into / "src" / "cfrkit").rename(into / "cfrkit_at_revision")
    sys.path.insert(0, str(into))
    return importlib.import_module("cfrkit_at_revision")


def trainer(package, name: str, game_name: str, kwargs: dict):
    game = getattr(importlib.import_module(f"{package.__name__}.games"), game_name)(**kwargs)
    run = getattr(package, name)(game)
    run.iterate(2)  # compile (or load) the kernels outside the timing
    return run


def timed(run, n: int) -> float:
    start = time.perf_counter()
    run.iterate(n)
    return time.perf_counter() - start


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rev", required=True, help="the git revision to compare against")
    parser.add_argument("--trainer", default="VanillaCFR")
    parser.add_argument("--games", default=",".join(GAMES))
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--scale", type=float, default=1.0,
                        help="multiply each game's iterations per round (sampled trainers: 100)")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        old = load_revision(args.rev, Path(tmp))
        print(f"{args.trainer}: this checkout against {args.rev}, {args.rounds} alternating "
              "rounds per game (best and median)")
        print()
        print(f"{'game':<7}{'revision ns/visit':>19}{'this ns/visit':>15}{'this / revision':>17}"
              f"{'median ratio':>14}")
        for key in [g.strip() for g in args.games.split(",") if g.strip()]:
            game_name, kwargs, n = GAMES[key]
            n = max(1, int(n * args.scale))
            ours = trainer(cfrkit, args.trainer, game_name, kwargs)
            theirs = trainer(old, args.trainer, game_name, kwargs)
            visits = n * ours.game.num_nodes * ours.game.num_players / 1e9
            times_ours, times_theirs = [], []
            for _ in range(args.rounds):
                times_theirs.append(timed(theirs, n))
                times_ours.append(timed(ours, n))
            best_ours, best_theirs = min(times_ours) / visits, min(times_theirs) / visits
            median = statistics.median(a / b for a, b in zip(times_ours, times_theirs))
            print(f"{key:<7}{best_theirs:>19.2f}{best_ours:>15.2f}{best_ours / best_theirs:>17.3f}"
                  f"{median:>14.3f}")


if __name__ == "__main__":
    main()
