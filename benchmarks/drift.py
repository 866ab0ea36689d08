"""How far this machine's speed drifts while a benchmark runs, solver by solver.

Absolute times on a shared machine move with what else runs on it. This runs short rounds of
the CFR solvers one after the other, in one process, for ``--seconds``: cfrkit's
``VanillaCFR``, OpenSpiel's C++ ``CFRSolver`` and LiteEFG's CFR (whichever are installed),
and a compute-bound reference, a numba loop of dependent square roots that touches no memory.
Each round times a fixed number of iterations per solver, chosen at the start so that a round
takes about ``--round-ms``. It prints each one's iterations/s (for the reference, an
iteration is 10^5 square roots) over the rounds -- lowest, median, highest, highest/lowest -- and the correlation of its
rounds with cfrkit's.

A solver whose speed moves with cfrkit's while the reference stays put is waiting on memory,
not on arithmetic; the tables of ``compare.py`` and ``time_to_epsilon.py`` compare solvers
measured in the same run for that reason. Run this before or after them to see how much the
absolute figures of the day can be trusted.

    python benchmarks/drift.py                      # Leduc, one minute
    python benchmarks/drift.py --game kuhn2 --seconds 120 --trace

Measures; never asserts.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

os.environ.setdefault("CFRKIT_QUIET", "1")

import numpy as np  # noqa: E402
from numba import njit  # noqa: E402

from peers import GAMES, fmt_rate, load_game, print_table, solver_entries, versions_line  # noqa: E402

#: the solvers timed, by their entry names in peers.py
SOLVERS = ("cfrkit VanillaCFR", "OpenSpiel CFRSolver (C++)", "LiteEFG CFR")
REFERENCE = "reference (compute only)"


@njit(cache=True)
def _square_roots(n: int) -> float:
    # a chain of dependent floating-point operations: its speed is the core's, not memory's
    x = 0.0
    for i in range(n):
        x = x * 0.999999 + np.sqrt(i + 1.0)
    return x


class _Reference:
    """The compute-bound loop behind the Solver interface: one iteration is 10^5 roots."""

    def step(self, n: int) -> None:
        _square_roots(100_000 * n)


def _seconds(step, n: int) -> float:
    start = time.perf_counter()
    step(n)
    return time.perf_counter() - start


def _batch(step, seconds: float) -> int:
    """The iterations that take about ``seconds``, timed on calls long enough to drown a
    call's own cost (a tenth of ``seconds``)."""
    step(1)  # the kernels' first call, not timed
    n = 1
    while (elapsed := _seconds(step, n)) < seconds / 10:
        n *= 2
    return max(1, round(n * seconds / elapsed))


def measure(args) -> dict[str, list[float]]:
    """Iterations/s of each solver, round after round, for ``args.seconds``."""
    loaded = load_game(GAMES[args.game], print)
    if loaded is None:
        raise SystemExit(1)
    print(loaded.describe())
    entries = [e for e in solver_entries(loaded.compiled, {"openspiel", "liteefg"}, print,
                                         trainers=("VanillaCFR",)) if e.name in SOLVERS]
    steps = {e.name: e.make().step for e in entries}
    steps[REFERENCE] = _Reference().step
    batches = {name: _batch(step, args.round_ms / 1e3) for name, step in steps.items()}
    for name, batch in batches.items():
        print(f"  {name}: {batch:,} iterations per round")
    rates: dict[str, list[float]] = {name: [] for name in steps}
    end = time.perf_counter() + args.seconds
    while time.perf_counter() < end:
        line = []
        for name, step in steps.items():
            rates[name].append(batches[name] / _seconds(step, batches[name]))
            line.append(fmt_rate(rates[name][-1]))
        if args.trace:
            print("  " + " / ".join(line))
    return rates


def report(rates: dict[str, list[float]]) -> None:
    cfrkit_rates = rates.get(SOLVERS[0])
    rows = []
    for name, values in rates.items():
        correlation = "--"
        if cfrkit_rates is not None and name != SOLVERS[0] and len(values) > 2:
            correlation = f"{np.corrcoef(values, cfrkit_rates)[0, 1]:+.2f}"
        rows.append([name, f"{len(values)}", fmt_rate(min(values)),
                     fmt_rate(statistics.median(values)), fmt_rate(max(values)),
                     f"{max(values) / min(values):.2f}", correlation])
    print()
    print_table(["solver", "rounds", "lowest it/s", "median it/s", "highest it/s",
                 "highest / lowest", "correlation with cfrkit"], rows, print)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(
        description=__doc__.splitlines()[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--game", default="leduc", choices=list(GAMES),
                        help="the game the solvers run on (default leduc)")
    parser.add_argument("--seconds", type=float, default=60.0,
                        help="how long to keep measuring (default 60)")
    parser.add_argument("--round-ms", type=float, default=100.0,
                        help="about how long one solver's share of a round takes (default 100)")
    parser.add_argument("--trace", action="store_true",
                        help="print every round's iterations/s as it comes")
    args = parser.parse_args(argv)
    if args.seconds <= 0 or args.round_ms <= 0:
        parser.error("--seconds and --round-ms must be positive")
    print(versions_line())
    report(measure(args))


if __name__ == "__main__":
    main()
