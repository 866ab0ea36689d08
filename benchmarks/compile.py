"""Compiling a game against the floor: a bare walk of the same game, and the memory it adds.

For each game, ``--repeats`` fresh Python processes each time both of the following, one right
after the other, in alternating order (the compile first in the first process, the bare walk
first in the next, ...):

* the *bare walk*: a depth-first walk calling, once per node, each method the compiler needs
  and nothing else -- for a cfrkit game ``root``, ``is_terminal``, ``is_chance``,
  ``current_player``, ``actions`` or ``chance_outcomes``, ``infoset_key``, ``child`` and
  ``utilities``; for an OpenSpiel game the pyspiel calls ``current_player``,
  ``legal_actions`` or ``chance_outcomes``, ``information_state_string``, ``child`` and
  ``returns`` (with ``--in-place``, the first child of each OpenSpiel state is the state
  itself, its action applied in place, as the compiler does: one copy fewer per history);
* ``cfrkit.compile_game`` of the same game (an OpenSpiel game through
  ``cfrkit.openspiel.OpenSpielGame``, not yet compiled),

and prints the median times and the median of the processes' ratios (compile over bare walk:
the two run back to back, so a machine that slows down for a while -- a shared one drifts by
2x in an hour -- slows both). The processes that compiled first also report the peak resident
memory the compilation added (``ru_maxrss`` after it minus the resident size just before it),
less the compiled tree's own arrays, per node: what compiling costs in memory on top of its
result. Measures; never asserts.

    python benchmarks/compile.py      # Kuhn 3p and 6p, Leduc (cfrkit's and OpenSpiel's), liar's dice, Leduc 3p
    python benchmarks/compile.py --games kuhn6,leduc_poker --repeats 5
    python benchmarks/compile.py --games liars_dice --in-place   # the compiler's pyspiel calls
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys

PROBE = r"""
import json, resource, sys, time
import numpy as np
import cfrkit
NAME, ORDER, IN_PLACE = sys.argv[1], sys.argv[2].split(","), sys.argv[3] == "1"
OPENSPIEL = not NAME.startswith("kuhn") and NAME != "leduc"
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


def bare_python(game):
    nodes = 0
    stack = [game.root()]
    while stack:
        h = stack.pop()
        nodes += 1
        if h.is_terminal():
            h.utilities()
            continue
        if h.is_chance():
            labels = [label for label, _ in h.chance_outcomes()]
        else:
            h.current_player()
            labels = h.actions()
            h.infoset_key()
        for label in labels:
            stack.append(h.child(label))
    return nodes


def bare_openspiel(game):
    nodes = 0
    stack = [game.openspiel_game.new_initial_state()]
    while stack:
        s = stack.pop()
        nodes += 1
        p = s.current_player()
        if p == -4:
            s.returns()
            continue
        if p == -1:
            actions = [a for a, _ in s.chance_outcomes()]
        else:
            actions = s.legal_actions()
            s.information_state_string()  # the acting player's, the compiler's call
        if IN_PLACE:  # the compiler's calls: the first child is the state itself
            for a in reversed(actions[1:]):
                stack.append(s.child(a))
            s.apply_action(actions[0])
            stack.append(s)
        else:
            for a in actions:
                stack.append(s.child(a))
    return nodes


def rss() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * resource.getpagesize()


results = {}
for mode in ORDER:
    before = rss()
    start = time.perf_counter()
    if mode == "bare":
        nodes = (bare_openspiel if OPENSPIEL else bare_python)(game)
        results[mode] = {"nodes": nodes, "seconds": time.perf_counter() - start}
    else:
        compiled = cfrkit.compile_game(game, progress=False)
        seconds = time.perf_counter() - start
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # Linux: KiB
        tree = sum(a.nbytes for a in compiled.tree if isinstance(a, np.ndarray))
        results[mode] = {"nodes": compiled.num_nodes, "seconds": seconds,
                         "peak": max(peak - before, 0), "tree": tree}
        del compiled
print(json.dumps(results))
"""

GAMES = ("kuhn3", "kuhn6", "leduc", "leduc_poker", "liars_dice", "leduc_poker(players=3)")


def run(name: str, order: str, in_place: bool) -> dict:
    env = dict(os.environ, CFRKIT_QUIET="1")
    done = subprocess.run([sys.executable, "-c", PROBE, name, order, str(int(in_place))],
                          capture_output=True, text=True, env=env)
    if done.returncode != 0:
        raise RuntimeError((done.stderr.strip().splitlines() or ["failed"])[-1])
    return json.loads(done.stdout)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", default=",".join(GAMES),
                        help="comma-separated: kuhnN (cfrkit's Kuhn poker, N players), leduc "
                        "(cfrkit's), or an OpenSpiel game name")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--in-place", action="store_true",
                        help="the bare walk of an OpenSpiel game applies each state's first "
                        "action to the state itself, as the compiler does, instead of child()")
    args = parser.parse_args()
    with open("/proc/loadavg") as f:
        print(f"load average before: {' '.join(f.read().split()[:3])}; medians of "
              f"{args.repeats} fresh processes each, each timing both"
              + ("; bare walk with the first child in place" if args.in_place else ""))
    print(f"{'game':<24} {'nodes':>10} {'bare s':>8} {'compile s':>9} {'ratio':>6} "
          f"{'peak-tree B/node':>16} {'tree B/node':>11}")
    for name in args.games.split(","):
        bare, comp, memory = [], [], []
        try:
            for i in range(args.repeats):
                # the compile first in the first process: --repeats 1 measures its memory too
                order = "compile,bare" if i % 2 == 0 else "bare,compile"
                both = run(name, order, args.in_place)
                bare.append(both["bare"])
                comp.append(both["compile"])
                if order.startswith("compile"):  # the compile met a fresh process
                    memory.append(both["compile"])
        except RuntimeError as exc:
            print(f"{name:<24} skipped: {exc}")
            continue
        nodes = comp[0]["nodes"]
        if bare[0]["nodes"] != nodes:
            print(f"{name:<24} the bare walk saw {bare[0]['nodes']:,} nodes, compile {nodes:,}")
        walk = statistics.median(r["seconds"] for r in bare)
        seconds = statistics.median(r["seconds"] for r in comp)
        ratio = statistics.median(c["seconds"] / b["seconds"] for b, c in zip(bare, comp))
        above = statistics.median((r["peak"] - r["tree"]) / nodes for r in memory)
        tree = comp[0]["tree"] / nodes
        print(f"{name:<24} {nodes:>10,} {walk:>8.2f} {seconds:>9.2f} {ratio:>6.2f} "
              f"{above:>16.0f} {tree:>11.0f}", flush=True)
    with open("/proc/loadavg") as f:
        print(f"load average after: {' '.join(f.read().split()[:3])}")


if __name__ == "__main__":
    main()
