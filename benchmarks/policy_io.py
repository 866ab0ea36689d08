"""Policies on big games outside the kernels: policy files, and policies given as dicts.

For each game, one process compiles it (through ``--cache-dir``, so later runs load it), trains
``CFRPlus`` for 3 iterations on one thread, and times, best of ``--repeats``:

* ``Policy.save`` of the average policy (one JSON file),
* ``cfrkit.load_policy`` of that file,
* ``Policy.from_dict`` of the policy's ``to_dict()``,
* ``Policy.to_dict``,
* ``cfrkit.evaluate`` of the policy, and of its ``to_dict()`` (the dict is checked and turned
  into a policy first),

checking that every round trip gives the same table bit for bit. Measures; never asserts.
To compare with another revision, run it with that revision's ``src`` first on
``PYTHONPATH``, in turn with this one.

    python benchmarks/policy_io.py                       # liar's dice and three-player Leduc
    python benchmarks/policy_io.py --games leduc_poker --repeats 9
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time

import numpy as np

import cfrkit
from cfrkit.cli import _split_top_level
from cfrkit.openspiel import from_openspiel


def best(call, repeats: int) -> float:
    """The shortest of ``repeats`` timed calls, in seconds."""
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        call()
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", default="liars_dice,leduc_poker(players=3)",
                        help="OpenSpiel game names, separated by commas")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--cache-dir", default=os.path.join(tempfile.gettempdir(),
                                                            "cfrkit-bench-cache"))
    args = parser.parse_args()
    games = _split_top_level(args.games)  # kuhn_poker(players=3,...) stays one name
    print(f"cfrkit {cfrkit.__version__} from {os.path.dirname(cfrkit.__file__)}; best of "
          f"{args.repeats}, milliseconds")
    print(f"{'game':<24} {'infosets':>9} {'save':>7} {'load':>7} {'from_dict':>9} "
          f"{'to_dict':>8} {'evaluate':>8} {'eval dict':>9}")
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "policy.json")
        for name in games:
            compiled = cfrkit.compile_game(from_openspiel(name, cache_dir=args.cache_dir))
            policy = cfrkit.CFRPlus(compiled, threads=1).iterate(3).average_policy()
            rows = policy.to_dict()
            policy.save(path)
            for again in (cfrkit.load_policy(path, compiled),
                          cfrkit.Policy.from_dict(compiled, rows)):
                assert np.array_equal(again.table, policy.table)
            cfrkit.evaluate(compiled, policy, threads=1)  # the kernels, loaded
            figures = [
                best(lambda: policy.save(path), args.repeats),
                best(lambda: cfrkit.load_policy(path, compiled), args.repeats),
                best(lambda: cfrkit.Policy.from_dict(compiled, rows), args.repeats),
                best(policy.to_dict, args.repeats),
                best(lambda: cfrkit.evaluate(compiled, policy, threads=1), args.repeats),
                best(lambda: cfrkit.evaluate(compiled, rows, threads=1), args.repeats),
            ]
            save, load, from_dict, to_dict, evaluate, evaluate_dict = (1e3 * f for f in figures)
            print(f"{name:<24} {compiled.num_infosets:>9,} {save:>7.0f} {load:>7.0f} "
                  f"{from_dict:>9.0f} {to_dict:>8.0f} {evaluate:>8.0f} {evaluate_dict:>9.0f}",
                  flush=True)


if __name__ == "__main__":
    main()
