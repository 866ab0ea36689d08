"""This checkout against an earlier git revision, side by side in one process.

The revision's ``src/cfrkit`` (``git archive``) and this checkout's (as it is on disk) are
copied into a temporary directory as two packages of other names (their imports are relative),
so both versions load the same way and run in the same process, alternately, under the same
machine load: for each game the same trainer's ``iterate(n)`` is timed in turn, several rounds,
and the table gives ns per node-visit (time / (iterations x nodes x players), the best run) and
the ratio this / revision (below 1: this checkout is faster). The kernels numba compiles first
in a process measured 6-10% faster than the same code compiled second (code placement), so
the comparison runs in two processes, each version compiled first in one of them, and the ratio
is the geometric mean of the two (both are printed). ``--rev HEAD`` on a clean checkout is the
control (ratio near 1). Only the public API is used, so any revision with the trainer works.
Measures; never asserts.

    python benchmarks/against_revision.py --rev 12cccd2          # VanillaCFR, built-in games
    python benchmarks/against_revision.py --rev HEAD~3 --trainer PrunedCFR --games leduc
    python benchmarks/against_revision.py --rev 12cccd2 --trainer ChanceSampledCFR --scale 100
"""

from __future__ import annotations

import argparse
import importlib
import io
import json
import shutil
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

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
    return _import(into, "cfrkit_at_revision")


def load_checkout(into: Path):
    """This checkout's ``src/cfrkit``, as it is on disk, as the package ``cfrkit_this``."""
    shutil.copytree(ROOT / "src" / "cfrkit", into / "cfrkit_this",
                    ignore=shutil.ignore_patterns("__pycache__"))
    return _import(into, "cfrkit_this")


def _import(folder: Path, name: str):
    if str(folder) not in sys.path:
        sys.path.insert(0, str(folder))
    return importlib.import_module(name)


def trainer(package, name: str, game_name: str, kwargs: dict):
    game = getattr(importlib.import_module(f"{package.__name__}.games"), game_name)(**kwargs)
    run = getattr(package, name)(game)
    run.iterate(2)  # compile (or load) the kernels outside the timing
    return run


def timed(run, n: int) -> float:
    start = time.perf_counter()
    run.iterate(n)
    return time.perf_counter() - start


def measure(args, first: str) -> dict[str, tuple[float, float]]:
    """Best ns per node-visit ``(this, revision)`` per game, in this process, with the kernels
    of ``first`` ("this" or "revision") compiled before the other's."""
    results = {}
    with tempfile.TemporaryDirectory() as tmp:
        old = load_revision(args.rev, Path(tmp))
        new = load_checkout(Path(tmp))
        for key in [g.strip() for g in args.games.split(",") if g.strip()]:
            game_name, kwargs, n = GAMES[key]
            n = max(1, int(n * args.scale))
            order = (new, old) if first == "this" else (old, new)
            built = [trainer(package, args.trainer, game_name, kwargs) for package in order]
            ours, theirs = built if first == "this" else built[::-1]
            times_ours, times_theirs = [], []
            for round_ in range(args.rounds):
                if round_ % 2:
                    times_ours.append(timed(ours, n))
                    times_theirs.append(timed(theirs, n))
                else:
                    times_theirs.append(timed(theirs, n))
                    times_ours.append(timed(ours, n))
            visits = n * ours.game.num_nodes * ours.game.num_players / 1e9
            results[key] = (min(times_ours) / visits, min(times_theirs) / visits)
    return results


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rev", required=True, help="the git revision to compare against")
    parser.add_argument("--trainer", default="VanillaCFR")
    parser.add_argument("--games", default=",".join(GAMES))
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--scale", type=float, default=1.0,
                        help="multiply each game's iterations per round (sampled trainers: 100)")
    parser.add_argument("--first", choices=("this", "revision"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.first:  # one of the two processes below: print its measurements as JSON
        print(json.dumps(measure(args, args.first)))
        return
    runs = {}
    for first in ("this", "revision"):
        out = subprocess.run(
            [sys.executable, __file__, *(argv if argv is not None else sys.argv[1:]),
             "--first", first],
            check=True, capture_output=True, text=True,
        ).stdout
        runs[first] = json.loads(out.strip().splitlines()[-1])
    print(f"{args.trainer}: this checkout against {args.rev}, {args.rounds} rounds per game in "
          "each of two processes (this compiled first, then the revision compiled first)")
    print()
    print(f"{'game':<7}{'revision ns/visit':>19}{'this ns/visit':>15}{'this / revision':>17}"
          f"{'per process':>16}")
    for key in runs["this"]:
        ratios = [runs[first][key][0] / runs[first][key][1] for first in ("this", "revision")]
        ours = min(runs[first][key][0] for first in runs)
        theirs = min(runs[first][key][1] for first in runs)
        print(f"{key:<7}{theirs:>19.2f}{ours:>15.2f}{statistics.geometric_mean(ratios):>17.3f}"
              f"{ratios[0]:>8.3f}{ratios[1]:>8.3f}")


if __name__ == "__main__":
    main()
