"""FictitiousPlay (XFP): a closed form on rock-paper-scissors, a sequence-form oracle, OpenSpiel's
XFPSolver number for number, measured convergence, blocks, Ctrl-C and argument checks."""

from __future__ import annotations

import math
import os
import signal
import threading
import time
from fractions import Fraction

import numpy as np
import pytest

import cfrkit
from cfrkit import FictitiousPlay
from cfrkit._kernels import fictitious_play as xfp_kernel
from cfrkit.games import KuhnPoker, LeducPoker, RockPaperScissors
from cfrkit.limits import MAX_ITERATIONS

from conftest import GAMES, RANDOM_GAMES
from random_games import RandomGame
from reference_xfp import ReferenceXFP


def responses(fp: FictitiousPlay) -> dict:
    """The best responses the last iteration mixed in: ``{infoset key: action}``."""
    compiled = fp.game
    return {key: compiled.infoset_actions[i][fp._choice[i]]
            for i, key in enumerate(compiled.infoset_keys)}


# -- a closed form -------------------------------------------------------------------------------

F = Fraction
# (best response of iteration t, the average after it) -- both players alike, by symmetry
RPS_STEPS = [
    ("rock", (F(2, 3), F(1, 6), F(1, 6))),  # vs uniform: all three worth 0, the first wins
    ("paper", (F(4, 9), F(4, 9), F(1, 9))),
    ("paper", (F(1, 3), F(7, 12), F(1, 12))),
    ("paper", (F(4, 15), F(2, 3), F(1, 15))),  # paper and scissors both worth 1/4
    ("scissors", (F(2, 9), F(5, 9), F(2, 9))),
    ("scissors", (F(4, 21), F(10, 21), F(1, 3))),
]


def test_rock_paper_scissors_closed_form():
    # In a one-shot game the own reach is 1 and XFP is normal-form fictitious play: the average
    # after t iterations is (uniform + the t responses) / (t + 1). Worked by hand:
    #   t=1 vs (1/3, 1/3, 1/3): rock 0, paper 0, scissors 0 -> a tie, the first action (rock);
    #   t=2 vs (2/3, 1/6, 1/6): rock 0, paper 1/2, scissors -1/2 -> paper;
    #   t=3 vs (4/9, 4/9, 1/9): rock -1/3, paper 1/3, scissors 0 -> paper;
    #   t=4 vs (1/3, 7/12, 1/12): rock -1/2, paper 1/4, scissors 1/4 -> a tie: paper, the first
    #       of the tied (its computed value is also the larger by rounding: 0.25000000000000006
    #       against 0.2499999999999999);
    #   t=5 vs (4/15, 2/3, 1/15): rock -3/5, paper 1/5, scissors 2/5 -> scissors;
    #   t=6 vs (2/9, 5/9, 2/9): rock -1/3, paper 0, scissors 1/3 -> scissors.
    game = RockPaperScissors()
    fp = FictitiousPlay(game)
    assert fp.average_policy().table.tolist() == pytest.approx([1 / 3] * 6, abs=1e-15)
    counts = {"rock": F(1, 3), "paper": F(1, 3), "scissors": F(1, 3)}
    for t, (response, average) in enumerate(RPS_STEPS, start=1):
        fp.iterate(1)
        assert fp.iteration == t
        assert responses(fp) == {"P0": response, "P1": response}
        counts[response] += 1
        assert tuple(c / (t + 1) for c in counts.values()) == average  # the closed form
        expected = [float(p) for p in average] * 2
        np.testing.assert_allclose(fp.average_policy().table, expected, rtol=0, atol=1e-15)


def test_rock_paper_scissors_ties_are_the_best_response_kernels():
    # the responses are cfrkit.best_response's, ties and all
    game = RockPaperScissors()
    fp = FictitiousPlay(game)
    for response, _average in RPS_STEPS:
        before = fp.average_policy()
        fp.iterate(1)
        for player, key in enumerate(("P0", "P1")):
            assert cfrkit.best_response(game, before, player).policy == {key: response}


# -- the sequence-form oracle --------------------------------------------------------------------

ORACLE_GAMES = {
    "kuhn2": GAMES["kuhn2"],
    "kuhn3": GAMES["kuhn3"],
    "rpsls": GAMES["rpsls"],
    **RANDOM_GAMES,
    "random1": RandomGame(seed=14, num_players=1, max_depth=5, max_nodes=120),
}


@pytest.mark.parametrize("name", list(ORACLE_GAMES))
def test_matches_the_sequence_form_oracle(name):
    # The oracle keeps realization-plan sums and recursive best responses on the Game API. Each
    # cfrkit response must be a best response by the oracle's values (within 1e-10); on a near
    # tie the oracle then takes cfrkit's pick, so both stay on one trajectory, and the averages
    # must agree to 1e-12.
    game = ORACLE_GAMES[name]
    fp = FictitiousPlay(game)
    oracle = ReferenceXFP(game)
    keys = fp.game.infoset_keys
    for t in range(1, 21):
        fp.iterate(1)
        mixed = oracle.iterate(follow=responses(fp))
        assert mixed == responses(fp)
        ours = fp.average_policy()
        theirs = oracle.policy()
        worst = max(abs(ours[k][a] - p) for k in keys for a, p in theirs[k].items())
        assert worst <= 1e-12, f"iteration {t}: averages differ by {worst:.3g}"
    if name in ("kuhn2", "kuhn3", "rpsls"):
        assert oracle.ties > 0  # these games do tie, so following cfrkit's picks mattered


def test_oracle_refuses_a_response_that_is_not_best():
    game = KuhnPoker()
    fp = FictitiousPlay(game).iterate(1)
    picks = responses(fp)
    assert picks["Jpb"] == "pass"
    picks["Jpb"] = "bet"  # calling a bet with the jack: it loses 2 where folding loses 1
    with pytest.raises(AssertionError, match="not a best response"):
        ReferenceXFP(game).iterate(follow=picks)


# -- OpenSpiel's XFPSolver -----------------------------------------------------------------------


@pytest.mark.parametrize("name, iterations", [("kuhn_poker", 100), ("kuhn_poker(players=3)", 40)])
def test_agrees_with_openspiel_xfp(name, iterations):
    # Same start (uniform), same step 1/(t+1), same tie rule (the first action attaining the
    # largest float value) and the same arithmetic, operation for operation: the averages agree
    # at every iteration (bit for bit, in fact; 1e-9 is what is asserted).
    pytest.importorskip("pyspiel")
    from open_spiel.python.algorithms.fictitious_play import XFPSolver

    from cfrkit.openspiel import from_openspiel

    game = from_openspiel(name)
    fp = FictitiousPlay(game)
    theirs = XFPSolver(game.openspiel_game)
    for t in range(1, iterations + 1):
        fp.iterate(1)
        theirs.iteration()
        rows = {k: row for table in theirs.average_policy_tables() for k, row in table.items()}
        their_policy = cfrkit.Policy.from_dict(game, rows)
        worst = float(np.max(np.abs(fp.average_policy().table - their_policy.table)))
        assert worst <= 1e-9, f"iteration {t}: averages differ by {worst:.3g}"
        if t in (1, 10, iterations):
            assert cfrkit.nash_conv(game, fp.average_policy()) == pytest.approx(
                cfrkit.nash_conv(game, their_policy), abs=1e-9)


# -- convergence -------------------------------------------------------------------------------

# NashConv(t) * sqrt(t), measured at t = 25, 50, 100, 200: Kuhn 0.497, 0.451, 0.479, 0.451;
# Leduc 6.33, 5.63, 5.00, 4.20. The bounds leave about 20% and 18% above the largest.
BOUNDS = {"kuhn2": (KuhnPoker, 0.6), "leduc": (LeducPoker, 7.5)}


@pytest.mark.parametrize("name", list(BOUNDS))
def test_nash_conv_falls_like_one_over_sqrt_t(name):
    make, bound = BOUNDS[name]
    game = make()
    fp = FictitiousPlay(game)
    measured = {}
    for t in (25, 50, 100, 200):
        fp.iterate(t - fp.iteration)
        measured[t] = cfrkit.nash_conv(game, fp.average_policy())
        assert measured[t] * math.sqrt(t) <= bound, (t, measured[t])
    # and it does fall: 1/sqrt(t) would halve it from 50 to 200 (measured 0.50 and 0.37)
    assert measured[200] <= 0.6 * measured[50]


# -- running -------------------------------------------------------------------------------------


def test_blocks_do_not_change_the_run():
    game = LeducPoker()
    one_by_one = FictitiousPlay(game)
    for _ in range(30):
        one_by_one.iterate(1)
    blocks = FictitiousPlay(game).iterate(7).iterate(0).iterate(23)
    assert blocks.iteration == one_by_one.iteration == 30
    np.testing.assert_array_equal(blocks.average_policy().table, one_by_one.average_policy().table)


def test_average_policy_is_a_fresh_copy():
    fp = FictitiousPlay(KuhnPoker())
    uniform = fp.average_policy()
    assert uniform.table.tolist() == cfrkit.Policy.uniform(fp.game).table.tolist()
    first = fp.iterate(3).average_policy()
    kept = first.table.copy()
    fp.iterate(3)
    np.testing.assert_array_equal(first.table, kept)  # not a view of the running average
    assert fp.average_policy() is not fp.average_policy()
    assert repr(fp) == "FictitiousPlay(KuhnPoker(players=2), iteration=6)"
    assert fp.game is cfrkit.compile_game(fp.game.game)


def test_ctrl_c_during_iterate():
    if not hasattr(signal, "pthread_kill"):
        pytest.skip("POSIX signals")
    game = LeducPoker()
    fp = FictitiousPlay(game).iterate(1)  # compiled: the signal lands in training
    handler = signal.getsignal(signal.SIGINT)
    sent: list[float] = []

    def fire():
        time.sleep(0.2)
        sent.append(time.perf_counter())
        os.kill(os.getpid(), signal.SIGINT)

    threading.Thread(target=fire, daemon=True).start()
    with pytest.raises(KeyboardInterrupt):
        fp.iterate(10**12)
    assert sent and time.perf_counter() - sent[0] < 1.0
    assert 1 < fp.iteration < 10**12
    assert signal.getsignal(signal.SIGINT) is handler
    # the average holds exactly fp.iteration iterations, and it goes on
    fp.iterate(2)
    fresh = FictitiousPlay(game).iterate(fp.iteration)
    np.testing.assert_array_equal(fp.average_policy().table, fresh.average_policy().table)


def test_kernel_releases_the_gil():
    assert xfp_kernel.xfp_iterations.targetoptions.get("nogil") is True


# -- arguments -----------------------------------------------------------------------------------


@pytest.mark.parametrize("n", [-1, 1.0, 2.5, True, np.bool_(True), "3", None, [1]])
def test_iterate_refuses_a_bad_n(n):
    fp = FictitiousPlay(RockPaperScissors())
    with pytest.raises(ValueError, match=r"^n must be a non-negative integer"):
        fp.iterate(n)
    assert fp.iteration == 0


def test_iterate_accepts_numpy_integers():
    assert FictitiousPlay(RockPaperScissors()).iterate(np.int64(3)).iteration == 3


def test_iterate_refuses_to_pass_the_iteration_limit():
    fp = FictitiousPlay(RockPaperScissors())
    fp._iteration = MAX_ITERATIONS - 1  # as if it had run that long
    with pytest.raises(ValueError, match=r"iterate\(n=2\): at most 2\*\*53 iterations"):
        fp.iterate(2)
    assert fp.iteration == MAX_ITERATIONS - 1


@pytest.mark.parametrize("game", [None, "kuhn_poker", 3, KuhnPoker])
def test_refuses_what_is_not_a_game(game):
    with pytest.raises(TypeError, match="game must be a cfrkit.Game") as info:
        FictitiousPlay(game)
    if game is KuhnPoker:  # the class for an object: said so
        assert "got the class KuhnPoker (make one: KuhnPoker(...))" in str(info.value)


def test_exported():
    assert "FictitiousPlay" in cfrkit.__all__
    assert cfrkit.__all__ == sorted(cfrkit.__all__)
