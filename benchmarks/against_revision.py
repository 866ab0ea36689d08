"""This checkout against an earlier git revision, timed alternately under the same load.

The revision's ``src/cfrkit`` (``git archive``) and this checkout's (as it is on disk) are
copied into a temporary directory as two packages of other names (their imports are relative),
and each is loaded by a worker process of its own. For each game both workers build the same
trainer, and the parent has them run ``iterate(n)`` in turn, several rounds, one at a time, so
both versions meet the same machine load; the table gives ns per node-visit (time /
(iterations x nodes x players), the best round) and the ratio this / revision (below 1: this
checkout is faster). ``--rev HEAD`` on a clean checkout is the control (ratio near 1). Only the
public API is used, so any revision with the trainer works.

One process per version matters: numba keys its cache of argument types by a fingerprint that
names a NamedTuple's class and fields but not its module, so in a process holding both
versions, the version whose kernels ran second had every kernel call typed again in Python
(about 1-2 ms a call with cfrkit's bundles, 10-20% of a trainer's 10 ms blocks).

``--trainer nash_conv`` times ``cfrkit.nash_conv`` instead, of ``VanillaCFR``'s average policy
after 10 iterations (one call per "iteration", so its ns/visit is per node and player of a
call). The games ``liars_dice`` and ``leduc3`` (three-player Leduc) are OpenSpiel's, through
each version's ``from_openspiel``. Measures; never asserts.

    python benchmarks/against_revision.py --rev 12cccd2          # VanillaCFR, built-in games
    python benchmarks/against_revision.py --rev HEAD~3 --trainer PrunedCFR --games leduc
    python benchmarks/against_revision.py --rev 12cccd2 --trainer ChanceSampledCFR --scale 100
    python benchmarks/against_revision.py --rev 2398492 --trainer nash_conv --games kuhn3,liars_dice,leduc3
"""

from __future__ import annotations

import argparse
import importlib
import io
import json
import shutil
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
    # OpenSpiel's (needs open_spiel); few iterations per round, sized for nash_conv (a
    # trainer's round on leduc3 is then short: use more rounds)
    "liars_dice": ("openspiel:liars_dice", {}, 20),
    "leduc3": ("openspiel:leduc_poker(players=3)", {}, 2),
}
#: how many full-pass iterations the policy evaluated by ``--trainer nash_conv`` has had
POLICY_ITERATIONS = 10


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


def make_game(package, game_name: str, kwargs: dict):
    if game_name.startswith("openspiel:"):
        openspiel = importlib.import_module(f"{package.__name__}.openspiel")
        return openspiel.from_openspiel(game_name.removeprefix("openspiel:"))
    return getattr(importlib.import_module(f"{package.__name__}.games"), game_name)(**kwargs)


class NashConvRuns:
    """``iterate(n)``: n calls of ``package.nash_conv`` on one policy, so that the loop below
    times an evaluation as it times a trainer."""

    def __init__(self, package, game) -> None:
        policy_of = package.VanillaCFR(game).iterate(POLICY_ITERATIONS).average_policy()
        self.package, self.game, self.policy = package, policy_of.game, policy_of

    def iterate(self, n: int) -> None:
        for _ in range(n):
            self.package.nash_conv(self.game, self.policy)


def trainer(package, name: str, game_name: str, kwargs: dict):
    game = make_game(package, game_name, kwargs)
    run = NashConvRuns(package, game) if name == "nash_conv" else getattr(package, name)(game)
    run.iterate(2)  # compile (or load) the kernels outside the timing
    return run


def timed(run, n: int) -> float:
    start = time.perf_counter()
    run.iterate(n)
    return time.perf_counter() - start


def serve(args) -> None:
    """A worker: load one version, then answer the parent's requests, one JSON line each --
    ``["build", game]`` (the game's node-visits per iteration) and ``["time", game, n]``
    (seconds for ``iterate(n)``)."""
    with tempfile.TemporaryDirectory() as tmp:
        package = (load_checkout(Path(tmp)) if args.worker == "this"
                   else load_revision(args.rev, Path(tmp)))
        runs = {}
        for line in sys.stdin:
            request = json.loads(line)
            if request[0] == "build":
                game_name, kwargs, _ = GAMES[request[1]]
                run = runs[request[1]] = trainer(package, args.trainer, game_name, kwargs)
                answer = run.game.num_nodes * run.game.num_players
            else:
                answer = timed(runs[request[1]], request[2])
            print(json.dumps(answer), flush=True)


class Worker:
    """The parent's end of a worker process."""

    def __init__(self, which: str, argv: list[str]) -> None:
        self.process = subprocess.Popen(
            [sys.executable, __file__, *argv, "--worker", which],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
        )

    def ask(self, *request):
        self.process.stdin.write(json.dumps(request) + "\n")
        self.process.stdin.flush()
        line = self.process.stdout.readline()
        if not line:
            raise RuntimeError(f"a worker stopped (exit status {self.process.wait()})")
        return json.loads(line)

    def close(self) -> None:
        self.process.stdin.close()
        self.process.wait()


def measure(args, argv: list[str]) -> dict[str, tuple[float, float]]:
    """Best ns per node-visit ``(this, revision)`` per game, the two versions timed in turn."""
    ours, theirs = Worker("this", argv), Worker("revision", argv)
    results = {}
    try:
        for key in [g.strip() for g in args.games.split(",") if g.strip()]:
            n = max(1, int(GAMES[key][2] * args.scale))
            visits = ours.ask("build", key) * n / 1e9
            theirs.ask("build", key)
            times_ours, times_theirs = [], []
            for round_ in range(args.rounds):  # who goes first alternates
                pair = (ours, theirs) if round_ % 2 else (theirs, ours)
                for worker in pair:
                    (times_ours if worker is ours else times_theirs).append(
                        worker.ask("time", key, n))
            results[key] = (min(times_ours) / visits, min(times_theirs) / visits)
    finally:
        ours.close()
        theirs.close()
    return results


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rev", required=True, help="the git revision to compare against")
    parser.add_argument("--trainer", default="VanillaCFR",
                        help="a trainer's name, or nash_conv to time the evaluation")
    parser.add_argument("--games", default="rps,kuhn2,kuhn3,leduc",
                        help="comma-separated, from " + ", ".join(GAMES))
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--scale", type=float, default=1.0,
                        help="multiply each game's iterations per round (sampled trainers: 100)")
    parser.add_argument("--worker", choices=("this", "revision"), help=argparse.SUPPRESS)
    argv = sys.argv[1:] if argv is None else list(argv)
    args = parser.parse_args(argv)
    unknown = [g for g in args.games.split(",") if g.strip() and g.strip() not in GAMES]
    if unknown:
        parser.error(f"unknown games {unknown}; choose from {list(GAMES)}")
    if args.worker:
        serve(args)
        return
    results = measure(args, argv)
    print(f"{args.trainer}: this checkout against {args.rev}, {args.rounds} rounds per game, "
          "each version in a process of its own, timed in turn")
    print()
    print(f"{'game':<11}{'revision ns/visit':>19}{'this ns/visit':>15}{'this / revision':>17}")
    for key, (ours, theirs) in results.items():
        print(f"{key:<11}{theirs:>19.2f}{ours:>15.2f}{ours / theirs:>17.3f}")


if __name__ == "__main__":
    main()
