"""Seeds and iteration counts at the edges of what the kernels hold: refused with a ValueError
naming the limit, before anything runs, instead of aliasing or overflowing."""

from __future__ import annotations

import json

import numpy as np
import pytest

from cfrkit import (
    CFR,
    CFRPlus,
    CheckpointError,
    ChanceSampledCFR,
    PrunedCFR,
    RegretRule,
    VanillaCFR,
    load_trainer,
)
from cfrkit.cli import main
from cfrkit.games import KuhnPoker, RockPaperScissors
from cfrkit.limits import MAX_ITERATIONS
from cfrkit.rules import iteration_limit

from spec_game import D, SpecGame, T

KUHN = KuhnPoker()


# --- seeds ---------------------------------------------------------------------------------

@pytest.mark.parametrize("seed", [2**64, 7 + 2**64, 2**128, 10**400, -1, -(2**64)])
def test_seeds_outside_64_bits_are_refused_not_aliased(seed):
    with pytest.raises(ValueError, match=r"seed must be an integer in \[0, 2\*\*64\)") as info:
        ChanceSampledCFR(KUHN, seed=seed)
    assert len(str(info.value)) < 140  # a 400-digit seed is not printed whole


@pytest.mark.parametrize("seed", [0, 2**64 - 1, np.uint64(2**64 - 1), np.int64(5)])
def test_every_64_bit_seed_is_accepted(seed):
    trainer = ChanceSampledCFR(KUHN, seed=seed)
    assert trainer.seed == int(seed) and type(trainer.seed) is int


def test_the_top_seeds_give_distinct_runs():
    # the high bit and the low bit both reach the stream
    runs = [ChanceSampledCFR(KUHN, seed=s).iterate(50)._state.regret for s in
            (2**64 - 1, 2**64 - 2, 2**63 - 1)]
    assert not np.array_equal(runs[0], runs[1])
    assert not np.array_equal(runs[0], runs[2])


def test_default_seeds_are_64_bit_and_fresh():
    seeds = {ChanceSampledCFR(KUHN).seed for _ in range(8)}
    assert len(seeds) == 8 and all(0 <= s < 2**64 for s in seeds)
    # at least one uses the top 32 bits (fails with probability 2**-256 if they are drawn)
    assert max(seeds) >= 2**32


# --- iteration counts ----------------------------------------------------------------------

@pytest.mark.parametrize("n", [2**63, 2**64, MAX_ITERATIONS + 1, 10**30])
@pytest.mark.parametrize("make", [VanillaCFR, PrunedCFR, lambda g: ChanceSampledCFR(g, seed=1)])
def test_iterating_past_the_limit_names_it_and_runs_nothing(make, n):
    trainer = make(RockPaperScissors())
    with pytest.raises(ValueError, match=r"at most 2\*\*53 iterations") as info:
        trainer.iterate(n)
    assert "iterate(n=" in str(info.value) and len(str(info.value)) < 160
    assert trainer.iteration == 0 and trainer.nodes_touched == 0
    assert not trainer._state.regret.any()


def test_the_limit_counts_iterations_already_run():
    trainer = VanillaCFR(RockPaperScissors()).iterate(3)
    trainer._iteration = MAX_ITERATIONS - 2  # as a checkpoint could leave it
    with pytest.raises(ValueError, match=f"this one is at {MAX_ITERATIONS - 2}"):
        trainer.iterate(3)
    with pytest.raises(ValueError, match="2\\*\\*53"):
        trainer.solve(max_iterations=3)


@pytest.mark.parametrize("bad", [2**63, 10**20])
def test_solve_refuses_a_budget_past_the_limit(bad):
    trainer = VanillaCFR(KUHN)
    with pytest.raises(ValueError, match=r"solve\(max_iterations=.*at most 2\*\*53"):
        trainer.solve(max_iterations=bad)
    assert trainer.iteration == 0


# --- rules whose numbers leave float64 before 2**53 iterations -------------------------------

def test_presets_and_moderate_exponents_keep_the_full_limit():
    for rule in (RegretRule.vanilla(), RegretRule.cfr_plus(), RegretRule.discounted(),
                 RegretRule.predictive_plus(), RegretRule.dcfr_plus(),
                 RegretRule.pdcfr_plus(), RegretRule(gamma=17), RegretRule(alpha=-19, beta=-19)):
        assert iteration_limit(rule)[0] == MAX_ITERATIONS


@pytest.mark.parametrize("gamma, cap", [(40.0, 2**(960 / 41)), (200.0, 2**(960 / 201))])
def test_a_large_gamma_caps_the_run_where_the_weight_sum_would_overflow(gamma, cap):
    limit, reason = iteration_limit(RegretRule(gamma=gamma))
    assert limit == int(cap) and f"gamma={gamma:g}" in reason


def test_a_capped_rule_stays_finite_up_to_its_cap_and_refuses_past_it():
    rule = RegretRule(gamma=200.0)  # cap: 27 iterations (27^201 < 2^960 < 28^201)
    limit = iteration_limit(rule)[0]
    assert limit == 27
    trainer = CFR(RockPaperScissors(), rule=rule).iterate(limit)
    table = trainer.average_policy().table
    assert np.all(np.isfinite(table)) and np.all(np.isfinite(trainer._state.strategy_sum))
    with pytest.raises(ValueError, match="with gamma=200 a trainer runs at most 27 iterations"):
        trainer.iterate(1)
    # solve() without a budget stops at the cap instead of failing
    fresh = CFR(KUHN, rule=rule)
    record = fresh.solve(target_nash_conv=1e-300)
    assert record.stopped == "max_iterations" and fresh.iteration == 27


@pytest.mark.parametrize("name", ["alpha", "beta"])
def test_a_very_negative_discount_exponent_caps_the_run_before_the_discount_underflows(name):
    rule = RegretRule(**{name: -200.0})
    limit, reason = iteration_limit(rule)
    assert limit == int(2 ** (1021 / 200)) and f"{name}=-200" in reason
    trainer = PrunedCFR(RockPaperScissors(), rule=rule).iterate(limit)
    assert np.all(np.isfinite(trainer._state.regret))
    assert np.all(np.isfinite(trainer.average_policy().table))
    with pytest.raises(ValueError, match=f"{name}=-200"):
        trainer.iterate(1)


def test_lazy_discounts_of_an_infoset_skipped_for_millions_of_iterations_stay_finite():
    # beta=-19 (no cap) multiplies the running product of negative-regret discounts by about
    # t^-19: past 5.4e6 iterations its exponent is below -2^31, which numba's ldexp (a C int)
    # wrapped around, turning the never-visited infoset's zero regrets into NaN
    game = SpecGame(D(0, "root", ("stop", T(0.0, 0.0)),
                      ("on", D(1, "far", ("x", T(1.0, -1.0)), ("y", T(-1.0, 1.0))))))
    trainer = PrunedCFR(game, rule=RegretRule(beta=-19.0), regret_pruning=False,
                        fixed={"root": {"stop": 1.0}}).iterate(5_450_000)
    assert trainer._state.discount_exponent[1, 1] < -(2**31)
    assert trainer.cumulative_regrets()["far"] == {"x": 0.0, "y": 0.0}
    assert np.all(np.isfinite(trainer.iterate(10).average_policy().table))


class _Schedule(RegretRule):
    def __init__(self, discount: float, weight: float) -> None:
        super().__init__()
        object.__setattr__(self, "_factors", (discount, weight))

    def schedule(self, iterations):
        discount, weight = self._factors
        out = np.empty((len(iterations), 3))
        out[:, :2], out[:, 2] = discount, weight
        return out


@pytest.mark.parametrize("discount, weight, message", [
    (1e-320, 1.0, r"discounts must lie in \[2\*\*-1022, 1\]"),
    (0.0, 1.0, "discounts must lie"),
    (np.nan, 1.0, "discounts must lie"),
    (1.0, 2.0**950, r"at most 2\*\*907"),
    (1.0, np.inf, "average weights"),
    (1.0, -1.0, "average weights"),
])
def test_custom_schedules_outside_the_safe_ranges_are_refused(discount, weight, message):
    trainer = CFR(RockPaperScissors(), rule=_Schedule(discount, weight))
    with pytest.raises(ValueError, match=message):
        trainer.iterate(2)
    assert trainer.iteration == 0


# --- checkpoints ---------------------------------------------------------------------------

def _rewrite(path, out, change):
    with np.load(path, allow_pickle=False) as data:
        metadata = json.loads(str(data["metadata"]))
        arrays = {k: data[k] for k in data.files if k != "metadata"}
    change(metadata)
    np.savez(out, metadata=np.array(json.dumps(metadata)), **arrays)
    return out


def test_a_checkpoint_past_the_limit_is_refused(tmp_path):
    path = tmp_path / "t.npz"
    CFRPlus(KUHN).iterate(3).save(path)
    for bad in (MAX_ITERATIONS + 1, 2**70):
        out = _rewrite(path, tmp_path / "bad.npz", lambda m: m.update(iteration=bad))
        with pytest.raises(CheckpointError, match="past the limit") as info:
            load_trainer(out, KUHN)
        assert len(str(info.value)) < 200 + len(str(out))


def test_a_checkpoint_with_an_old_128_bit_seed_loads_with_its_low_64_bits(tmp_path):
    path = tmp_path / "t.npz"
    original = ChanceSampledCFR(KUHN, seed=12345).iterate(20)
    original.save(path)
    old = _rewrite(path, tmp_path / "old.npz",
                   lambda m: m["arguments"].update(seed=(99 << 64) | 12345))
    loaded = load_trainer(old, KUHN)
    assert loaded.seed == 12345
    loaded.iterate(30)
    original.iterate(30)
    np.testing.assert_array_equal(loaded._state.regret, original._state.regret)


# --- the command line ----------------------------------------------------------------------

@pytest.mark.parametrize("args, message", [
    (["--seed", str(2**64), "--trainer", "chance-sampled"], "below 2**64"),
    (["--seed", "1" * 300, "--trainer", "chance-sampled"], "below 2**64"),
    (["--iterations", str(2**63)], "at most 2**53 iterations"),
])
def test_the_command_line_refuses_seeds_and_budgets_past_the_limits(args, message, capsys, tmp_path):
    status = main(["solve", "rps", *args])
    err = capsys.readouterr().err
    assert status == 2 and message in err and len(err) < 200, err
