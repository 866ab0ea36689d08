"""Ashraf (2024), *Understanding and Implementing Counterfactual Regret Minimisation*, reproduced
with cfrkit.

The report (University of Leeds, BSc project) runs regret matching on Rock-Paper-Scissors and
Rock-Paper-Scissors-Lizard-Spock against fixed opponents and in self-play, 10^4 and 10^6
iterations, and prints the average strategy, a per-action error and the time (Section 3, pp.
20-25); then Kuhn poker, 3,000 and 30,000 iterations (Section 3.3, p. 26).

The error, as the report defines and prints it: |p - e| / e for an expected probability e > 0,
and p itself where e = 0 (Section 3.1.2's note), in percent; an "average error" is the mean over
the actions (Section 3.1.4). The same definition is applied to cfrkit's numbers. Because it
depends on which equilibrium or best response is "expected", the tables also give a number that
does not: the **gap**, what a best response would gain over the strategy -- against the fixed
opponent, max_a u(a) - u(strategy); in self-play and on Kuhn, NashConv.

cfrkit runs, side by side:

* **exact**: ``VanillaCFR`` -- regret matching on exact expected regrets. A fixed opponent is
  node locking, ``VanillaCFR(game, fixed={"P1": opponent})``: player P1 is the opponent, P0
  learns (the report's "player"). Self-play is plain ``VanillaCFR(game)``.
* **sampled**: ``ExternalSamplingCFR`` (seeded) -- each iteration samples the other player's
  action and updates every own action's regret against it, the closest cfrkit trainer to the
  report's loop, which samples the opponent's action (and its own) each round.

What differs, and why the report's numbers differ from cfrkit's:

* The report's fixed-opponent loop (``train``, Appendix B) adds 0.1 to every action's regret each
  round and never resets the utility of the action that ties with the opponent's (it keeps the
  value from an earlier round). Against (0.4, 0.2, 0.2, 0.1, 0.1) in RPSLS the only best
  response is Spock (expected payoffs: rock 0, paper 0.2, scissors -0.2, lizard -0.3, Spock 0.3);
  the report's paper share of 0.23 is the fixed point of its update, not a second best
  response: with the stale tie utility paper earns 0.25 and Spock 1/3 in expectation, and with
  the +0.1 both keep a positive regret while p^2 + 0.2 p - 0.1 = 0, p = 0.232 on paper. Exact
  regret matching (and the sampled trainer) converge to Spock alone. The table keeps the
  report's "expected" column (paper 1, Spock 1) for its error, and the gap shows the
  difference.
* Against the uniform opponent every strategy is a best response and every exact regret is 0,
  so ``VanillaCFR`` stays exactly uniform (error 0); the report's errors there are sampling
  noise. In self-play, exact CFR starts at uniform, the equilibrium, and stays there.
* The report's self-play loop credits the opponent with the negation of the player's regrets
  (not the opponent's own); cfrkit updates each player with its own regrets.
* Section 3.2.2 prints the same times as Section 3.1.2 (0.0320 s, 3.1591 s), and its 10^6
  table drops the "Expected Value" heading; the numbers are used as printed.
* Kuhn poker: the report ran J. Gardner's code (its reference [9]; Section 2.4 describes V.
  Jayasiri's instead), whose "strategy to bet" column is its strategy after N iterations, next to
  the equilibrium with alpha = 1/3. cfrkit prints ``VanillaCFR``'s average strategy after the
  same numbers of iterations. Kuhn's equilibria form a family (player 1 bets J with alpha in
  [0, 1/3], K with 3 alpha, calls Q with alpha + 1/3): the report's "outlier" K = 0.88 after
  30,000 iterations matches 3 alpha for its own J = 0.29, so the error against the alpha = 1/3
  member is not a distance from equilibrium; the tables add the error against the member with
  alpha read off each strategy's J, and NashConv.
* Different machines, and the report is pure Python: its seconds and cfrkit's are not a
  like-for-like race, only an order of magnitude.

Usage::

    python examples/ashraf_2024.py              # full size: 10^4 and 10^6; Kuhn 3,000 and 30,000
    python examples/ashraf_2024.py --quick      # a few seconds (or CFRKIT_EXAMPLES_QUICK=1)
    python examples/ashraf_2024.py --out DIR    # figures and output.txt into DIR

Timings are wall-clock seconds on the machine that runs this; on a shared machine they are
noisy, and the 10^4-iteration ones are a millisecond or so.
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
from cfrkit.games import RPSLS, KuhnPoker, RockPaperScissors  # noqa: E402

NAME = Path(__file__).stem
HERE = Path(__file__).resolve().parent

# -- the report's numbers (Section 3) ----------------------------------------------------------------

THIRD = (1 / 3, 1 / 3, 1 / 3)
FIFTH = (0.2,) * 5
SCENARIOS = [
    dict(game="RPS", where="3.1.1, p. 20", title="RPS vs fixed opponent (1/3, 1/3, 1/3)", short="RPS vs uniform",
         opponent=THIRD, expected=THIRD, best=None, report={
             10_000: dict(seconds=0.0335, player=(0.4019014, 0.269793, 0.3283056)),
             1_000_000: dict(seconds=3.1971, player=(0.3389359, 0.3224602, 0.3386039))}),
    dict(game="RPS", where="3.1.2, p. 21", title="RPS vs fixed opponent (0.4, 0.3, 0.3)", short="RPS vs (.4,.3,.3)",
         opponent=(0.4, 0.3, 0.3), expected=(0, 1, 0), best=(0, 1, 0), report={
             10_000: dict(seconds=0.0320, player=(0.0506881, 0.9477926, 0.0015193)),
             1_000_000: dict(seconds=3.1591, player=(0.0009948, 0.9990046, 7e-07))}),
    dict(game="RPS", where="3.1.3, p. 22", title="RPS self-play (Nash equilibrium)", short="RPS self-play",
         opponent=None, expected=THIRD, best=THIRD, report={
             10_000: dict(seconds=0.0351, player=(0.3251962, 0.3090767, 0.3657271),
                          opponent=(0.3462859, 0.3475631, 0.3061508)),
             1_000_000: dict(seconds=3.6111, player=(0.3275012, 0.3373142, 0.3351847),
                             opponent=(0.3381471, 0.3313360, 0.3305167))}),
    dict(game="RPSLS", where="3.2.1, p. 23", title="RPSLS vs fixed opponent (0.2, ..., 0.2)", short="RPSLS vs uniform",
         opponent=FIFTH, expected=FIFTH, best=None, report={
             10_000: dict(seconds=0.0430, player=(0.17948, 0.24457, 0.12533, 0.2126, 0.23802)),
             1_000_000: dict(seconds=4.2607, player=(0.19607, 0.20586, 0.19349, 0.20687, 0.1977))}),
    dict(game="RPSLS", where="3.2.2, p. 24", title="RPSLS vs fixed opponent (0.4, 0.2, 0.2, 0.1, 0.1)",
         short="RPSLS vs (.4,.2,.2,.1,.1)",
         opponent=(0.4, 0.2, 0.2, 0.1, 0.1), expected=(0, 1, 0, 0, 1), best=(0, 0, 0, 0, 1), report={
             10_000: dict(seconds=0.0320, player=(0.00038, 0.26443, 0.00058, 0.00039, 0.73422)),
             1_000_000: dict(seconds=3.1591, player=(0.0, 0.23069, 0.0, 0.0, 0.7693))}),
    dict(game="RPSLS", where="3.2.3, p. 25", title="RPSLS self-play (Nash equilibrium)", short="RPSLS self-play",
         opponent=None, expected=FIFTH, best=FIFTH, report={
             10_000: dict(seconds=0.0505, player=(0.18398, 0.16511, 0.20064, 0.23490, 0.21534),
                          opponent=(0.21410, 0.22464, 0.20363, 0.17698, 0.18063)),
             1_000_000: dict(seconds=4.7908, player=(0.20203, 0.19823, 0.20157, 0.19655, 0.20160),
                             opponent=(0.20083, 0.19956, 0.19895, 0.20071, 0.19992))}),
]
REPORT_SIZES = (10_000, 1_000_000)

KUHN_KEYS = ("K", "Q", "J", "Kb", "Qb", "Jb", "Kp", "Qp", "Jp", "Kpb", "Qpb", "Jpb")
KUHN_EXPECTED = dict(zip(KUHN_KEYS, (1, 0, 1 / 3, 1, 1 / 3, 0, 1, 0, 1 / 3, 1, 2 / 3, 0)))
KUHN_REPORT = {  # Section 3.3, p. 26: iterations -> (seconds, probability of betting per infoset)
    3_000: (0.8401, dict(zip(KUHN_KEYS, (0.8451, 0.0659, 0.2619, 0.9796, 0.3562, 0.0230,
                                         0.9701, 0.0643, 0.3358, 0.9807, 0.6098, 0.0216)))),
    30_000: (28.4594, dict(zip(KUHN_KEYS, (0.8835, 0.0187, 0.2918, 0.9928, 0.3489, 0.0074,
                                           0.9909, 0.0225, 0.3298, 0.9933, 0.6324, 0.0070)))),
}


def kuhn_1950(alpha: float) -> dict[str, float]:
    """Kuhn's (1950) equilibrium family, alpha in [0, 1/3]: probability of betting (calling)."""
    return {"K": 3 * alpha, "Q": 0.0, "J": alpha, "Kb": 1.0, "Qb": 1 / 3, "Jb": 0.0,
            "Kp": 1.0, "Qp": 0.0, "Jp": 1 / 3, "Kpb": 1.0, "Qpb": alpha + 1 / 3, "Jpb": 0.0}


def error(p: float, e: float) -> float:
    """The report's per-action error, in percent: |p - e| / e, or p where e = 0."""
    return 100 * (abs(p - e) / e if e > 0 else p)


def pct(x: float) -> str:
    """A percentage to 3 significant digits; rounding noise below 1e-9 % shows as 0%."""
    return "0%" if abs(x) < 1e-9 else f"{x:.3g}%"


# -- small helpers --------------------------------------------------------------------------------


def normalised(row) -> np.ndarray:
    row = np.asarray(row, dtype=float)
    return row / row.sum()  # the report's rounded rows sum to 1 only to ~1e-5


# -- regret matching on RPS and RPSLS ----------------------------------------------------------------


def actions_of(game) -> tuple[str, ...]:
    """The action labels, from the compiled game's infoset of P0."""
    return cfrkit.compile_game(game).infosets["P0"].actions


def make_trainer(kind: str, game, scenario: dict, seed: int):
    fixed = None
    if scenario["opponent"] is not None:
        fixed = {"P1": dict(zip(actions_of(game), scenario["opponent"]))}
    if kind == "exact":
        return cfrkit.VanillaCFR(game, fixed=fixed)
    return cfrkit.ExternalSamplingCFR(game, seed=seed, fixed=fixed)


def gap(game, player: np.ndarray, opponent: np.ndarray, self_play: bool) -> float:
    """What a best response gains: against the fixed opponent, for the player; else NashConv."""
    policy = cfrkit.Policy.from_dict(game, {
        "P0": dict(zip(actions_of(game), normalised(player))),
        "P1": dict(zip(actions_of(game), normalised(opponent))),
    })
    if self_play:
        return cfrkit.nash_conv(game, policy)
    return cfrkit.best_response(game, policy, 0).value - cfrkit.expected_values(game, policy)[0]


def run_scenario(scenario: dict, sizes: tuple[int, int], seed: int) -> dict:
    game = RockPaperScissors() if scenario["game"] == "RPS" else RPSLS()
    results = {}
    for kind in ("exact", "sampled"):
        make_trainer(kind, game, scenario, seed).iterate(1)  # compile, untimed
        for n in sizes:
            trainer = make_trainer(kind, game, scenario, seed)
            start = time.perf_counter()
            trainer.iterate(n)
            seconds = time.perf_counter() - start
            policy = trainer.average_policy()
            results[kind, n] = dict(
                seconds=seconds,
                player=np.array([policy["P0"][a] for a in actions_of(game)]),
                opponent=np.array([policy["P1"][a] for a in actions_of(game)]))
        # the same seeded run again, tracked at checkpoints for the figure (not timed)
        trainer = make_trainer(kind, game, scenario, seed)
        points, history = marks(max(sizes), count=50, decades=False), []
        for mark in points:
            trainer.iterate(int(mark - trainer.iteration))
            history.append([trainer.average_policy()["P0"][a] for a in actions_of(game)])
        results[kind, "history"] = (points, np.array(history))
    return dict(game=game, results=results)


def scenario_tables(scenario: dict, run: dict, sizes: tuple[int, int]) -> list[list]:
    """Print the per-action error tables of one scenario; return its summary rows."""
    game, results = run["game"], run["results"]
    self_play = scenario["opponent"] is None
    section(f"Section {scenario['where']}: {scenario['title']}")
    expected = np.array(scenario["expected"], dtype=float)
    if scenario["opponent"] is not None:
        opponent = np.array(scenario["opponent"])
        payoff = np.array([cfrkit.expected_values(game, cfrkit.Policy.from_dict(game, {
            "P0": {b: float(a == b) for b in actions_of(game)},
            "P1": dict(zip(actions_of(game), opponent))}))[0] for a in actions_of(game)])
        print("Expected payoff of each action against the fixed opponent: "
              + ", ".join(f"{a} {u:+.2f}" for a, u in zip(actions_of(game), payoff)))
        if scenario["best"] is None:
            print("Every action earns the same, so every strategy is a best response (gap 0) and the "
                  "error measures\nnothing about play: exact regrets are all 0 and VanillaCFR stays "
                  "uniform; sampled regrets are zero-mean\nrandom walks and the sampled average "
                  "wanders; the report's +0.1 per round pulls its strategy towards uniform.")
        else:
            best = [a for a, b in zip(actions_of(game), scenario["best"]) if b]
            print(f"The best response: {' and '.join(best)}. ", end="")
        print("'expected' below is the report's column.")
    summary = []
    who = [("player", "player")] + ([("opponent", "opponent")] if self_play else [])
    for report_n, n in zip(REPORT_SIZES, sizes):
        report = scenario["report"][report_n]
        exact, sampled = results["exact", n], results["sampled", n]
        rows = []
        for label, field in who:
            for i, action in enumerate(actions_of(game)):
                p_r, p_e, p_s = report[field][i], exact[field][i], sampled[field][i]
                rows.append([label, action, f"{expected[i]:.4f}",
                             f"{p_r:.7f}", pct(error(p_r, expected[i])),
                             f"{p_e:.7f}", pct(error(p_e, expected[i])),
                             f"{p_s:.7f}", pct(error(p_s, expected[i]))])
        print(f"\nreport: {report_n:,} iterations, {report['seconds']:.4f} s.  cfrkit: {n:,} "
              f"iterations, exact {exact['seconds']:.4f} s, sampled {sampled['seconds']:.4f} s.")
        table(rows, ["", "action", "expected", "report p", "error", "cfrkit exact p", "error",
                     "cfrkit sampled p", "error"], "llrrrrrrr")

        def mean_error(probs):
            return np.mean([error(p, e) for p, e in zip(probs, expected)])

        fixed = np.array(scenario["opponent"] or expected)
        opp_r = report.get("opponent", fixed)
        summary.append([
            scenario["where"].split(",")[0], scenario["short"], f"{report_n:,} / {n:,}",
            pct(mean_error(report['player'])), pct(mean_error(exact['player'])),
            pct(mean_error(sampled['player'])),
            f"{gap(game, report['player'], opp_r, self_play):.2e}",
            f"{gap(game, exact['player'], exact['opponent'], self_play):.2e}",
            f"{gap(game, sampled['player'], sampled['opponent'], self_play):.2e}",
            f"{report['seconds']:.4f}", f"{exact['seconds']:.4f}", f"{sampled['seconds']:.4f}",
        ])
    if scenario["best"] is not None and scenario["best"] != scenario["expected"]:
        best = np.array(scenario["best"], dtype=float)
        rows = []
        for report_n, n in zip(REPORT_SIZES, sizes):
            for name, probs in (("report", scenario["report"][report_n]["player"]),
                                ("cfrkit exact", results["exact", n]["player"]),
                                ("cfrkit sampled", results["sampled", n]["player"])):
                size = report_n if name == "report" else n
                rows.append([name, f"{size:,}"] + [pct(error(p, b)) for p, b in zip(probs, best)]
                            + [pct(np.mean([error(p, b) for p, b in zip(probs, best)]))])
        print("\nThe same errors against the exact best response (Spock alone):")
        table(rows, ["", "iterations", *actions_of(game), "average"])
    return summary


def strategy_figure(game_name: str, scenarios: list[dict], runs: list[dict], out: Path):
    fig, axes = plt.subplots(1, len(scenarios), figsize=(12, 3.6), layout="constrained",
                             sharey=True)
    for ax, scenario, run in zip(axes, scenarios, runs):
        game = run["game"]
        for kind, style in (("exact", "-"), ("sampled", "--")):
            points, history = run["results"][kind, "history"]
            for i, action in enumerate(actions_of(game)):
                ax.plot(points, history[:, i], color=f"C{i}", linestyle=style,
                        label=action if kind == "exact" else None)
        for report_n in REPORT_SIZES:
            for i in range(len(actions_of(game))):
                ax.plot([report_n], [scenario["report"][report_n]["player"][i]], marker="x",
                        color=f"C{i}", linestyle="none", markersize=7)
        ax.set_xscale("log")
        ax.set_ylim(-0.05, 1.05)
        ax.set_xlabel("iterations")
        ax.set_title(f"{scenario['title'].replace(game_name + ' ', '')}\n(Sec. {scenario['where']})",
                     fontsize="small")
    axes[0].set_ylabel("average strategy of P0 (the player)")
    axes[0].legend(fontsize="x-small", loc="upper right")
    fig.suptitle(f"{game_name}: cfrkit exact (solid) and sampled (dashed); x: the report's numbers",
                 fontsize="medium")
    save(fig, out / f"{game_name.lower()}_strategies.png")


# -- Kuhn poker ---------------------------------------------------------------------------------------


def kuhn_section(sizes: tuple[int, int], out: Path) -> list[list]:
    game = KuhnPoker()
    section("Section 3.3, p. 26: Kuhn poker, probability of betting (calling) per infoset")
    cfrkit.VanillaCFR(game).iterate(1)  # compile, untimed
    policies, seconds = {}, {}
    for n in sizes:
        trainer = cfrkit.VanillaCFR(game)
        start = time.perf_counter()
        trainer.iterate(n)
        seconds[n] = time.perf_counter() - start
        policies[n] = trainer.average_policy()

    def as_policy(bets):
        return cfrkit.Policy.from_dict(game, {k: {"pass": 1 - b, "bet": b} for k, b in bets.items()})

    summary, bars = [], {}
    for report_n, n in zip(KUHN_REPORT, sizes):
        report_seconds, report = KUHN_REPORT[report_n]
        mine = {k: policies[n][k]["bet"] for k in KUHN_KEYS}
        alpha_r = min(max(report["J"], 0.0), 1 / 3)
        alpha_c = min(max(mine["J"], 0.0), 1 / 3)
        fam_r, fam_c = kuhn_1950(alpha_r), kuhn_1950(alpha_c)
        rows = []
        for key in KUHN_KEYS:
            player = "player 1" if len(key) != 2 else "player 2"
            rows.append([key, player, f"{KUHN_EXPECTED[key]:.4f}",
                         f"{report[key]:.4f}", pct(error(report[key], KUHN_EXPECTED[key])),
                         pct(error(report[key], fam_r[key])),
                         f"{mine[key]:.4f}", pct(error(mine[key], KUHN_EXPECTED[key])),
                         pct(error(mine[key], fam_c[key]))])
        print(f"\nreport: {report_n:,} iterations, {report_seconds:.4f} s.  cfrkit VanillaCFR: "
              f"{n:,} iterations, {seconds[n]:.4f} s (average strategy).")
        print(f"Errors: 'vs 1/3' = against the report's expected column (the alpha = 1/3 "
              f"equilibrium); 'vs own alpha' = against\nKuhn's equilibrium with alpha = the "
              f"strategy's own J (report: {alpha_r:.4f}, cfrkit: {alpha_c:.4f}).")
        table(rows, ["infoset", "who", "expected", "report", "vs 1/3", "vs own alpha",
                     "cfrkit", "vs 1/3", "vs own alpha"], "llrrrrrrr")
        nash_r = cfrkit.nash_conv(game, as_policy(report))
        nash_c = cfrkit.nash_conv(game, policies[n])
        avg = lambda probs, target: np.mean([error(probs[k], target[k]) for k in KUHN_KEYS])  # noqa: E731
        print()
        table([
            ["average error vs 1/3 (report's measure)", f"{avg(report, KUHN_EXPECTED):.3g}%",
             f"{avg(mine, KUHN_EXPECTED):.3g}%"],
            ["average error vs own alpha", f"{avg(report, fam_r):.3g}%", f"{avg(mine, fam_c):.3g}%"],
            ["NashConv (exact, cfrkit)", f"{nash_r:.2e}", f"{nash_c:.2e}"],
            ["player 1 value (-1/18 = -0.05556)",
             f"{cfrkit.expected_values(game, as_policy(report))[0]:+.5f}",
             f"{cfrkit.expected_values(game, policies[n])[0]:+.5f}"],
            ["seconds", f"{report_seconds:.4f}", f"{seconds[n]:.4f}"],
        ], ["", f"report, {report_n:,} it.", f"cfrkit, {n:,} it."], "lrr")
        summary.append(["3.3", "Kuhn poker (VanillaCFR)", f"{report_n:,} / {n:,}",
                        f"{avg(report, KUHN_EXPECTED):.3g}%", f"{avg(mine, KUHN_EXPECTED):.3g}%",
                        "", f"{nash_r:.2e}", f"{nash_c:.2e}", "",
                        f"{report_seconds:.4f}", f"{seconds[n]:.4f}", ""])
        bars[report_n, n] = (report, mine)

    fig, ax = plt.subplots(figsize=(11, 3.8), layout="constrained")
    x = np.arange(len(KUHN_KEYS))
    width = 0.2
    for j, ((report_n, n), (report, mine)) in enumerate(bars.items()):
        ax.bar(x + (2 * j - 1.5) * width, [report[k] for k in KUHN_KEYS], width,
               color=f"C{j}", alpha=0.45, label=f"report, {report_n:,} it.")
        ax.bar(x + (2 * j - 0.5) * width, [mine[k] for k in KUHN_KEYS], width,
               color=f"C{j}", label=f"cfrkit VanillaCFR, {n:,} it.")
    ax.plot(x, [KUHN_EXPECTED[k] for k in KUHN_KEYS], "k_", markersize=22, markeredgewidth=2,
            label="report's expected (alpha = 1/3)")
    ax.set_xticks(x, KUHN_KEYS)
    ax.set_ylabel("probability of betting (calling)")
    ax.set_title("Kuhn poker (cf. the report's Section 3.3)", fontsize="medium")
    ax.legend(fontsize="x-small", ncol=3, loc="upper center")
    ax.set_ylim(0, 1.25)
    save(fig, out / "kuhn_bet_probabilities.png")
    fig = cfrkit.plot.strategy(policies[sizes[-1]])
    fig.suptitle(f"Kuhn poker, VanillaCFR\n{sizes[-1]:,} iterations", fontsize="medium")
    save(fig, out / "kuhn_strategy.png")
    return summary


# -- main --------------------------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        description=__doc__.splitlines()[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, default=HERE / "output" / NAME,
                        help="directory for the figures and output.txt (default: %(default)s)")
    parser.add_argument("--quick", action="store_true",
                        help="small sizes, a few seconds (also: CFRKIT_EXAMPLES_QUICK=1)")
    parser.add_argument("--seed", type=int, default=2024, help="seed of the sampled runs")
    args = parser.parse_args(argv)
    args.quick = args.quick or os.environ.get("CFRKIT_EXAMPLES_QUICK", "") not in ("", "0")
    sizes = (1_000, 10_000) if args.quick else REPORT_SIZES
    kuhn_sizes = (300, 3_000) if args.quick else tuple(KUHN_REPORT)
    out = args.out
    out.mkdir(parents=True, exist_ok=True)

    with open(out / "output.txt", "w") as log, contextlib.redirect_stdout(_Tee(sys.stdout, log)):
        print(header(NAME, args))
        print("Ashraf, M. S. (2024). Understanding and Implementing Counterfactual Regret "
              "Minimisation. BSc final report,\nUniversity of Leeds. Regret matching on RPS and "
              "RPSLS, CFR on Kuhn poker, in Python.")
        if args.quick:
            print(f"\nQuick mode: cfrkit runs {sizes[0]:,} / {sizes[1]:,} iterations (RPS, RPSLS) "
                  f"and {kuhn_sizes[0]:,} / {kuhn_sizes[1]:,} (Kuhn)\nwhere the report ran "
                  f"10,000 / 1,000,000 and 3,000 / 30,000.")
        print("\nerror = |p - e| / e (or p where e = 0), in percent -- the report's definition. "
              "cfrkit exact = VanillaCFR,\ncfrkit sampled = ExternalSamplingCFR(seed="
              f"{args.seed}); the opponent is P1 (held fixed by node locking), the player P0.")
        started = time.perf_counter()
        summary = []
        for game_name in ("RPS", "RPSLS"):
            scenarios = [s for s in SCENARIOS if s["game"] == game_name]
            runs = [run_scenario(s, sizes, args.seed) for s in scenarios]
            for scenario, run in zip(scenarios, runs):
                summary += scenario_tables(scenario, run, sizes)
            strategy_figure(game_name, scenarios, runs, out)
        summary += kuhn_section(kuhn_sizes, out)

        section("Summary: average error, gap (what a best response gains), seconds")
        print("gap: against a fixed opponent, max_a u(a) - u(strategy) for the player; in "
              "self-play and on Kuhn, NashConv.\n")
        table([row[:9] for row in summary],
              ["sec.", "scenario", "iterations (report / cfrkit)", "avg error: report", "exact",
               "sampled", "gap: report", "exact", "sampled"], "lllrrrrrr")
        print("\nSeconds (report: its machine, pure Python; cfrkit: this machine, compilation "
              "excluded):\n")
        table([row[:3] + row[9:] for row in summary],
              ["sec.", "scenario", "iterations (report / cfrkit)", "report", "cfrkit exact",
               "cfrkit sampled"], "lllrrr")
        print("\nThe report's RPS times (about 3.2 s per 10^6 iterations, Section 3.2.4) are pure "
              "Python on its machine; cfrkit's\nare numba kernels on this one. Section 3.2.2 "
              "repeats Section 3.1.2's times to the digit.")
        print(f"\n[done in {time.perf_counter() - started:.0f} s]")


if __name__ == "__main__":
    main()
