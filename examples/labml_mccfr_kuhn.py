"""labml.ai's annotated MCCFR tutorial on Kuhn poker, reproduced with cfrkit.

The tutorial (nn.labml.ai/cfr, the ``labml_nn.cfr`` package) implements Monte Carlo CFR with
chance sampling: each iteration, for each player in turn, deals a fresh random hand, walks all
player actions below it, updates that player's regrets and refreshes the strategy, and keeps the
average strategy weighted by the player's own reach. In cfrkit that is
``ChanceSampledCFR(game, sample_per_player=True)`` (alternating updates, a fresh sample for
each player's pass).

Where the numbers come from. The tutorial page shows no results; its "Open in Colab" notebook,
``labml_nn/cfr/kuhn/experiment.ipynb`` in labmlai/annotated_deep_learning_paper_implementations
(the same saved output from commit 42d894ea, June 2021, until the outputs were cleared in June
2024, commit 391fa391), ran 1,000,000 iterations in 830,490 ms (with per-iteration tracking of
36 series to SQLite) and printed each infoset's average probability of betting: A 100.0%,
Ab 100.0%, K 0.0%, Kb 33.5%, Q 33.2%, Qb 0.0%.

The game the tutorial codes is not Kuhn's. Its ``labml_nn.cfr.kuhn`` module deals A > K > Q,
and a pass by the first player ends the game at a showdown for 1 (the history is terminal as
soon as the last action is a pass); only a first-player bet gives the second player a choice,
fold (first player +1) or call (showdown for 2). Player 2 never acts after a pass, so there are
6 infosets, not Kuhn's 12 -- the notebook's printout lists exactly those 6. This script writes
that game as a cfrkit ``Game`` (``LabmlKuhn`` below) and trains on it, and also trains on Kuhn
poker proper (``cfrkit.games.KuhnPoker``) to compare with Kuhn's (1950) equilibrium family.

The variant's equilibrium is unique and easy to derive: with K player 1 passes (betting loses 1/2
on average: A calls, Q folds), with A it always bets and player 2 always calls with A and folds
with Q. Player 2 with K is indifferent between fold (-1) and call exactly when player 1 bluffs
with Q at rate 1/3; player 1 with Q is indifferent between pass (-1) and bet exactly when player
2 calls with K at rate 1/3. Player 1's value is +1/18. cfrkit's exact NashConv confirms it (0 up
to rounding).

What cannot be matched exactly: labml draws its deals from numpy's global random generator,
unseeded, so neither the run nor its last digits can be repeated; several cfrkit seeds show the
spread a 10^6-iteration run has. The notebook's 830 s include its tracking; cfrkit's time is
the trainer's alone.

Usage::

    python examples/labml_mccfr_kuhn.py              # full size: 10^6 iterations, 5 seeds
    python examples/labml_mccfr_kuhn.py --quick      # a few seconds (or CFRKIT_EXAMPLES_QUICK=1)
    python examples/labml_mccfr_kuhn.py --out DIR    # figures and output.txt into DIR

Timings are wall-clock seconds on the machine that runs this; on a shared machine they are
noisy.
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

# The notebook's printout after 1,000,000 iterations: average probability of betting, in %.
LABML_BET_PERCENT = {"A": 100.0, "Ab": 100.0, "K": 0.0, "Kb": 33.5, "Q": 33.2, "Qb": 0.0}
LABML_ITERATIONS = 1_000_000
LABML_SECONDS = 830.49015

# The unique equilibrium of the variant (derived in the docstring): probability of betting.
VARIANT_EQUILIBRIUM = {"A": 1.0, "Ab": 1.0, "K": 0.0, "Kb": 1 / 3, "Q": 1 / 3, "Qb": 0.0}


def kuhn_1950(alpha: float) -> dict[str, float]:
    """Kuhn's (1950) equilibrium family of two-player Kuhn poker (J < Q < K), alpha in [0, 1/3]:
    the probability of betting (of calling, facing a bet) at each cfrkit infoset."""
    return {
        "J": alpha, "Q": 0.0, "K": 3 * alpha, "Jpb": 0.0, "Qpb": alpha + 1 / 3, "Kpb": 1.0,
        "Jp": 1 / 3, "Qp": 0.0, "Kp": 1.0, "Jb": 0.0, "Qb": 1 / 3, "Kb": 1.0,
    }


# -- the tutorial's game, as coded in labml_nn.cfr.kuhn ------------------------------------------


class LabmlKuhn(cfrkit.Game):
    """The "Kuhn poker" of labml_nn.cfr.kuhn: cards A > K > Q; player 1 passes (showdown for 1)
    or bets; facing a bet, player 2 passes (folds: player 1 wins 1) or bets (calls: showdown for
    2). Histories are strings like labml's: the two cards, then the actions ``p`` / ``b``; the
    infoset key is the player's card and the actions (``"K"``, ``"Qb"``)."""

    num_players = 2
    name = "labml_kuhn"

    def root(self) -> cfrkit.History:
        return _LabmlHistory("")


class _LabmlHistory(cfrkit.History):
    def __init__(self, history: str) -> None:
        self.history = history

    def is_terminal(self) -> bool:
        h = self.history
        return len(h) > 2 and (h[-1] == "p" or h[-2:] == "bb")

    def is_chance(self) -> bool:
        return len(self.history) < 2  # labml deals player 1's card, then player 2's

    def chance_outcomes(self):
        left = [card for card in "AKQ" if card not in self.history]
        return tuple((card, 1 / len(left)) for card in left)

    def current_player(self) -> int:
        return len(self.history) % 2

    def actions(self):
        return ("p", "b")

    def child(self, action):
        return _LabmlHistory(self.history + action)

    def infoset_key(self) -> str:
        return self.history[self.current_player()] + self.history[2:]

    def utilities(self):
        h = self.history
        winner = 1 if h[0] < h[1] else -1  # labml compares the letters: "A" < "K" < "Q"
        if h[-2:] == "bp":
            won = 1
        elif h[-2:] == "bb":
            won = 2 * winner
        else:
            won = winner
        return (won, -won)


# -- small helpers ----------------------------------------------------------------------------------


def bets(policy: cfrkit.Policy, bet: str) -> dict[str, float]:
    return {key: row[bet] for key, row in policy.items()}


def as_policy(game, probabilities: dict[str, float], actions=("p", "b")) -> cfrkit.Policy:
    """A policy from each infoset's probability of the second action (bet)."""
    first, second = actions
    return cfrkit.Policy.from_dict(
        game, {k: {first: 1 - b, second: b} for k, b in probabilities.items()})


def train(game, iterations: int, seeds: list[int], tracked: list[str], bet: str):
    """ChanceSampledCFR(sample_per_player=True) for each seed; at every checkpoint, NashConv
    and the probability of ``bet`` at each ``tracked`` infoset."""
    points = marks(iterations, count=50)
    cfrkit.ChanceSampledCFR(game, seed=0, sample_per_player=True).iterate(1)  # compile, untimed
    cfrkit.evaluate(game, cfrkit.Policy.uniform(game))
    runs = []
    for seed in seeds:
        trainer = cfrkit.ChanceSampledCFR(game, seed=seed, sample_per_player=True)
        seconds, nash_conv, history = 0.0, [], []
        for mark in points:
            start = time.perf_counter()
            trainer.iterate(int(mark - trainer.iteration))
            seconds += time.perf_counter() - start
            policy = trainer.average_policy()
            nash_conv.append(cfrkit.nash_conv(game, policy))
            history.append([policy[key][bet] for key in tracked])
        runs.append(dict(trainer=trainer, seconds=seconds, nash_conv=np.array(nash_conv),
                         history=np.array(history), policy=trainer.average_policy()))
    return points, runs


# -- sections -------------------------------------------------------------------------------------------


def variant_section(iterations: int, seeds: list[int], out: Path):
    game = LabmlKuhn()
    compiled = cfrkit.compile_game(game)
    section(f"labml's game (labml_nn.cfr.kuhn, 6 infosets): the notebook's printout vs cfrkit, "
            f"{iterations:,} iterations")
    print(f"cfrkit: ChanceSampledCFR(LabmlKuhn(), sample_per_player=True, seed=s), seeds {seeds}: "
          f"{compiled.num_nodes} nodes, {compiled.num_infosets} infosets.\n"
          "labml: experiment.ipynb, 1,000,000 iterations, average strategy printed as the "
          "percentage of 'b' (bet / call).\n")
    keys = list(LABML_BET_PERCENT)
    points, runs = train(game, iterations, seeds, keys, "b")
    first = runs[0]["policy"]
    spread = np.array([[run["policy"][k]["b"] for k in LABML_BET_PERCENT] for run in runs])
    rows = []
    for j, key in enumerate(LABML_BET_PERCENT):
        player = compiled.infosets[key].player + 1
        rows.append([key, f"player {player}", f"{LABML_BET_PERCENT[key]:.1f}%",
                     f"{100 * first[key]['b']:.1f}%",
                     f"{100 * spread[:, j].min():.1f}% .. {100 * spread[:, j].max():.1f}%",
                     f"{100 * VARIANT_EQUILIBRIUM[key]:.1f}%"])
    table(rows, ["infoset", "who", "labml (1 run)", f"cfrkit (seed {seeds[0]})",
                 f"cfrkit, {len(seeds)} seeds: min .. max", "equilibrium"], "llrrrr")

    labml_policy = as_policy(game, {k: v / 100 for k, v in LABML_BET_PERCENT.items()})
    exact = as_policy(game, VARIANT_EQUILIBRIUM)
    values = cfrkit.expected_values(game, first)
    print()
    table([
        ["NashConv", f"{cfrkit.nash_conv(game, labml_policy):.2e}  (of its printed, rounded strategy)",
         f"{runs[0]['nash_conv'][-1]:.2e}  (seed {seeds[0]}; seeds: "
         f"{min(r['nash_conv'][-1] for r in runs):.1e} .. {max(r['nash_conv'][-1] for r in runs):.1e})",
         f"{cfrkit.nash_conv(game, exact):.1e}"],
        ["player 1 value", f"{cfrkit.expected_values(game, labml_policy)[0]:+.5f}  (of its printed strategy)",
         f"{values[0]:+.5f}", "+1/18 = +0.05556"],
        [f"seconds, {iterations:,} it.",
         f"{LABML_SECONDS * iterations / LABML_ITERATIONS:.1f}"
         + ("  (830.5 for 10^6, scaled)" if iterations != LABML_ITERATIONS else "  (with tracking)"),
         f"{np.mean([r['seconds'] for r in runs]):.3f}  (mean of {len(runs)})", ""],
    ], ["", "labml notebook", "cfrkit", "equilibrium"], "llll")
    worst = max(abs(LABML_BET_PERCENT[k] / 100 - VARIANT_EQUILIBRIUM[k]) for k in keys)
    print(f"\nlabml's printout lies within {100 * worst:.1f} percentage points of the variant's "
          "unique equilibrium; cfrkit's runs are\nabove, at the same number of iterations. "
          "labml's 830 s include its per-iteration tracking (36 series written\nto SQLite), so "
          "they time more than the algorithm.")

    # figures: strategy over iterations (the notebook's plot_infosets) and NashConv
    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 3.8), layout="constrained")
    for j, key in enumerate(keys):
        curves = np.array([run["history"][:, j] for run in runs])
        left.plot(points, curves.mean(axis=0), color=f"C{j}", label=key)
        left.fill_between(points, curves.min(axis=0), curves.max(axis=0), color=f"C{j}", alpha=0.2)
        left.axhline(VARIANT_EQUILIBRIUM[key], color=f"C{j}", linestyle="--", linewidth=0.8)
        left.plot([LABML_ITERATIONS], [LABML_BET_PERCENT[key] / 100], marker="x", color=f"C{j}",
                  markersize=8, linestyle="none")
    left.set_xscale("log")
    left.set_xlabel("iterations")
    left.set_ylabel("average probability of b (bet / call)")
    left.set_title("strategy (x: labml's printout; dashed: equilibrium)", fontsize="medium")
    left.legend(fontsize="small", ncol=2)
    curves = np.array([run["nash_conv"] for run in runs])
    right.plot(points, curves.mean(axis=0), color="C4", label="cfrkit, mean over seeds")
    right.fill_between(points, curves.min(axis=0), curves.max(axis=0), color="C4", alpha=0.2)
    right.plot([LABML_ITERATIONS], [cfrkit.nash_conv(game, labml_policy)], marker="x", color="k",
               linestyle="none", label="labml's printout (rounded)")
    right.set_xscale("log")
    right.set_yscale("log")
    right.set_xlabel("iterations")
    right.set_ylabel("NashConv of the average strategy")
    right.set_title("NashConv", fontsize="medium")
    right.legend(fontsize="small")
    fig.suptitle(f"labml's Kuhn variant, ChanceSampledCFR(sample_per_player=True), "
                 f"{len(seeds)} seeds (band: min..max)")
    save(fig, out / "labml_variant_convergence.png")


def kuhn_section(iterations: int, seeds: list[int], out: Path):
    game = KuhnPoker()
    section(f"Kuhn poker proper (cfrkit.games.KuhnPoker, 12 infosets): cfrkit vs Kuhn's 1950 "
            f"equilibrium family, {iterations:,} iterations")
    print("The tutorial's text speaks of Kuhn poker; this is the standard game (J < Q < K, player "
          "2 may bet after a pass,\nplayer 1 may then call). Kuhn's equilibria: player 1 bets J "
          "with alpha in [0, 1/3], K with 3 alpha, calls Q\nwith alpha + 1/3; player 2's strategy "
          "is unique. alpha is read off cfrkit's J row.\n")
    points, runs = train(game, iterations, seeds, ["J"], "bet")
    policy = runs[0]["policy"]
    alpha = min(max(policy["J"]["bet"], 0.0), 1 / 3)
    family = kuhn_1950(alpha)
    spread = np.array([[run["policy"][k]["bet"] for k in family] for run in runs])
    rows = []
    for j, key in enumerate(family):
        player = cfrkit.compile_game(game).infosets[key].player + 1
        rows.append([key, f"player {player}", f"{policy[key]['bet']:.4f}",
                     f"{spread[:, j].min():.4f} .. {spread[:, j].max():.4f}",
                     f"{family[key]:.4f}", f"{abs(policy[key]['bet'] - family[key]):.1e}"])
    table(rows, ["infoset", "who", f"cfrkit (seed {seeds[0]})", f"{len(seeds)} seeds: min .. max",
                 f"Kuhn, alpha={alpha:.4f}", "|difference|"], "llrrrr")
    values = cfrkit.expected_values(game, policy)
    print()
    table([
        ["player 1 value", f"{values[0]:+.5f}", "-1/18 = -0.05556"],
        ["NashConv", f"{runs[0]['nash_conv'][-1]:.2e}  (seeds: "
         f"{min(r['nash_conv'][-1] for r in runs):.1e} .. {max(r['nash_conv'][-1] for r in runs):.1e})",
         f"{cfrkit.nash_conv(game, as_policy(game, family, ('pass', 'bet'))):.1e}  "
         "(Kuhn's profile at this alpha)"],
        [f"seconds, {iterations:,} it.", f"{np.mean([r['seconds'] for r in runs]):.3f}", ""],
    ], ["", "cfrkit", "Kuhn 1950"], "lll")

    fig = cfrkit.plot.strategy(policy)
    fig.suptitle(f"Kuhn poker, ChanceSampledCFR\n{iterations:,} iterations, seed {seeds[0]}",
                 fontsize="medium")
    save(fig, out / "kuhn_strategy.png")
    fig, ax = plt.subplots(figsize=(5.5, 3.8), layout="constrained")
    curves = np.array([run["nash_conv"] for run in runs])
    ax.plot(points, curves.mean(axis=0), color="C4", label="mean over seeds")
    ax.fill_between(points, curves.min(axis=0), curves.max(axis=0), color="C4", alpha=0.2,
                    label="min..max")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("iterations")
    ax.set_ylabel("NashConv of the average strategy")
    ax.set_title("Kuhn poker, ChanceSampledCFR(sample_per_player=True)", fontsize="medium")
    ax.legend(fontsize="small")
    save(fig, out / "kuhn_nash_conv.png")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        description=__doc__.splitlines()[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, default=HERE / "output" / NAME,
                        help="directory for the figures and output.txt (default: %(default)s)")
    parser.add_argument("--quick", action="store_true",
                        help="small sizes, a few seconds (also: CFRKIT_EXAMPLES_QUICK=1)")
    parser.add_argument("--iterations", type=int, default=None,
                        help="iterations per run (default 10^6, as the notebook; quick 10^4)")
    parser.add_argument("--seeds", type=int, default=None, help="number of seeds (default 5; quick 2)")
    args = parser.parse_args(argv)
    args.quick = args.quick or os.environ.get("CFRKIT_EXAMPLES_QUICK", "") not in ("", "0")
    iterations = args.iterations or (10_000 if args.quick else LABML_ITERATIONS)
    seeds = list(range(args.seeds or (2 if args.quick else 5)))
    out = args.out
    out.mkdir(parents=True, exist_ok=True)

    with open(out / "output.txt", "w") as log, contextlib.redirect_stdout(_Tee(sys.stdout, log)):
        print(header(NAME, args))
        print("labml.ai, Regret Minimization in Games with Incomplete Information (CFR), "
              "nn.labml.ai/cfr (V. Jayasiri),\nand its notebook labml_nn/cfr/kuhn/experiment.ipynb: "
              "Monte Carlo CFR with chance sampling on Kuhn poker.")
        started = time.perf_counter()
        variant_section(iterations, seeds, out)
        kuhn_section(iterations, seeds, out)
        print(f"\n[done in {time.perf_counter() - started:.0f} s]")


if __name__ == "__main__":
    main()
