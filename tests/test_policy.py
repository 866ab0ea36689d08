"""Policy: validation, read-only mapping behaviour, fresh copies from trainers."""

import numpy as np
import pytest

import cfrkit
from cfrkit import Policy
from cfrkit.games import KuhnPoker, RockPaperScissors


def test_uniform_rows():
    policy = Policy.uniform(KuhnPoker())
    assert len(policy) == 12 and "Qpb" in policy
    assert dict(policy["Qpb"]) == {"pass": 0.5, "bet": 0.5}


def test_from_dict_rows_as_mappings_or_sequences():
    game = RockPaperScissors()
    policy = Policy.from_dict(game, {"P0": {"paper": 1.0}, "P1": [0.2, 0.3, 0.5]})
    assert dict(policy["P0"]) == {"rock": 0.0, "paper": 1.0, "scissors": 0.0}
    assert policy["P1"]["scissors"] == 0.5
    assert policy.to_dict()["P1"] == {"rock": 0.2, "paper": 0.3, "scissors": 0.5}


@pytest.mark.parametrize(
    "mapping, message",
    [
        ({"P0": [1, 0, 0], "P9": [1, 0, 0]}, "unknown infoset key 'P9'"),
        ({"P0": {"stone": 1.0}, "P1": [1, 0, 0]}, "unknown action 'stone'"),
        ({"P0": [0.5, 0.4, 0.0], "P1": [1, 0, 0]}, "sum to 0.9"),
        # finite entries whose exact sum overflows (fsum's OverflowError before)
        ({"P0": [1e308, 1e308, 0.0], "P1": [1, 0, 0]}, "infoset 'P0': probabilities sum to inf"),
        ({"P0": [1.5, -0.5, 0.0], "P1": [1, 0, 0]}, "probability -0.5"),
        ({"P0": [1.0, 0.0], "P1": [1, 0, 0]}, "2 probabilities for 3 actions"),
        ({"P0": [1, 0, 0]}, "no row for infoset(s) 'P1'"),
        ({"P0": [float("nan"), 0, 1], "P1": [1, 0, 0]}, "invalid"),
        ({"P0": "rock", "P1": [1, 0, 0]}, "mapping or a sequence"),
        # what float() would read, a policy file refuses: from_dict refuses it the same way
        ({"P0": {"rock": "1"}, "P1": [1, 0, 0]}, "action 'rock': '1' is not a number"),
        ({"P0": [1, 0, 0], "P1": [True, False, False]}, "action 'rock': True is not a number"),
        ({"P0": [np.True_, 0, 0], "P1": [1, 0, 0]}, "is not a number"),
        # an int too large for a float: a ValueError naming it, not float()'s OverflowError
        ({"P0": [10**400, 0, 0], "P1": [1, 0, 0]}, "action 'rock': probability 1000"),
    ],
)
def test_from_dict_errors(mapping, message):
    with pytest.raises(ValueError) as info:
        Policy.from_dict(RockPaperScissors(), mapping)
    assert message in str(info.value)


def test_policy_is_read_only():
    policy = Policy.uniform(KuhnPoker())
    with pytest.raises(TypeError):
        policy["Q"]["bet"] = 1.0
    with pytest.raises(ValueError):
        policy.table[0] = 1.0


def test_average_policy_is_a_fresh_normalised_copy():
    trainer = cfrkit.VanillaCFR(KuhnPoker()).iterate(10)
    first = trainer.average_policy()
    before = first.table.copy()
    trainer.iterate(10)
    np.testing.assert_array_equal(first.table, before)  # not a live view
    second = trainer.average_policy()
    assert not np.array_equal(first.table, second.table)
    for row in second.values():
        assert sum(row.values()) == pytest.approx(1.0, abs=1e-12)
    for row in trainer.current_policy().values():
        assert sum(row.values()) == pytest.approx(1.0, abs=1e-12)


def test_iterate_arguments():
    trainer = cfrkit.VanillaCFR(KuhnPoker())
    for bad in (-1, 1.5, True, "3"):
        with pytest.raises(ValueError, match="non-negative integer"):
            trainer.iterate(bad)
    assert trainer.iterate(0).iteration == 0
    assert trainer.iterate(3).iterate(2).iteration == 5
    assert trainer.nodes_touched == 5 * 2 * trainer.game.num_nodes
    with pytest.raises(ValueError, match="alternating"):
        cfrkit.VanillaCFR(KuhnPoker(), alternating="yes")


def test_from_dict_normalise_divides_each_row_by_its_sum():
    game = RockPaperScissors()
    rows = {"P0": {"rock": 2.0, "paper": 1.0, "scissors": 1.0}, "P1": [0.3, 0.3, 0.3]}
    with pytest.raises(ValueError, match="infoset 'P0': probabilities sum to 4.0, not 1"):
        Policy.from_dict(game, rows)
    policy = Policy.from_dict(game, rows, normalise=True)
    assert policy["P0"] == {"rock": 0.5, "paper": 0.25, "scissors": 0.25}
    assert policy["P1"] == {a: 0.3 / 0.8999999999999999 for a in ("rock", "paper", "scissors")}
    with pytest.raises(ValueError, match="P1"):  # a zero row implies no strategy
        Policy.from_dict(game, {"P0": [1, 0, 0], "P1": [0, 0, 0]}, normalise=True)
    with pytest.raises(ValueError, match="P0"):  # a sum that overflows: named, not OverflowError
        Policy.from_dict(game, {"P0": [1e308, 1e308, 0], "P1": [1, 0, 0]}, normalise=True)
