"""Compiled-game cache: what a second process pays to get an OpenSpiel game from disk.

For each game, one fresh Python process calls ``from_openspiel(name, cache_dir=...)`` on an
empty cache directory (a miss: the walk, the compile and the file write), then several fresh
processes call it again (hits: the file is loaded and checked instead). Each process reports
its own times after the interpreter has started (``import`` and the call); the parent also
times each hit process from spawn to exit, what a sweep's worker pays in all. Separate
processes, interleaved with the hits, break ``load_compiled`` down: the raw read of the arrays
(``np.load`` of every member, no checks), the fingerprint recomputation (SHA-256 over every
array and name), and the rest of its checks and objects; and read a zlib-compressed copy of the
same file, to show what compression would trade. The file sits in the page cache (it was just
written): a read from a cold disk adds its size over the disk's bandwidth. Measures; never
asserts.

    python benchmarks/compiled_cache.py                                  # leduc_poker(players=3)
    python benchmarks/compiled_cache.py --games "leduc_poker,liars_dice" --repeats 7
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

MISS = r"""
import json, os, sys, time
start = time.perf_counter()
import numpy as np
import cfrkit
from cfrkit.openspiel import from_openspiel
imported = time.perf_counter()
game = from_openspiel(NAME, cache_dir=CACHE)     # a miss: walk, compile, write the file
done = time.perf_counter()
compiled = cfrkit.compile_game(game)
(path,) = [os.path.join(CACHE, f) for f in os.listdir(CACHE)]
t = time.perf_counter()
compiled.save(os.path.join(SCRATCH, "again.npz"))   # the write alone, for the breakdown
saved = time.perf_counter() - t
with np.load(path, allow_pickle=False) as data:
    members = {k: data[k] for k in data.files}
t = time.perf_counter()
np.savez_compressed(os.path.join(SCRATCH, "compressed.npz"), **members)
compressed = time.perf_counter() - t
print(json.dumps({"import": imported - start, "miss": done - imported, "write": saved,
                  "write_compressed": compressed, "nodes": compiled.num_nodes,
                  "infosets": compiled.num_infosets, "size": os.path.getsize(path),
                  "size_compressed": os.path.getsize(os.path.join(SCRATCH, "compressed.npz")),
                  "fingerprint": compiled.fingerprint}))
"""

HIT = r"""
import json, time
start = time.perf_counter()
import cfrkit
from cfrkit.openspiel import from_openspiel
imported = time.perf_counter()
game = from_openspiel(NAME, cache_dir=CACHE)     # a hit: load and check the file
hit = time.perf_counter()
print(json.dumps({"import": imported - start, "hit": hit - imported,
                  "fingerprint": cfrkit.compile_game(game).fingerprint}))
"""

BREAKDOWN = r"""
import json, os, time
import numpy as np
import cfrkit
(path,) = [os.path.join(CACHE, f) for f in os.listdir(CACHE)]
def raw(p):
    t = time.perf_counter()
    with np.load(p, allow_pickle=False) as data:
        for k in data.files:
            data[k]
    return time.perf_counter() - t
t = time.perf_counter()
compiled = cfrkit.load_compiled(path)
load = time.perf_counter() - t
compiled._cache.clear()
t = time.perf_counter()
compiled.fingerprint
hashing = time.perf_counter() - t
print(json.dumps({"load_compiled": load, "raw_read": raw(path), "fingerprint": hashing,
                  "raw_read_compressed": raw(os.path.join(SCRATCH, "compressed.npz"))}))
"""


def run(code: str, name: str, cache: str, scratch: str) -> tuple[dict, float]:
    source = (code.replace("NAME", repr(name)).replace("CACHE", repr(cache))
              .replace("SCRATCH", repr(scratch)))
    env = dict(os.environ, CFRKIT_QUIET="1")
    start = time.perf_counter()
    out = subprocess.run([sys.executable, "-c", source], env=env, capture_output=True, text=True)
    wall = time.perf_counter() - start
    if out.returncode:
        raise SystemExit(out.stderr)
    return json.loads(out.stdout.strip().splitlines()[-1]), wall


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", default="leduc_poker(players=3)",
                        help="comma-separated OpenSpiel game strings")
    parser.add_argument("--repeats", type=int, default=5, help="hit processes per game (median)")
    args = parser.parse_args(argv)
    with open("/proc/loadavg") as stream:
        print("load average before:", stream.read().split()[:3])
    for name in [g.strip() for g in args.games.split(",") if g.strip()]:
        with tempfile.TemporaryDirectory() as cache, tempfile.TemporaryDirectory() as scratch:
            miss, miss_wall = run(MISS, name, cache, scratch)
            hits, parts = [], []
            for _ in range(args.repeats):  # interleaved, so both see the same load
                hits.append(run(HIT, name, cache, scratch))
                parts.append(run(BREAKDOWN, name, cache, scratch)[0])
        med = {k: statistics.median(h[k] for h, _ in hits) for k in ("import", "hit")}
        med.update({k: statistics.median(p[k] for p in parts) for k in parts[0]})
        wall = statistics.median(w for _, w in hits)
        same = all(h["fingerprint"] == miss["fingerprint"] for h, _ in hits)
        mb = miss["size"] / 1e6
        print(f"\n{name}: {miss['nodes']:,} nodes, {miss['infosets']:,} infosets; "
              f"file {mb:.1f} MB ({miss['size'] / miss['nodes']:.0f} bytes per node)")
        print(f"  miss (1 process)   compile + write {miss['miss']:7.2f} s   of which write "
              f"{miss['write']:.2f} s   import {miss['import']:.2f} s   process {miss_wall:.2f} s")
        print(f"  hit  (median of {len(hits)}) from_openspiel  {med['hit']:7.3f} s   "
              f"import {med['import']:.2f} s   import + load {med['import'] + med['hit']:.2f} s   "
              f"whole process {wall:.2f} s")
        print("  hit processes (s): " + " ".join(f"{h['hit']:.3f}" for h, _ in hits))
        print(f"  load_compiled {med['load_compiled']:.3f} s = raw read {med['raw_read']:.3f} s"
              f" + fingerprint {med['fingerprint']:.3f} s"
              f" + other checks and objects "
              f"{med['load_compiled'] - med['raw_read'] - med['fingerprint']:.3f} s")
        print(f"  compile / hit: {miss['miss'] / med['hit']:.0f}x")
        print(f"  compressed (np.savez_compressed of the same arrays): "
              f"{miss['size_compressed'] / 1e6:.1f} MB "
              f"({miss['size_compressed'] / miss['size']:.0%}), written in "
              f"{miss['write_compressed']:.2f} s, raw read {med['raw_read_compressed']:.3f} s "
              f"vs {med['raw_read']:.3f} s uncompressed")
        print("  every hit's fingerprint equals the compiled one:", same)
    with open("/proc/loadavg") as stream:
        print("\nload average after:", stream.read().split()[:3])


if __name__ == "__main__":
    main()
