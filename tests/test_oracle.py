"""The oracle itself (tests/reference.py) is right: checked against OpenSpiel, against the
hand computations, and against its own unbiasedness.

Everything here walks games through the abstract Game/History API only; no numba kernel runs.
"""

from __future__ import annotations

import dataclasses
import itertools
import math
import random
from types import SimpleNamespace

import numpy as np
import pytest

from cfrkit.games import KuhnPoker, RockPaperScissors
from cfrkit.games.matrix import MatrixGame

from reference import (
    ORACLE_RULES,
    OracleRule,
    ReferenceCFR,
    infosets,
    read_rule,
    reference_cfr,
    reference_nash_conv,
    regret_matching,
    regret_pass,
    uniform_policy,
)
from spec_game import C, D, SpecGame, T

TOL = 1e-12


def max_abs_diff(ours: dict, theirs: dict) -> float:
    """Largest entry-wise difference of two dict-of-dict tables; ``theirs`` may omit zeros."""
    assert set(ours) == set(theirs)
    return max(abs(ours[k][a] - theirs[k].get(a, 0.0)) for k in ours for a in ours[k])


def assert_tables_close(ours: dict, theirs: dict, tol: float = TOL) -> None:
    assert set(ours) == set(theirs)
    for key in ours:
        assert list(ours[key]) == list(theirs[key]), key
        for action, value in theirs[key].items():
            assert ours[key][action] == pytest.approx(value, abs=tol, rel=tol), (key, action)


def random_profile(game, seed: int, zero_share: float = 0.3) -> dict:
    """Random rows with some actions at probability 0 (the first action always kept)."""
    rng = np.random.default_rng(seed)
    profile = {}
    for key, (_player, actions) in infosets(game).items():
        row = rng.dirichlet(np.ones(len(actions)))
        row[1:][rng.random(len(actions) - 1) < zero_share] = 0.0
        row /= row.sum()
        profile[key] = {a: float(p) for a, p in zip(actions, row)}
    return profile


# ============================================================================================
# 2. OpenSpiel: CFR+ (C++), Linear CFR and DCFR (python) number for number
# ============================================================================================


@pytest.fixture(scope="module")
def pyspiel():
    return pytest.importorskip("pyspiel")


def openspiel_game(name: str):
    from cfrkit.openspiel import from_openspiel

    return from_openspiel(name)


def python_tabular_rows(tabular, keys) -> dict:
    """Rows of OpenSpiel's python TabularPolicy for the given information-state strings."""
    probabilities = tabular.action_probability_array
    return {
        key: {a: float(p) for a, p in enumerate(probabilities[tabular.state_lookup[key]])}
        for key in keys
    }


@pytest.mark.parametrize("name", ["kuhn_poker", "kuhn_poker(players=3)"])
@pytest.mark.parametrize("alternating", [True, False])
def test_vanilla_matches_openspiel_python_cfr_solver(pyspiel, name, alternating):
    from open_spiel.python.algorithms import cfr

    game = openspiel_game(name)
    solver = cfr._CFRSolver(  # noqa: SLF001 - the base class takes the alternating switch
        game.openspiel_game, alternating_updates=alternating, linear_averaging=False,
        regret_matching_plus=False,
    )
    oracle = ReferenceCFR(game, alternating=alternating)
    result = reference_cfr(game, 0, alternating)  # the old entry point is the same solver
    assert result.iterations == 0 and result.alternating == alternating
    for iteration in range(1, 31):
        solver.evaluate_and_update_policy()
        oracle.iterate()
        if iteration in (1, 2, 7, 30):
            keys = list(oracle.regrets)
            theirs = python_tabular_rows(solver.average_policy(), keys)
            assert max_abs_diff(oracle.average_policy(), theirs) < TOL
    assert reference_cfr(game, 30, alternating).average == oracle.average_policy()


@pytest.mark.parametrize("name", ["kuhn_poker", "kuhn_poker(players=3)"])
def test_cfr_plus_matches_openspiel_cpp_cfr_plus_solver(pyspiel, name):
    game = openspiel_game(name)
    solver = pyspiel.CFRPlusSolver(game.openspiel_game)
    oracle = ReferenceCFR(game, rule=OracleRule(floor=True, gamma=1.0))
    # the former switches are the same rule
    assert ReferenceCFR(game, floor=True, gamma=1).rule == oracle.rule == ORACLE_RULES["cfr_plus"]
    checked = 0
    for iteration in range(1, 51):
        solver.evaluate_and_update_policy()
        oracle.iterate()
        if iteration not in (1, 2, 7, 50):
            continue
        average = oracle.average_policy()
        theirs = {k: dict(v) for k, v in solver.tabular_average_policy().policy_table().items()}
        assert max_abs_diff(average, theirs) < TOL
        current = solver.current_policy()
        assert max_abs_diff(oracle.current, {k: dict(current.get_state_policy(k))
                                             for k in oracle.current}) < TOL
        their_nash_conv = pyspiel.nash_conv(game.openspiel_game, solver.average_policy())
        assert reference_nash_conv(game, average) == pytest.approx(their_nash_conv, abs=TOL)
        checked += 1
    assert checked == 4 and oracle.iteration == 50


@pytest.mark.parametrize(
    "name, iterations", [("kuhn_poker", 100), ("kuhn_poker(players=3)", 20)]
)
@pytest.mark.parametrize("rule", ["linear", "dcfr"])
def test_linear_and_discounted_match_openspiel_python_solvers(pyspiel, name, iterations, rule):
    from open_spiel.python.algorithms import discounted_cfr

    game = openspiel_game(name)
    if rule == "linear":
        solver = discounted_cfr.LCFRSolver(game.openspiel_game)
        oracle = ReferenceCFR(game, alpha=1, beta=1, gamma=1)
    else:
        solver = discounted_cfr.DCFRSolver(game.openspiel_game)  # alpha 3/2, beta 0, gamma 2
        oracle = ReferenceCFR(game, alpha=1.5, beta=0, gamma=2)
    assert oracle.rule == ORACLE_RULES[rule]
    nodes = solver._info_state_nodes  # noqa: SLF001 - the cumulative regrets, to compare
    assert set(nodes) == set(oracle.regrets)
    for iteration in range(1, iterations + 1):
        solver.evaluate_and_update_policy()
        oracle.iterate()
        if iteration not in (1, 2, 7, 20, 100):
            continue
        keys = list(oracle.regrets)
        average = python_tabular_rows(solver.average_policy(), keys)
        assert max_abs_diff(oracle.average_policy(), average) < TOL
        # regret matching amplifies rounding in the (tiny, discounted) regrets: looser here
        current = python_tabular_rows(solver.current_policy(), keys)
        assert max_abs_diff(oracle.current, current) < 1e-10
        for key, node in nodes.items():
            for action in node.legal_actions:
                assert oracle.regrets[key][action] == pytest.approx(
                    node.cumulative_regret[action], abs=1e-10, rel=1e-10
                ), (iteration, key, action)


# ============================================================================================
# 3. Every rule on matrix games: the formulas by hand (numpy on the payoff matrices)
# ============================================================================================

RPS_MATRIX = np.array([[0.0, -1.0, 1.0], [1.0, 0.0, -1.0], [-1.0, 1.0, 0.0]])
# rock beats scissors for 2, plus a general-sum column payoff: nothing stays uniform
BIASED = MatrixGame(
    "biased", ("rock", "paper", "scissors"),
    [[0.0, -1.0, 2.0], [1.0, 0.0, -1.0], [-2.0, 1.0, 0.5]],
    [[0.5, 1.0, -2.0], [-1.0, 0.0, 1.5], [2.0, -1.0, 0.0]],
)
LOCKED = (0.5, 0.2, 0.3)  # player 1's locked row in RPS: rock > scissors > paper


def matrix_by_hand(A, B, rule: OracleRule, iterations: int, alternating: bool,
                   locked=None) -> dict:
    """The rule on a one-shot game written with matrices, independently of the tree walk.

    Player 0 picks a row, player 1 a column; player i's instantaneous regret is its action
    values against the other's strategy minus its own expected value (the one history of P0 /
    the sum over P0's three moves, weighted by their probabilities, for P1). Returns the
    arrays R, m, S, sigma per player.
    """
    k = A.shape[0]
    R = [np.zeros(k), np.zeros(k)]
    m = [np.zeros(k), np.zeros(k)]
    S = [np.zeros(k), np.zeros(k)]
    sigma = [np.full(k, 1 / k), np.full(k, 1 / k) if locked is None else np.array(locked)]

    def rm(y):
        positive = np.maximum(y, 0.0)
        return positive / positive.sum() if positive.sum() > 0 else np.full(k, 1 / k)

    def factor(t, exponent):
        return 1.0 if exponent is None else t**exponent / (t**exponent + 1)

    for t in range(1, iterations + 1):
        for group in ([0], [1]) if alternating else ([0, 1],):
            values = {0: A @ sigma[1], 1: B.T @ sigma[0]}  # from one profile per pass
            for p in group:
                r = values[p] - sigma[p] @ values[p]
                S[p] = S[p] + float(t) ** rule.gamma * sigma[p]
                x = R[p] + r
                if rule.floor:
                    x = np.maximum(x, 0.0)
                R[p] = np.where(x > 0, x * factor(t, rule.alpha), x * factor(t, rule.beta))
                if rule.predictive:
                    m[p] = r
            for p in group:
                if not (p == 1 and locked is not None):
                    sigma[p] = rm(R[p] + m[p])
    return {"R": R, "m": m, "S": S, "sigma": sigma}


def as_arrays(solver: ReferenceCFR) -> dict:
    """The oracle's tables of a matrix game as ``name -> [player 0's row, player 1's row]``."""
    def rows(table):
        return [np.array(list(table[key].values())) for key in ("P0", "P1")]

    return {"R": rows(solver.regrets), "m": rows(solver.prediction),
            "S": rows(solver.strategy_sum), "sigma": rows(solver.current)}


@pytest.mark.parametrize("rule", sorted(ORACLE_RULES))
@pytest.mark.parametrize("alternating", [True, False])
@pytest.mark.parametrize("case", ["rps_locked", "biased", "biased_locked"])
def test_every_rule_on_matrix_games_matches_the_formulas(rule, alternating, case):
    game = RockPaperScissors() if case == "rps_locked" else BIASED
    A = RPS_MATRIX if case == "rps_locked" else game.row_payoff
    B = -RPS_MATRIX if case == "rps_locked" else game.column_payoff
    locked = LOCKED if case.endswith("locked") else None
    fixed = None if locked is None else {"P1": dict(zip(game.action_labels, locked))}
    solver = ReferenceCFR(game, alternating=alternating, rule=rule, fixed=fixed)
    for iterations in (1, 2, 6):
        solver.iterate(iterations - solver.iteration)
        expected = matrix_by_hand(A, B, ORACLE_RULES[rule], iterations, alternating, locked)
        ours = as_arrays(solver)
        for name in ("R", "m", "S", "sigma"):
            for p in (0, 1):
                np.testing.assert_allclose(ours[name][p], expected[name][p], rtol=TOL, atol=TOL,
                                           err_msg=f"{name}[{p}] after {iterations}")


def test_predictive_rules_first_two_iterations_on_rps_by_hand():
    """PCFR+ and PDCFR+ on RPS with player 1 locked at (rock .5, paper .2, scissors .3).

    Player 0's action values against it are A @ sigma_1 = (.1, .2, -.3) (rock, paper,
    scissors), so from uniform (value 0) r = (.1, .2, -.3). Player 1's values are -A^T sigma_0.
    """
    game = RockPaperScissors()
    labels = game.action_labels
    fixed = {"P1": dict(zip(labels, LOCKED))}

    def row(values):
        return dict(zip(labels, values))

    # --- PCFR+ (floor, predictive, gamma 2) ---
    pcfr = ReferenceCFR(game, rule="pcfr_plus", fixed=fixed).iterate(1)
    # P0: R = [r]^+ = (.1,.2,0), m = r, sigma = RM(R + m) = RM(.2,.4,-.3) = (1/3, 2/3, 0)
    assert_tables_close({"P0": pcfr.regrets["P0"]}, {"P0": row([0.1, 0.2, 0.0])})
    assert_tables_close({"P0": pcfr.prediction["P0"]}, {"P0": row([0.1, 0.2, -0.3])})
    assert_tables_close({"P0": pcfr.current["P0"]}, {"P0": row([1 / 3, 2 / 3, 0.0])})
    # P1 plays against sigma_0 = (1/3, 2/3, 0): values -A^T sigma_0 = (-2/3, 1/3, 1/3),
    # its value -1/6, so r = (-1/2, 1/2, 1/2); it stays locked
    assert_tables_close({"P1": pcfr.regrets["P1"]}, {"P1": row([0.0, 0.5, 0.5])})
    assert_tables_close({"P1": pcfr.prediction["P1"]}, {"P1": row([-0.5, 0.5, 0.5])})
    assert pcfr.current["P1"] == row(LOCKED)
    # weight 1**2: the uniform start, and P1's locked row
    assert_tables_close(pcfr.strategy_sum, {"P0": row([1 / 3] * 3), "P1": row(LOCKED)})

    pcfr.iterate(1)
    # P0: value of (1/3,2/3,0) is 1/6 -> r = (-1/15, 1/30, -7/15); R = [R + r]^+ =
    # (1/30, 7/30, 0); sigma = RM(R + r) = RM(-1/30, 8/30, -14/15) = (0, 1, 0).
    # (Without the prediction it would be RM(R) = (1/8, 7/8, 0).)
    assert_tables_close({"P0": pcfr.regrets["P0"]}, {"P0": row([1 / 30, 7 / 30, 0.0])})
    assert_tables_close({"P0": pcfr.prediction["P0"]}, {"P0": row([-1 / 15, 1 / 30, -7 / 15])})
    assert pcfr.current["P0"] == row([0.0, 1.0, 0.0])
    # P1 against paper: values (-1, 0, 1), value -.2, r = (-.8, .2, 1.2); R = (0, .7, 1.7)
    assert_tables_close({"P1": pcfr.regrets["P1"]}, {"P1": row([0.0, 0.7, 1.7])})
    assert_tables_close({"P1": pcfr.prediction["P1"]}, {"P1": row([-0.8, 0.2, 1.2])})
    # weight 2**2 = 4 on the strategies played at iteration 2
    assert_tables_close(pcfr.strategy_sum, {
        "P0": row([1 / 3 + 4 / 3, 1 / 3 + 8 / 3, 1 / 3]),
        "P1": row([0.5 * 5, 0.2 * 5, 0.3 * 5]),
    })

    # --- PDCFR+ (floor, predictive, alpha 2.3, gamma 5) ---
    d2 = 2**2.3 / (2**2.3 + 1)  # t^alpha / (t^alpha + 1) at t = 2 (it is 0.5 at t = 1)
    pdcfr = ReferenceCFR(game, rule="pdcfr_plus", fixed=fixed).iterate(1)
    # P0: R = d1 [r]^+ = (.05, .1, 0); sigma = RM(R + r) = RM(.15, .3, -.3) = (1/3, 2/3, 0)
    assert_tables_close({"P0": pdcfr.regrets["P0"]}, {"P0": row([0.05, 0.1, 0.0])})
    assert_tables_close({"P0": pdcfr.current["P0"]}, {"P0": row([1 / 3, 2 / 3, 0.0])})
    assert_tables_close({"P1": pdcfr.regrets["P1"]}, {"P1": row([0.0, 0.25, 0.25])})
    pdcfr.iterate(1)
    # P0: R + r = (.05 - 1/15, .1 + 1/30, -7/15) -> floor (0, 2/15, 0) -> times d2;
    # sigma = RM(R + r) = (0, 1, 0)
    assert_tables_close({"P0": pdcfr.regrets["P0"]}, {"P0": row([0.0, 2 / 15 * d2, 0.0])})
    assert pdcfr.current["P0"] == row([0.0, 1.0, 0.0])
    # P1: (0, .25, .25) + (-.8, .2, 1.2) -> (0, .45, 1.45) * d2
    assert_tables_close({"P1": pdcfr.regrets["P1"]}, {"P1": row([0.0, 0.45 * d2, 1.45 * d2])})
    # weight 2**5 = 32 at iteration 2
    assert_tables_close(pdcfr.strategy_sum, {
        "P0": row([1 / 3 + 32 / 3, 1 / 3 + 64 / 3, 1 / 3]),
        "P1": row([0.5 * 33, 0.2 * 33, 0.3 * 33]),
    })


@pytest.mark.parametrize("rule, bound", [("pcfr_plus", 1e-4), ("pdcfr_plus", 1e-6)])
def test_predictive_rules_converge_on_kuhn(rule, bound):
    game = KuhnPoker()
    solver = ReferenceCFR(game, rule=rule).iterate(100)
    assert reference_nash_conv(game, solver.average_policy()) < bound
    solver.iterate(100)
    assert reference_nash_conv(game, solver.average_policy()) < min(bound, 1e-3)
    # the prediction is what makes them this fast: without it, 100 iterations are not enough
    twin = dataclasses.replace(ORACLE_RULES[rule], predictive=False)
    slow = ReferenceCFR(game, rule=twin).iterate(100)
    assert reference_nash_conv(game, slow.average_policy()) > 1e-3


# ============================================================================================
# 4. Node locking and how a rule is given
# ============================================================================================


@pytest.mark.parametrize("rule", sorted(ORACLE_RULES))
def test_locked_infosets_keep_their_row_and_still_accumulate(rule):
    game = KuhnPoker()
    fixed = {"K": {"bet": 1.0}, "Jpb": {"pass": 0.25, "bet": 0.75}}
    solver = ReferenceCFR(game, rule=rule, fixed=fixed).iterate(5)
    assert solver.current["K"] == {"pass": 0.0, "bet": 1.0}
    assert solver.current["Jpb"] == {"pass": 0.25, "bet": 0.75}
    # regrets still move (K would rather pass sometimes; Jpb would rather fold), sums too
    assert any(r != 0.0 for r in solver.regrets["Jpb"].values())
    assert solver.strategy_sum["K"]["pass"] == 0.0 and solver.strategy_sum["K"]["bet"] > 0.0
    total = sum(solver.strategy_sum["Jpb"].values())
    assert solver.strategy_sum["Jpb"]["bet"] == pytest.approx(0.75 * total, rel=TOL)
    # an unlocked infoset is refreshed as usual: by regret matching on R (+ m)
    target = {a: solver.regrets["Q"][a] + solver.prediction["Q"][a] for a in ("pass", "bet")}
    assert solver.current["Q"] == regret_matching(target, ("pass", "bet"))


def test_locking_changes_the_other_players_learning():
    game = KuhnPoker()
    free = ReferenceCFR(game).iterate(3)
    # free, player 0 learns to bet with K at once (player 1's pass sees the refreshed row);
    # locked to check, player 1 with J faces a bet only from Q
    assert free.current["K"] == {"pass": 0.0, "bet": 1.0}
    locked = ReferenceCFR(game, fixed={"K": {"pass": 1.0}}).iterate(3)
    assert locked.regrets["Jb"]["pass"] == pytest.approx(free.regrets["Jb"]["pass"] / 2, rel=TOL)
    assert locked.strategy_sum["Jb"] == free.strategy_sum["Jb"]  # P1's own reach is 1 at Jb


@pytest.mark.parametrize("fixed, message", [
    ({"X": {"bet": 1.0}}, "not an infoset"),
    ({"K": {"raise": 1.0}}, "not one of"),
    ({"K": {"bet": 0.5}}, "not a probability row"),
    ({"K": {"bet": 1.5, "pass": -0.5}}, "not a probability row"),
])
def test_bad_locked_rows_are_refused(fixed, message):
    with pytest.raises(ValueError, match=message):
        ReferenceCFR(KuhnPoker(), fixed=fixed)


def test_a_rule_is_read_from_any_object_a_name_or_keywords():
    duck = SimpleNamespace(floor=True, alpha=2.3, beta=None, gamma=5, predictive=True)
    assert read_rule(duck) == ORACLE_RULES["pdcfr_plus"] == read_rule("pdcfr_plus")
    assert read_rule(floor=True, alpha=2.3, gamma=5, predictive=True) == read_rule(duck)
    assert read_rule() == ORACLE_RULES["vanilla"]
    with pytest.raises(ValueError, match="not both"):
        read_rule(duck, floor=True)
    with pytest.raises(ValueError, match="not both"):
        reference_cfr(KuhnPoker(), 1, rule=duck, regret_matching_plus=True)
    game = KuhnPoker()
    a = ReferenceCFR(game, rule=duck).iterate(3)
    b = reference_cfr(game, 3, rule="pdcfr_plus")
    assert a.regrets == b.regrets and a.prediction == b.prediction
    assert a.strategy_sum == b.strategy_sum and b.rule == read_rule(duck)
    rule = ORACLE_RULES["dcfr"]
    assert (rule.positive_discount(1), rule.negative_discount(7)) == (0.5, 0.5)
    assert rule.positive_discount(4) == 8 / 9 and rule.average_weight(3) == 9.0
    assert ORACLE_RULES["vanilla"].average_weight(5) == 1.0


# ============================================================================================
# 5. Chance-sampled passes: unbiased, and the schedules
# ============================================================================================


def two_chance_levels() -> SpecGame:
    """Chance deals P0 a card (J .4, Q .6); P0 plays a/b; after a, chance shows x (.3) or y
    (.7); then P1, who sees only the public moves, plays l/r. Zero-sum, odd payoffs."""
    def end(*labels):
        u = _payoff(labels)
        return T(u, -u)

    def p1(key, *prefix):
        return D(1, key, ("l", end(*prefix, "l")), ("r", end(*prefix, "r")))

    def deal(card):
        after_a = C(("x", 0.3, p1("1ax", card, "a", "x")), ("y", 0.7, p1("1ay", card, "a", "y")))
        return D(0, "0" + card, ("a", after_a), ("b", p1("1b", card, "b")))

    return SpecGame(C(("J", 0.4, deal("J")), ("Q", 0.6, deal("Q"))), name="two_chance_levels")


def _payoff(labels) -> float:
    # a fixed, irregular payoff per leaf (no hash(): it must not change between runs)
    return float(sum((i + 2) * ord(c[0]) for i, c in enumerate(labels)) % 11 - 5) / 3.0


def chance_nodes(game) -> dict:
    """Every chance node's path -> its (outcome, probability) pairs (walks the full tree)."""
    found = {}

    def walk(h, path):
        if h.is_terminal():
            return
        branches = h.chance_outcomes() if h.is_chance() else [(a, None) for a in h.actions()]
        if h.is_chance():
            found[path] = tuple(branches)
        for label, _prob in branches:
            walk(h.child(label), path + (label,))

    walk(game.root(), ())
    return found


def all_samples(game):
    """Every joint choice of one outcome per chance node, with its probability."""
    nodes = chance_nodes(game)
    paths = list(nodes)
    for choice in itertools.product(*(nodes[p] for p in paths)):
        yield {p: o for p, (o, _q) in zip(paths, choice)}, math.prod(q for _o, q in choice)


@pytest.mark.parametrize("name", ["kuhn2", "kuhn3", "two_chance_levels"])
@pytest.mark.parametrize("seed", [0, 1])
def test_sampled_regrets_are_unbiased(name, seed):
    game = {"kuhn2": KuhnPoker(), "kuhn3": KuhnPoker(players=3),
            "two_chance_levels": two_chance_levels()}[name]
    profile = random_profile(game, seed)
    n = game.num_players
    samples = list(all_samples(game))
    assert sum(q for _s, q in samples) == pytest.approx(1.0, abs=1e-15)
    groups = [[p] for p in range(n)] + [list(range(n))]  # alternating and simultaneous passes
    for players in groups:
        full = regret_pass(game, profile, players)
        mean = {k: {a: 0.0 for a in row} for k, row in full.regrets.items()}
        mean_values = [0.0] * n
        mean_reach: dict = {}
        for sample, q in samples:
            sampled = regret_pass(game, profile, players, sample)
            assert set(sampled.regrets) == set(full.regrets)
            for key, row in sampled.regrets.items():
                for a, r in row.items():
                    mean[key][a] += q * r
            mean_values = [m + q * v for m, v in zip(mean_values, sampled.values)]
            for key, terms in sampled.own_reach.items():
                mean_reach[key] = mean_reach.get(key, 0.0) + q * sum(terms)
        assert_tables_close(mean, full.regrets)
        assert mean_values == pytest.approx(full.values, abs=TOL)
        assert any(abs(r) > 1e-3 for row in full.regrets.values() for r in row.values())
        # the average's own-reach terms: E[sum over visited h] = sum_{h in I} pi_c(h) pi_i(h)
        for key, terms in full.own_reach.items():
            assert len(terms) == 1  # full pass: once per infoset
            assert mean_reach.get(key, 0.0) == pytest.approx(
                chance_weight(game, key) * terms[0], abs=TOL)


def chance_weight(game, key: str) -> float:
    """Sum of chance's reach over the histories of infoset ``key``."""
    total = 0.0

    def walk(h, chance_reach):
        nonlocal total
        if h.is_terminal():
            return
        if h.is_chance():
            for o, q in h.chance_outcomes():
                walk(h.child(o), chance_reach * q)
            return
        if h.infoset_key() == key:
            total += chance_reach
        for a in h.actions():
            walk(h.child(a), chance_reach)

    walk(game.root(), 1.0)
    return total


def test_a_sampled_pass_walks_only_the_sample_but_every_action():
    game = KuhnPoker()
    profile = uniform_policy(game)
    profile["J"] = {"pass": 1.0, "bet": 0.0}  # P0 never bets with J
    result = regret_pass(game, profile, [1], {(): "JQ"})
    # only P1's infosets with a Q are visited, the zero-probability "Qb" included
    assert set(result.own_reach) == {"Qp", "Qb"}
    assert result.own_reach["Qb"] == [1.0]  # own reach 1 (P1 has not acted)
    assert result.regrets["Qb"] == {"pass": 0.0, "bet": 0.0}  # counterfactual reach 0
    # no chance factor (the deal's 1/6 is not applied): P1 at "Qp" holds Q against J; pass:
    # showdown, +1; bet: P0 folds or calls with probability 1/2 each, (+1 + 2) / 2 = 1.5;
    # value 1.25, so r = (-.25, .25) with counterfactual reach 1 (P0 passes with J surely)
    assert result.regrets["Qp"] == {"pass": -0.25, "bet": 0.25}
    assert all(r == 0.0 for k, row in result.regrets.items() if k[0] != "Q" for r in row.values())
    assert result.values == [-1.25, 1.25]


def test_a_missing_or_wrong_chance_outcome_is_an_error():
    game = two_chance_levels()
    profile = uniform_policy(game)
    with pytest.raises(KeyError, match=r"\('J', 'a'\)"):
        regret_pass(game, profile, [0], {(): "J", ("Q", "a"): "x"})
    with pytest.raises(ValueError, match="'z'"):
        regret_pass(game, profile, [0], {(): "J", ("J", "a"): "z"})
    solver = ReferenceCFR(game)
    with pytest.raises(KeyError, match=r"\(\)"):
        solver.iterate_sampled({})
    with pytest.raises(ValueError, match="one chance mapping"):
        ReferenceCFR(game, alternating=False).iterate_sampled([{(): "J"}, {(): "Q"}])
    with pytest.raises(ValueError, match="a list of 2"):
        solver.iterate_sampled([{(): "J"}])


@pytest.mark.parametrize("alternating", [True, False])
@pytest.mark.parametrize("rule", ["vanilla", "dcfr", "pdcfr_plus"])
def test_without_chance_a_sampled_iteration_is_a_full_one(alternating, rule):
    # a sampled pass adds to the average once per visited HISTORY: P1's infoset in a matrix
    # game has 3 histories of own reach 1, so P1's strategy sums are 3 times the full pass's
    full = ReferenceCFR(BIASED, alternating=alternating, rule=rule)
    sampled = ReferenceCFR(BIASED, alternating=alternating, rule=rule)
    for _ in range(4):
        full.iterate()
        sampled.iterate_sampled({})
    assert sampled.regrets == full.regrets and sampled.current == full.current
    assert sampled.prediction == full.prediction
    assert sampled.strategy_sum["P0"] == full.strategy_sum["P0"]
    assert_tables_close({"P1": sampled.strategy_sum["P1"]},
                        {"P1": {a: 3 * s for a, s in full.strategy_sum["P1"].items()}})
    assert_tables_close(sampled.average_policy(), full.average_policy())


def apply_rule_by_hand(rule: OracleRule, t: int, R: dict, r: dict) -> tuple[dict, dict]:
    """One infoset's update written out: add, floor, discount; prediction = r."""
    new = {}
    for a in R:
        x = R[a] + r[a]
        x = max(x, 0.0) if rule.floor else x
        new[a] = x * (rule.positive_discount(t) if x > 0 else rule.negative_discount(t))
    return new, (dict(r) if rule.predictive else {a: 0.0 for a in R})


@pytest.mark.parametrize("rule", ["vanilla", "dcfr", "pcfr_plus", "pdcfr_plus"])
def test_sampled_schedules(rule):
    game = KuhnPoker()
    spec = ORACLE_RULES[rule]
    warm = ReferenceCFR(game, rule=rule).iterate(2)  # nonzero regrets everywhere first

    def fresh():
        clone = ReferenceCFR(game, rule=rule)
        for name in ("regrets", "strategy_sum", "prediction", "current"):
            setattr(clone, name, {k: dict(row) for k, row in getattr(warm, name).items()})
        clone.iteration = warm.iteration
        return clone

    # alternating, one fresh sample per player's pass
    samples = [{(): "JQ"}, {(): "KJ"}]
    solver = fresh().iterate_sampled(samples)
    assert solver.iteration == 3
    profile = warm.current_policy()
    for player, sample in enumerate(samples):
        step = regret_pass(game, profile, [player], sample)
        for key, (p, _actions) in infosets(game).items():
            if p != player:
                continue
            # every infoset of the player is updated eagerly: visited ones with their sampled
            # regret, the others with r = 0 (discounted only, prediction reset to 0)
            R, m = apply_rule_by_hand(spec, 3, warm.regrets[key], step.regrets[key])
            assert solver.regrets[key] == pytest.approx(R, abs=TOL, rel=TOL), key
            assert solver.prediction[key] == pytest.approx(m, abs=TOL), key
            w = spec.average_weight(3)
            reach = sum(step.own_reach.get(key, []))
            expected = {a: warm.strategy_sum[key][a] + w * reach * profile[key][a]
                        for a in profile[key]}
            assert solver.strategy_sum[key] == pytest.approx(expected, abs=TOL, rel=TOL), key
        # P1's pass plays P0's refreshed rows against P1's own rows from before its update
        profile = {k: dict(solver.current[k] if p == 0 else warm.current[k])
                   for k, (p, _actions) in infosets(game).items()}
    # player 0 holds J in sample 0, so its K infoset was not visited: only discounted
    assert solver.instantaneous["K"] == {"pass": 0.0, "bet": 0.0}
    assert solver.instantaneous["J"] != {"pass": 0.0, "bet": 0.0}
    # P1's pass used "KJ" (P1 holds J), not "JQ": its Q infosets were not visited
    assert solver.instantaneous["Qb"] == {"pass": 0.0, "bet": 0.0}
    assert solver.instantaneous["Jb"] != {"pass": 0.0, "bet": 0.0}

    # alternating, one sample shared by both passes == the list of that sample twice
    shared = fresh().iterate_sampled({(): "QK"})
    twice = fresh().iterate_sampled([{(): "QK"}, {(): "QK"}])
    assert shared.regrets == twice.regrets and shared.strategy_sum == twice.strategy_sum

    # simultaneous: one walk, from one profile, for both players
    simultaneous = ReferenceCFR(game, rule=rule, alternating=False)
    start = simultaneous.current_policy()
    simultaneous.iterate_sampled({(): "QK"})
    step = regret_pass(game, start, [0, 1], {(): "QK"})
    for key in step.regrets:
        R, _m = apply_rule_by_hand(spec, 1, {a: 0.0 for a in step.regrets[key]},
                                   step.regrets[key])
        assert simultaneous.regrets[key] == pytest.approx(R, abs=TOL), key
    assert set(step.own_reach) == {"Q", "Qpb", "Kp", "Kb"}  # P0 holds Q, P1 holds K


def test_chance_sampled_cfr_learns_kuhn():
    # a sanity check of the whole sampled loop (the exact checks are above): seeded random
    # deals, a fresh one per player's pass; uniform play has NashConv 0.917
    game = KuhnPoker()
    deals = [o for o, _q in game.root().chance_outcomes()]
    rng = random.Random(2024)
    solver = ReferenceCFR(game)
    for _ in range(1000):
        solver.iterate_sampled([{(): rng.choice(deals)}, {(): rng.choice(deals)}])
    assert reference_nash_conv(game, solver.average_policy()) < 0.1
