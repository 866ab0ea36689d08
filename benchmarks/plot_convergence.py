"""Plot NashConv against iterations and against training wall time, per game and solver.

Runs the same solvers as ``benchmarks/compare.py`` (cfrkit's trainers, OpenSpiel's C++ CFR and
CFR+ solvers, LiteEFG's CFR, CFR+, DCFR and PCFR+, the peers only when installed) and writes one PNG per game,
``convergence_<game>.png``, with two panels: NashConv of the average policy against iterations
and against training wall time (evaluation not counted), both log-log. Needs matplotlib
(``pip install cfrkit[plot]``).

    python benchmarks/plot_convergence.py                          # docs/images/, 30 s per curve
    python benchmarks/plot_convergence.py --games leduc --cap 60 --target 1e-5
    python benchmarks/compare.py --json results.json && \\
        python benchmarks/plot_convergence.py --from-json results.json   # reuse compare's curves
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import compare  # noqa: E402  (benchmarks/compare.py)
import peers  # noqa: E402  (benchmarks/peers.py)

DEFAULT_OUT = Path(__file__).resolve().parent.parent / "docs" / "images"

STYLE = {  # solver family -> line style; colours follow the solver order
    "cfrkit": "-",
    "OpenSpiel": "--",
    "LiteEFG": ":",
}


def measure_curves(args):
    curves = {}
    for key in args.games:
        loaded = peers.load_game(peers.GAMES[key], print)
        if loaded is None:
            continue
        print(loaded.describe())
        per_game = {}
        for entry in peers.solver_entries(loaded.compiled, args.peers, print):
            curve = compare.measure_convergence(entry.make, args.cap, target=args.target)
            per_game[entry.name] = {
                "iterations": curve.iterations,
                "seconds": curve.seconds,
                "nash_conv": curve.nash_conv,
            }
            print(f"  {entry.name}: {curve.iterations[-1]:,} iterations, "
                  f"{curve.seconds[-1]:.2f} s, NashConv {curve.nash_conv[-1]:.3g}")
        curves[key] = per_game
    return curves


def plot(curves, out_dir, dpi):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    out_dir.mkdir(parents=True, exist_ok=True)
    written = []
    for key, per_game in curves.items():
        label = compare.GAMES[key].label if key in compare.GAMES else key
        fig, (by_iteration, by_time) = plt.subplots(1, 2, figsize=(12, 4.6))
        colours = [plt.get_cmap("tab20")(i) for i in range(20)]
        for i, (name, curve) in enumerate(per_game.items()):
            family = name.split()[0]
            style = dict(color=colours[i % len(colours)], linestyle=STYLE.get(family, "-"),
                         linewidth=1.6, label=name)
            by_iteration.plot(curve["iterations"], curve["nash_conv"], **style)
            times = [max(t, 1e-6) for t in curve["seconds"]]
            by_time.plot(times, curve["nash_conv"], **style)
        for axis, xlabel in ((by_iteration, "iterations"), (by_time, "training wall time (s)")):
            axis.set_xscale("log")
            axis.set_yscale("log")
            axis.set_xlabel(xlabel)
            axis.set_ylabel("NashConv of the average policy")
            for threshold in compare.THRESHOLDS:
                axis.axhline(threshold, color="grey", linewidth=0.6, alpha=0.6)
            axis.grid(True, which="major", alpha=0.3)
        by_iteration.set_title(f"{label}: NashConv vs iterations")
        by_time.set_title(f"{label}: NashConv vs wall time")
        by_time.legend(fontsize=8, loc="lower left")
        fig.tight_layout()
        path = out_dir / f"convergence_{key}.png"
        fig.savefig(path, dpi=dpi)
        plt.close(fig)
        written.append(path)
        print(f"wrote {path}")
    return written


def main(argv=None):
    parser = argparse.ArgumentParser(
        description=__doc__.splitlines()[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--games", default=None,
                        help="comma-separated, from " + ", ".join(compare.GAMES)
                             + " (default kuhn2,kuhn3,leduc; with --from-json, every game "
                             "in the file)")
    parser.add_argument("--cap", type=float, default=30.0,
                        help="training seconds per curve (default 30)")
    parser.add_argument("--target", type=float, default=1e-5,
                        help="stop a curve once NashConv reaches this (default 1e-5)")
    parser.add_argument("--peers", default="openspiel,liteefg",
                        help="peers to run: openspiel, liteefg (default both)")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT,
                        help="output folder (default docs/images)")
    parser.add_argument("--dpi", type=int, default=110)
    parser.add_argument("--from-json", type=Path, metavar="PATH",
                        help="plot the curves saved by compare.py --json instead of measuring")
    args = parser.parse_args(argv)
    chosen = args.games is not None
    args.games = [g.strip() for g in (args.games or "kuhn2,kuhn3,leduc").split(",") if g.strip()]
    args.peers = {p.strip().lower() for p in args.peers.split(",") if p.strip()}
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        parser.error("matplotlib is needed: pip install cfrkit[plot]")
    if args.from_json:
        saved = json.loads(args.from_json.read_text())
        curves = {key: game["curves"] for key, game in saved.items()
                  if "curves" in game and (not chosen or key in args.games)}
        missing = [g for g in args.games if chosen and g not in curves]
        if missing:
            parser.error(f"{args.from_json} has no curves for {missing}")
    else:
        unknown = [g for g in args.games if g not in compare.GAMES]
        if unknown:
            parser.error(f"unknown game(s) {unknown}; choose from {list(compare.GAMES)}")
        curves = measure_curves(args)
    plot(curves, args.out, args.dpi)


if __name__ == "__main__":
    main()
