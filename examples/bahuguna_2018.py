"""Bahuguna (2018), *Learning for Hidden Information Games*, reproduced with cfrkit.

The report (University of Manchester, third-year project) solves two- and three-player Kuhn
poker with CFR written in C++. This script puts its numbers next to cfrkit's:

* **Figures 7.3 / 7.4** (p. 35): the players' game values and "the overall epsilon-Nash value"
  over 10^7 iterations, averaged over 10 trials. Section 2.2 defines epsilon as "the largest
  difference in distance of obtained utilities from expected utilities": the largest
  |u_i(average strategy) - u_i*| over the players, with u* from Table 5.2 (-1/18, +1/18) and
  Table 5.3 (three players: -(1/2 + beta)/24, -1/48, (1 + beta)/24, beta = max(B_J1, B_Q1),
  player 2's first-node bets with J and Q). That is a distance between values, not a distance
  from equilibrium: a profile can have the equilibrium values and still be exploitable. We
  print it as defined, and NashConv (what best responses gain, summed over the players) beside
  it. The report gives the curves only as images; its text says epsilon < 0.01 for both games.
* **Table 5.2** (p. 26): the two-player equilibrium as printed, checked with cfrkit's exact
  NashConv, next to Kuhn's (1950) family and cfrkit's strategy.
* **Table 7.1** (p. 37): nodes reached with and without tree pruning. The report's CFR samples
  one deal per iteration and walks it once for all players (9 / 25 nodes: 9e7 / 2.5e8 nodes in
  10^7 iterations), and prunes children whose *average* reach probability falls below a
  threshold -- an approximation. cfrkit's ``ChanceSampledCFR(alternating=False)`` has the same
  iteration semantics (plus the deal's chance node: 10 / 26 nodes) but no pruning; cfrkit's
  pruning lives in ``PrunedCFR``, a full-tree traversal, so the reduction is measured there,
  against ``VanillaCFR`` with the same number of iterations. The iterates of exact pruning are
  vanilla's, so the convergence curves (the report's Figure 7.5) coincide.
* **Table 7.2** (p. 38): multithreading, printed as a note. cfrkit's trainers take ``threads=``
  but run games this small on one thread (see docs/trainers.md, Threads).
* **Table 7.3** (p. 39): seconds for 10^7 iterations (193.2 s unoptimised -> 64.2 s optimised
  for three players; 60.9 s -> 24.0 s for two), next to ``ChanceSampledCFR(alternating=False)``
  timed here. Different machines (the report: an Intel Core i5 2500K at 4.5 GHz; here: whatever
  runs this script), and the report's optimised version also pruned; cfrkit's sampled trainer
  does not.

What cannot be matched exactly: the report's random deals (its C++ generator and seeds are not
given) and its pruning threshold (not given), so the sampled runs here agree with it in
distribution, not number for number.

Usage::

    python examples/bahuguna_2018.py                 # full size: 10 trials of 10^7 iterations
    python examples/bahuguna_2018.py --quick         # a few seconds (or CFRKIT_EXAMPLES_QUICK=1)
    python examples/bahuguna_2018.py --out DIR       # figures and output.txt into DIR

Timings are wall-clock seconds on whatever machine runs this; on a shared machine they are
noisy, so compare rows measured in one run, not runs.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
import time
from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # files only, no window
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

import cfrkit  # noqa: E402
from _common import _Tee, header, marks, save, section, table  # noqa: E402
import cfrkit.plot  # noqa: E402
from cfrkit.games import KuhnPoker  # noqa: E402

NAME = Path(__file__).stem
HERE = Path(__file__).resolve().parent

# -- the report's numbers ------------------------------------------------------------------------

TABLE_7_1 = {  # nodes reached in 10^7 iterations: (TP disabled, TP enabled, reduction %)
    ("2-player", "recursive"): (9e7, 6.76e7, -24.9),
    ("2-player", "iterative"): (9e7, 6.70e7, -25.5),
    ("3-player", "recursive"): (2.5e8, 1.61e8, -35.7),
    ("3-player", "iterative"): (2.5e8, 1.62e8, -35.1),
}
TABLE_7_2 = {  # seconds for 10^7 iterations, iterative version: (1 thread, OpenMP, speedup %)
    "2-player": (44.9, 80.3, -44.0),
    "3-player": (135.9, 175.7, -22.7),
}
TABLE_7_3 = [  # seconds for 10^7 iterations: (2-player, 3-player)
    ("Recursive (TP disabled)", 60.9, 193.2),
    ("Recursive", 54.2, 138.6),
    ("Iterative", 44.9, 135.9),
    ("Optimised", 24.0, 64.2),
]


def table_5_2(alpha: float) -> dict[str, float]:
    """Table 5.2 as printed: the probability of betting, by cfrkit infoset key."""
    return {  # player 1: A_J1, A_J2, A_Q1, A_Q2, A_K1, A_K2; player 2: B_*1 after p, B_*2 after b
        "J": 0.0, "Jpb": 0.0, "Q": 0.0, "Qpb": alpha + 1 / 3, "K": 3 * alpha, "Kpb": 1.0,
        "Jp": 1 / 3, "Jb": 0.0, "Qp": 1 / 3, "Qb": 1 / 3, "Kp": 1.0, "Kb": 1.0,
    }


def kuhn_1950(alpha: float) -> dict[str, float]:
    """Kuhn's (1950) equilibrium family of two-player Kuhn poker, alpha in [0, 1/3]."""
    return {
        "J": alpha, "Jpb": 0.0, "Q": 0.0, "Qpb": alpha + 1 / 3, "K": 3 * alpha, "Kpb": 1.0,
        "Jp": 1 / 3, "Jb": 0.0, "Qp": 0.0, "Qb": 1 / 3, "Kp": 1.0, "Kb": 1.0,
    }


def expected_values(players: int, policy: cfrkit.Policy) -> tuple[np.ndarray, float | None]:
    """u* of Table 5.2 / 5.3; three players: with beta read off the policy."""
    if players == 2:
        return np.array([-1 / 18, 1 / 18]), None
    beta = max(policy["Jp"]["bet"], policy["Qp"]["bet"])
    gamma = 1 / 24
    return np.array([-gamma * (0.5 + beta), -gamma * 0.5, gamma * (1 + beta)]), beta


# -- small helpers --------------------------------------------------------------------------------


# -- Figures 7.3 / 7.4 and Table 7.3: sampled runs, several trials --------------------------------


def sampled_trials(game, players: int, iterations: int, trials: int, seed: int):
    """Run ``trials`` seeded ChanceSampledCFR(alternating=False) runs, evaluating at marks."""
    points = marks(iterations)
    cfrkit.ChanceSampledCFR(game, seed=seed, alternating=False).iterate(1)  # compile, untimed
    cfrkit.evaluate(game, cfrkit.Policy.uniform(game))
    values = np.zeros((trials, len(points), players))
    epsilon = np.zeros((trials, len(points)))
    nash_conv = np.zeros((trials, len(points)))
    seconds = np.zeros(trials)
    nodes = np.zeros(trials, dtype=np.int64)
    betas = np.full(trials, np.nan)
    last = None
    for trial in range(trials):
        trainer = cfrkit.ChanceSampledCFR(game, seed=seed + trial, alternating=False)
        for k, mark in enumerate(points):
            start = time.perf_counter()
            trainer.iterate(int(mark - trainer.iteration))
            seconds[trial] += time.perf_counter() - start
            policy = trainer.average_policy()
            result = cfrkit.evaluate(game, policy)
            target, beta = expected_values(players, policy)
            values[trial, k] = result.values
            epsilon[trial, k] = np.max(np.abs(result.values - target))
            nash_conv[trial, k] = result.nash_conv
        nodes[trial] = trainer.nodes_touched
        betas[trial] = np.nan if beta is None else beta
        last = trainer
    return dict(points=points, values=values, epsilon=epsilon, nash_conv=nash_conv,
                seconds=seconds, nodes=nodes, betas=betas, trainer=last)


def figure_values(run: dict, players: int, figure: str, out: Path) -> None:
    points = run["points"]
    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 3.8), layout="constrained")
    for p in range(players):
        mean = run["values"][:, :, p].mean(axis=0)
        left.plot(points, mean, color=f"C{p}", label=f"player {p + 1}")
        left.fill_between(points, run["values"][:, :, p].min(axis=0),
                          run["values"][:, :, p].max(axis=0), color=f"C{p}", alpha=0.2)
    if players == 2:
        for p, value in enumerate((-1 / 18, 1 / 18)):
            left.axhline(value, color=f"C{p}", linestyle="--", linewidth=1)
    else:
        beta = float(np.nanmean(run["betas"]))
        for p, value in enumerate(np.array([-(0.5 + beta), -0.5, 1 + beta]) / 24):
            left.axhline(value, color=f"C{p}", linestyle="--", linewidth=1)
    left.set_xscale("log")
    left.set_ylim(-0.25, 0.25)
    left.set_xlabel("iterations")
    left.set_ylabel("game value of the average strategy")
    left.set_title("game values (dashed: Table 5.%d)" % (2 if players == 2 else 3))
    left.legend(fontsize="small")
    for data, label, color in ((run["epsilon"], "epsilon (report's definition)", "C3"),
                               (run["nash_conv"], "NashConv", "C4")):
        right.plot(points, np.maximum(data.mean(axis=0), 1e-12), color=color, label=label)
        right.fill_between(points, np.maximum(data.min(axis=0), 1e-12),
                           np.maximum(data.max(axis=0), 1e-12), color=color, alpha=0.2)
    right.axhline(0.01, color="grey", linestyle=":", linewidth=1, label="0.01 (report's goal)")
    right.set_xscale("log")
    right.set_yscale("log")
    right.set_xlabel("iterations")
    right.set_title("epsilon and NashConv")
    right.legend(fontsize="small")
    trials = run["values"].shape[0]
    fig.suptitle(f"{players}-player Kuhn poker (cf. the report's Figure {figure}): "
                 f"ChanceSampledCFR(alternating=False),\nmean of {trials} trial(s), "
                 "band = min..max over the trials")
    save(fig, out / f"figure_{figure.replace('.', '_')}_kuhn{players}.png")


def report_values_section(runs: dict[int, dict], iterations: int, trials: int) -> None:
    section(f"Figures 7.3 / 7.4 (p. 35): game values and epsilon over {iterations:,} "
            f"chance-sampled iterations, {trials} trial(s)")
    print("cfrkit: ChanceSampledCFR(KuhnPoker(players=n), alternating=False, seed=s): one sampled "
          "deal per iteration,\nwalked once for all players -- the report's semantics. epsilon = "
          "max_i |u_i - u_i*| (the report's Section 2.2);\nNashConv = what best responses gain, "
          "summed over the players (0 at an equilibrium). Mean over the trials.\n")
    for players, run in runs.items():
        rows = []
        for k, mark in enumerate(run["points"]):
            if mark not in 10 ** np.arange(0, 9):
                continue
            values = run["values"][:, k].mean(axis=0)
            rows.append([f"{mark:,}", " ".join(f"{v:+.5f}" for v in values),
                         f"{run['epsilon'][:, k].mean():.2e}", f"{run['nash_conv'][:, k].mean():.2e}"])
        print(f"{players}-player Kuhn poker (cfrkit, mean of {trials} trial(s)):")
        table(rows, ["iterations", "values (player 1, 2, ...)", "epsilon", "NashConv"])
        print()

    rows = []
    two, three = runs[2], runs[3]
    v2 = two["values"][:, -1].mean(axis=0)
    v3 = three["values"][:, -1].mean(axis=0)
    beta = float(np.nanmean(three["betas"]))
    u3 = np.array([-(0.5 + beta), -0.5, 1 + beta]) / 24
    rows.append(["2p: player 1 / player 2 value", "-1/18 / +1/18 = -0.05556 / +0.05556 (Tab. 5.2)",
                 f"{v2[0]:+.5f} / {v2[1]:+.5f}"])
    rows.append([f"2p: epsilon after {iterations:,} it.", "< 0.01 after 10^7 (abstract, Sec. 8.1; Fig. 7.3)",
                 f"{two['epsilon'][:, -1].mean():.2e}  (NashConv {two['nash_conv'][:, -1].mean():.2e})"])
    rows.append(["3p: beta = max(B_J1, B_Q1)", "free parameter (Tab. 5.3)", f"{beta:.4f}"])
    rows.append(["3p: values u1 / u2 / u3",
                 f"-(1/2+b)/24, -1/48, (1+b)/24 = {u3[0]:+.5f} / {u3[1]:+.5f} / {u3[2]:+.5f} "
                 "(Tab. 5.3, b as cfrkit's)",
                 f"{v3[0]:+.5f} / {v3[1]:+.5f} / {v3[2]:+.5f}"])
    rows.append([f"3p: epsilon after {iterations:,} it.", "< 0.01 after 10^7 (abstract, Sec. 8.1; Fig. 7.4)",
                 f"{three['epsilon'][:, -1].mean():.2e}  (NashConv {three['nash_conv'][:, -1].mean():.2e})"])
    print(f"Side by side (cfrkit: mean of {trials} trial(s) of {iterations:,} iterations):")
    table(rows, ["quantity", "report", "cfrkit"], "lll")
    print("\nThe report's curves are images (not in its text); it states epsilon < 0.01 for both "
          "games. Its epsilon compares\nvalues only; NashConv is the distance from equilibrium "
          "that cfrkit reports and that its convergence guarantee is about.")


# -- Table 5.2 --------------------------------------------------------------------------------------


def table_5_2_section(game, policy: cfrkit.Policy) -> None:
    section("Table 5.2 (p. 26): the two-player equilibrium, and cfrkit's strategy")
    alpha = min(max(policy["J"]["bet"], 0.0), 1 / 3)
    printed = table_5_2(alpha)
    family = kuhn_1950(alpha)
    names = {  # the report's names for cfrkit's keys
        "J": "A_J1", "Jpb": "A_J2", "Q": "A_Q1", "Qpb": "A_Q2", "K": "A_K1", "Kpb": "A_K2",
        "Jp": "B_J1", "Jb": "B_J2", "Qp": "B_Q1", "Qb": "B_Q2", "Kp": "B_K1", "Kb": "B_K2",
    }
    rows = []
    for key, name in names.items():
        flag = "differs" if abs(printed[key] - family[key]) > 1e-12 else ""
        rows.append([name, key, f"{printed[key]:.4f}", f"{family[key]:.4f}", flag,
                     f"{policy[key]['bet']:.4f}", f"{abs(policy[key]['bet'] - family[key]):.1e}"])
    print(f"Probability of betting (calling, when facing a bet); alpha = {alpha:.4f}, read off "
          "cfrkit's J row (player 1's bet with J).\n")
    table(rows, ["report", "key", "Table 5.2 (printed)", "Kuhn 1950", "5.2 vs Kuhn", "cfrkit",
                 "|cfrkit - Kuhn|"], "llrrlrr")

    def as_policy(bets):
        return cfrkit.Policy.from_dict(
            game, {k: {"pass": 1 - b, "bet": b} for k, b in bets.items()})

    print()
    table([
        ["Table 5.2 as printed, alpha = 0", f"{cfrkit.nash_conv(game, as_policy(table_5_2(0.0))):.4f}"],
        ["Table 5.2 as printed, alpha = 1/3", f"{cfrkit.nash_conv(game, as_policy(table_5_2(1 / 3))):.4f}"],
        ["Kuhn 1950, alpha = 0", f"{cfrkit.nash_conv(game, as_policy(kuhn_1950(0.0))):.2e}"],
        ["Kuhn 1950, alpha = 1/3", f"{cfrkit.nash_conv(game, as_policy(kuhn_1950(1 / 3))):.2e}"],
        ["cfrkit's average strategy", f"{cfrkit.nash_conv(game, policy):.2e}"],
    ], ["profile", "NashConv (exact, cfrkit)"])
    print("\nTable 5.2 as printed has player 1 never betting with J (A_J1 = 0, Kuhn: alpha) and "
          "player 2 betting Q after a pass\nwith 1/3 (B_Q1, Kuhn: 0); the second is a mistake "
          "(betting Q there loses to K and gains nothing from J),\nwhich cfrkit's NashConv of "
          "the printed profile shows. cfrkit's strategy is compared with Kuhn's family.")


# -- Table 7.1 and Figure 7.5: pruning ---------------------------------------------------------------


def pruning_section(iterations: int, sampled: dict[int, dict], sampled_iterations: int,
                    out: Path) -> None:
    section("Table 7.1 (p. 37) and Figure 7.5 (p. 36): tree pruning, nodes reached")
    print("Nodes reached WITHOUT pruning, sampled CFR (one deal per iteration, walked once for "
          "all players):\n")
    rows = []
    for players, label in ((2, "2-player"), (3, "3-player")):
        run = sampled[players]
        per_iteration = run["nodes"].mean() / sampled_iterations
        rows.append([label, f"{TABLE_7_1[(label, 'recursive')][0]:.2e}",
                     f"{run['nodes'].mean() * 1e7 / sampled_iterations:.2e}",
                     f"{per_iteration:.1f}"])
    table(rows, ["game", "report, 10^7 it.", "cfrkit ChanceSampledCFR, per 10^7 it.",
                 "cfrkit nodes / it."])
    print("cfrkit counts the deal's chance node too: 10 = 1 + 9 and 26 = 1 + 25 nodes per "
          "iteration; the report counts 9 and 25.\n")

    print(f"Pruning: the report prunes its sampled CFR (threshold on the average reach, value "
          f"not given); cfrkit prunes\nfull-tree passes (PrunedCFR) and is compared with "
          f"VanillaCFR over the same {iterations:,} iterations.\n")
    rows = []
    records = {}
    for players, label in ((2, "2-player"), (3, "3-player")):
        game = KuhnPoker(players=players)
        variants = [
            ("VanillaCFR (no pruning)", lambda g=game: cfrkit.VanillaCFR(g)),
            ("PrunedCFR(regret_pruning=False): zero-reach",
             lambda g=game: cfrkit.PrunedCFR(g, regret_pruning=False)),
            ("PrunedCFR(): zero-reach + regret-based",
             lambda g=game: cfrkit.PrunedCFR(g)),
            ("PrunedCFR(threshold=1e-3): + threshold (approx.)",
             lambda g=game: cfrkit.PrunedCFR(g, threshold=1e-3)),
        ]
        for _, make in variants:  # compile every kernel before anything is timed
            make().iterate(1)
        base_nodes = None
        records[players] = []
        for name, make in variants:
            trainer = make()
            if players == 3 and "regret-based" in name and not trainer.regret_pruning:
                name = "PrunedCFR(): zero-reach (regret-based needs 2 players)"
            record = trainer.solve(max_iterations=iterations)
            records[players].append(record)
            nodes = trainer.nodes_touched
            base_nodes = base_nodes or nodes
            rows.append([label, name, f"{nodes:.3e}", f"{100 * (nodes / base_nodes - 1):+.1f}%",
                         f"{record.final_nash_conv:.2e}", f"{record.training_seconds[-1]:.2f}"])
    table(rows, ["game", "cfrkit trainer", "nodes reached", "reduction", "NashConv",
                 "train s"], "llrrrr")
    print()
    rows = []
    for (label, impl), (off, on, reduction) in TABLE_7_1.items():
        rows.append([label, impl, f"{off:.2e}", f"{on:.3g}", f"{reduction:+.1f}%"])
    print("The report's Table 7.1 (10^7 sampled iterations, threshold pruning):")
    table(rows, ["game", "implementation", "TP disabled", "TP enabled", "reduction"], "llrrr")
    print("\ncfrkit's zero-reach and regret-based pruning are exact (the same iterates, hence the "
          "same NashConv, as VanillaCFR\nin these runs); the threshold row is approximate, like "
          "the report's. The report observed a smaller epsilon with\npruning (Figure 7.5); with "
          "exact pruning the curves coincide by construction (figures below). On trees this\n"
          "small the queued pruned pass costs more per node than the flat full pass, so wall "
          "time does not drop with the\nnode count (see docs/trainers.md for larger trees).")
    for players, runs in records.items():
        labels = ["VanillaCFR", "PrunedCFR zero-reach", "PrunedCFR default", "PrunedCFR threshold 1e-3"]
        fig = cfrkit.plot.convergence(runs, labels=labels,
                                      title=f"{players}-player Kuhn: pruning (cf. the report's Figure 7.5)")
        fig.set_size_inches(10, 4)
        save(fig, out / f"figure_7_5_pruning_kuhn{players}.png")


def threads_section() -> None:
    section("Table 7.2 (p. 38): multithreading -- a note")
    rows = [[label, f"{one:.1f}", f"{many:.1f}", f"{speedup:+.1f}%"]
            for label, (one, many, speedup) in TABLE_7_2.items()]
    table(rows, ["game", "report: 1 thread (s)", "report: OpenMP (s)", "report's speedup"])
    print("\nEvery cfrkit number here is one core. cfrkit's trainers take threads=, but run "
          "games under 50,000 nodes on\none thread whatever it says: forced onto two, its "
          "parallel passes are 10 to 60 times slower on Kuhn\n(docs/trainers.md, Threads). "
          "The report found the same on trees this small: assigning threads to the few\nnodes "
          "of each level cost more than the work they shared.")


def timing_section(sampled: dict[int, dict], iterations: int) -> None:
    section(f"Table 7.3 (p. 39): seconds for {iterations:,} chance-sampled iterations")
    rows = [[name, f"{two:.1f}", f"{three:.1f}"] for name, two, three in TABLE_7_3]
    times = {p: sampled[p]["seconds"] for p in (2, 3)}
    scale = 1e7 / iterations
    trials = len(times[2])

    def fmt(seconds):
        spread = f" +- {seconds.std(ddof=1):.2f}" if len(seconds) > 1 else ""
        return f"{seconds.mean():.2f}{spread}"

    rows.append([f"cfrkit ChanceSampledCFR(alternating=False), mean of {trials}",
                 fmt(times[2]), fmt(times[3])])
    if iterations != 10**7:
        rows.append(["cfrkit, scaled to 10^7 iterations", f"{times[2].mean() * scale:.2f}",
                     f"{times[3].mean() * scale:.2f}"])
    table(rows, ["implementation (report: Table 7.3; cfrkit: measured here)", "2-player (s)",
                 "3-player (s)"])
    t2, t3 = times[2].mean() * scale, times[3].mean() * scale
    print(f"\nPer 10^7 iterations cfrkit takes {t2:.2f} s / {t3:.2f} s: "
          f"{24.0 / t2:.1f}x / {64.2 / t3:.1f}x less than the report's optimised C++ "
          f"(24.0 s / 64.2 s) and\n{60.9 / t2:.1f}x / {193.2 / t3:.1f}x less than its "
          "unoptimised version, on different hardware (the report: Core i5 2500K at 4.5 GHz) "
          "and\nwithout pruning (the report's optimised row pruned). Times exclude numba's "
          "one-off compilation and the\nevaluations at the checkpoints.")


# -- main --------------------------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        description=__doc__.splitlines()[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, default=HERE / "output" / NAME,
                        help="directory for the figures and output.txt (default: %(default)s)")
    parser.add_argument("--quick", action="store_true",
                        help="small sizes, a few seconds (also: CFRKIT_EXAMPLES_QUICK=1)")
    parser.add_argument("--iterations", type=int, default=None,
                        help="sampled iterations per trial (default 10^7; quick 10^4)")
    parser.add_argument("--trials", type=int, default=None, help="trials (default 10; quick 2)")
    parser.add_argument("--pruning-iterations", type=int, default=None,
                        help="full-pass iterations for the pruning table (default 10^6; quick 2000)")
    parser.add_argument("--seed", type=int, default=2018)
    args = parser.parse_args(argv)
    args.quick = args.quick or os.environ.get("CFRKIT_EXAMPLES_QUICK", "") not in ("", "0")
    iterations = args.iterations or (10_000 if args.quick else 10_000_000)
    trials = args.trials or (2 if args.quick else 10)
    pruning_iterations = args.pruning_iterations or (2_000 if args.quick else 1_000_000)
    out = args.out
    out.mkdir(parents=True, exist_ok=True)

    with open(out / "output.txt", "w") as log, contextlib.redirect_stdout(_Tee(sys.stdout, log)):
        print(header(NAME, args))
        print("Bahuguna, P. (2018). Learning for Hidden Information Games. Third-year project "
              "report,\nUniversity of Manchester. C++ CFR on two- and three-player Kuhn poker.")
        if iterations != 10**7 or trials != 10 or pruning_iterations != 1_000_000:
            print(f"\nSizes: {trials} trial(s) of {iterations:,} sampled iterations (report: 10 of "
                  f"10^7); pruning over {pruning_iterations:,} full passes.")
        started = time.perf_counter()
        sampled = {}
        for players in (2, 3):
            game = KuhnPoker(players=players)
            sampled[players] = sampled_trials(game, players, iterations, trials, args.seed)
        report_values_section(sampled, iterations, trials)
        for players, figure in ((2, "7.3"), (3, "7.4")):
            figure_values(sampled[players], players, figure, out)

        game = KuhnPoker()
        table_5_2_section(game, sampled[2]["trainer"].average_policy())
        fig = cfrkit.plot.strategy(sampled[2]["trainer"].average_policy())
        fig.suptitle("2-player Kuhn, ChanceSampledCFR\n(cf. the report's Figure 7.2)", fontsize="medium")
        save(fig, out / "figure_7_2_strategy_kuhn2.png")

        pruning_section(pruning_iterations, sampled, iterations, out)
        threads_section()
        timing_section(sampled, iterations)
        print(f"\n[done in {time.perf_counter() - started:.0f} s]")


if __name__ == "__main__":
    main()
