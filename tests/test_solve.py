"""Trainer.solve: stopping rules, the record it returns, the check schedule, the progress bar."""

from __future__ import annotations

import numpy as np
import pytest

import cfrkit
from cfrkit import RegretRule
from cfrkit.games import KuhnPoker, LeducPoker, RockPaperScissors
from cfrkit.rules import iteration_limit

from conftest import GAMES, TRAVERSALS, RULES
from spec_game import D, SpecGame, T


def test_a_target_stops_the_run_at_the_first_check_below_it():
    trainer = cfrkit.CFRPlus(KuhnPoker())
    record = trainer.solve(target_nash_conv=1e-4, max_iterations=100_000)
    assert record.stopped == "target"
    assert record.nash_conv[-1] <= 1e-4 < record.nash_conv[:-1].min()
    assert record.iterations[-1] == trainer.iteration < 100_000
    # the last entry is the final state, measured exactly
    assert record.nash_conv[-1] == cfrkit.nash_conv(trainer.game, trainer.average_policy())
    assert record.exploitability is not None
    np.testing.assert_array_equal(record.exploitability, record.nash_conv / 2)


def test_max_iterations_counts_more_iterations_from_where_the_trainer_is():
    trainer = cfrkit.DiscountedCFR(KuhnPoker()).iterate(50)
    record = trainer.solve(max_iterations=300)
    assert record.stopped == "max_iterations"
    assert trainer.iteration == 350 == record.iterations[-1]
    assert record.iterations[0] == 50  # checked before the first new iteration
    assert np.all(np.diff(record.iterations) > 0)
    # the same iterates as one iterate() call
    same = cfrkit.DiscountedCFR(KuhnPoker()).iterate(350)
    np.testing.assert_array_equal(trainer.average_policy().table, same.average_policy().table)


def test_time_limit_stops_the_run():
    record = cfrkit.VanillaCFR(LeducPoker()).solve(time_limit=0.3)
    assert record.stopped == "time_limit"
    assert record.seconds[-1] >= 0.3
    assert record.seconds[-1] < 5  # chunks are sized to the time left, not run blindly
    assert np.all(np.diff(record.seconds) > 0)
    assert record.training_seconds[-1] <= record.seconds[-1]
    assert record.evaluation_seconds > 0


def test_a_target_already_met_stops_before_training():
    trainer = cfrkit.PDCFRPlus(KuhnPoker()).iterate(200)
    record = trainer.solve(target_nash_conv=1e-3)
    assert record.stopped == "target" and len(record.iterations) == 1
    assert trainer.iteration == 200


def test_a_target_equal_to_nash_conv_is_met():
    trainer = cfrkit.CFR(KuhnPoker())
    exact = cfrkit.nash_conv(trainer.game, trainer.average_policy())
    record = trainer.solve(target_nash_conv=exact, max_iterations=50)
    assert record.stopped == "target" and trainer.iteration == 0


def test_the_check_schedule_depends_on_the_run_not_the_machine():
    # the same run checks (and stops) at the same iterations, however fast the machine is
    a = cfrkit.CFRPlus(LeducPoker()).solve(target_nash_conv=1e-3)
    b = cfrkit.CFRPlus(LeducPoker()).solve(target_nash_conv=1e-3)
    np.testing.assert_array_equal(a.iterations, b.iterations)
    np.testing.assert_array_equal(a.nash_conv, b.nash_conv)
    sampled = [cfrkit.ChanceSampledCFR(KuhnPoker(), seed=2).solve(max_iterations=20_000)
               for _ in range(2)]
    np.testing.assert_array_equal(sampled[0].iterations, sampled[1].iterations)


def test_checks_grow_geometrically_so_evaluation_stays_a_small_part():
    # after the first few, each check is at least 10% more iterations after the previous one
    # (and nine evaluations' worth of node-visits): about log(T)/log(1.1) checks for T
    record = cfrkit.CFRPlus(KuhnPoker()).solve(max_iterations=50_000)
    iterations = record.iterations
    assert len(iterations) < 130
    later = iterations[iterations >= 20][:-1]  # the last check is cut short by the budget
    assert np.all(later[1:] >= np.ceil(1.1 * later[:-1]) - 1)
    assert iterations[-1] == 50_000


def test_three_players_have_no_exploitability():
    record = cfrkit.CFRPlus(KuhnPoker(players=3)).solve(max_iterations=20)
    assert record.exploitability is None
    assert record.trainer == "CFRPlus" and record.game == "KuhnPoker(players=3)"
    assert record.to_dict()["exploitability"] is None


def test_a_two_player_general_sum_game_has_no_exploitability():
    game = SpecGame(D(0, "a", ("x", D(1, "b", ("l", T(3, 1)), ("r", T(0, 0)))), ("y", T(1, 1))))
    assert not cfrkit.compile_game(game).zero_sum
    record = cfrkit.CFR(game).solve(max_iterations=3)
    assert record.exploitability is None and record.nash_conv[-1] >= 0


def test_max_iterations_zero_checks_once_and_stops():
    trainer = cfrkit.CFRPlus(KuhnPoker())
    record = trainer.solve(max_iterations=0)
    assert record.stopped == "max_iterations" and record.iterations.tolist() == [0]
    assert trainer.iteration == 0


def test_a_trainer_runs_exactly_up_to_its_rules_limit_and_solve_stops_there():
    rule = RegretRule(gamma=100.0)  # t^100 leaves float64 early: a limit of a few hundred
    limit, _ = iteration_limit(rule)
    trainer = cfrkit.CFR(RockPaperScissors(), rule=rule).iterate(limit)
    assert trainer.iteration == limit
    with pytest.raises(ValueError, match="iterate"):
        trainer.iterate(1)
    # no budget given: the run ends at the limit, as a budget would end it
    solver = cfrkit.CFR(KuhnPoker(), rule=rule)
    record = solver.solve(target_nash_conv=1e-300)
    assert record.stopped == "max_iterations" and solver.iteration == limit


def test_callback_sees_every_check_and_can_stop():
    seen = []

    def callback(trainer, record):
        seen.append((trainer.iteration, len(record.iterations), record.stopped))
        return trainer.iteration >= 40

    trainer = cfrkit.CFRPlus(KuhnPoker())
    record = trainer.solve(max_iterations=10_000, callback=callback)
    assert record.stopped == "callback"
    assert seen[0][0] == 0  # the check before the first iteration too
    assert seen[-1][0] >= 40 and all(b > a for (a, *_), (b, *_) in zip(seen, seen[1:]))
    assert [n for _, n, _ in seen] == list(range(1, len(seen) + 1))  # the record grows by one
    assert {stopped for *_, stopped in seen} == {"running"}


def test_callback_sees_the_last_check_and_why_the_run_ended():
    # a callback that logs sees the result: the last check, with its reason
    seen = []
    record = cfrkit.CFRPlus(KuhnPoker()).solve(
        max_iterations=5, callback=lambda trainer, r: seen.append((r.iterations.tolist(), r.stopped)))
    assert seen[-1] == (record.iterations.tolist(), "max_iterations")
    assert [stopped for _, stopped in seen[:-1]] == ["running"] * (len(seen) - 1)
    # returning True at the last check changes nothing: the run has ended already
    record = cfrkit.CFRPlus(KuhnPoker()).solve(max_iterations=5, callback=lambda t, r: True)
    assert record.stopped == "callback" and record.iterations.tolist() == [0]
    record = cfrkit.CFRPlus(KuhnPoker()).solve(target_nash_conv=10.0, callback=lambda t, r: True)
    assert record.stopped == "target"


def test_a_continued_run_sizes_its_first_chunk_from_its_earlier_iterations():
    # not one iteration, then a check (an evaluation for 0.1% more iterations): the first new
    # check comes as later ones do, by the visits per iteration the trainer has shown
    trainer = cfrkit.CFRPlus(LeducPoker()).iterate(1000)
    iterations = trainer.solve(max_iterations=1000).iterations
    assert iterations[0] == 1000 and iterations[1] >= 1100
    fresh = cfrkit.CFRPlus(LeducPoker()).solve(max_iterations=2000).iterations
    assert fresh[:2].tolist() == [0, 1]  # a fresh trainer has no visits to go by
    # a time limit needs an iteration's time first, continued or not
    timed = cfrkit.CFRPlus(LeducPoker()).iterate(1000).solve(time_limit=0.5).iterations
    assert timed[:2].tolist() == [1000, 1001]


@pytest.mark.parametrize("traversal", sorted(TRAVERSALS))
def test_every_trainer_solves(traversal):
    trainer = TRAVERSALS[traversal].make(GAMES["kuhn2"], RULES["discounted"])
    record = trainer.solve(target_nash_conv=0.05, max_iterations=200_000)
    assert record.stopped == "target"


def test_progress_bar_on_stderr(capsys):
    record = cfrkit.CFRPlus(KuhnPoker()).solve(max_iterations=100, progress=True)
    err = capsys.readouterr().err
    assert "CFRPlus" in err and "100/100" in err
    # each check is shown once made, with the iteration it belongs to
    for iteration, nash_conv in zip(record.iterations, record.nash_conv):
        assert f"NashConv {nash_conv:.3g} at {iteration:,}" in err


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({}, "needs target_nash_conv, max_iterations or time_limit"),
        ({"target_nash_conv": 0}, "target_nash_conv must be a positive number"),
        ({"target_nash_conv": float("nan")}, "target_nash_conv must be a positive number"),
        ({"time_limit": -1}, "time_limit must be a positive number"),
        ({"time_limit": 10**400}, "time_limit must be a positive number"),
        ({"max_iterations": -3}, "max_iterations must be a non-negative integer"),
        ({"max_iterations": 2.5}, "max_iterations must be a non-negative integer"),
        ({"max_iterations": 5, "progress": "yes"}, "progress must be a bool"),
        ({"max_iterations": 5, "callback": 3}, "callback must be callable"),
    ],
)
def test_solve_arguments_are_checked(kwargs, message):
    with pytest.raises(ValueError, match=message):
        cfrkit.CFRPlus(KuhnPoker()).solve(**kwargs)
