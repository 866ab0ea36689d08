"""Node locking: trainers learn against infosets held at a fixed strategy."""

import numpy as np
import pytest

import cfrkit
from cfrkit import ChanceSampledCFR, Policy, PrunedCFR, VanillaCFR
from cfrkit.games import RPSLS, KuhnPoker, RockPaperScissors

TRAINERS = [VanillaCFR, PrunedCFR, lambda game, **kw: ChanceSampledCFR(game, seed=0, **kw)]
IDS = ["vanilla", "pruned", "sampled"]


@pytest.mark.parametrize("make", TRAINERS, ids=IDS)
def test_rps_against_a_rock_heavy_opponent(make):
    trainer = make(RockPaperScissors(), fixed={"P0": {"rock": 0.4, "paper": 0.3, "scissors": 0.3}})
    trainer.iterate(10_000)
    policy = trainer.average_policy()
    assert policy["P1"]["paper"] > 0.99
    assert dict(policy["P0"]) == {"rock": 0.4, "paper": 0.3, "scissors": 0.3}


@pytest.mark.parametrize("make", TRAINERS, ids=IDS)
def test_rpsls_against_a_fixed_opponent(make):
    # against (0.4, 0.2, 0.2, 0.1, 0.1) Spock earns 0.4 + 0.2 - 0.2 - 0.1 = 0.3, the most
    fixed = {"P1": [0.4, 0.2, 0.2, 0.1, 0.1]}
    trainer = make(RPSLS(), fixed=fixed).iterate(10_000)
    assert trainer.average_policy()["P0"]["spock"] > 0.99


def test_locked_kuhn_player_is_exploited():
    game = KuhnPoker()
    # player 1 always calls and always bets after a pass
    always = {key: {"bet": 1.0} for key, info in cfrkit.compile_game(game).infosets.items() if info.player == 1}
    trainer = VanillaCFR(game, fixed=always).iterate(20_000)
    policy = trainer.average_policy()
    value, _ = cfrkit.best_response(game, policy, 0)
    assert cfrkit.expected_values(game, policy)[0] == pytest.approx(value, abs=2e-3)
    assert value > 0.2  # a calling station loses a lot more than the equilibrium -1/18
    for key in always:
        assert policy[key]["bet"] == 1.0
        assert trainer.current_policy()[key]["bet"] == 1.0


def test_a_fixed_policy_object_is_accepted():
    game = RockPaperScissors()
    locked = Policy.from_dict(game, {"P0": [1, 0, 0], "P1": [1 / 3] * 3})
    trainer = VanillaCFR(game, fixed=locked).iterate(10)
    np.testing.assert_array_equal(trainer.average_policy().table, locked.table)


@pytest.mark.parametrize(
    "fixed, message",
    [
        ({"P7": [1, 0, 0]}, "unknown infoset key 'P7'"),
        ({"P0": {"rock": 0.5, "stone": 0.5}}, "unknown action 'stone'"),
        ({"P0": [0.5, 0.3, 0.1]}, "sum to 0.9"),
        ({"P0": [1.2, -0.2, 0.0]}, "probability -0.2"),
        (["P0"], "must be a mapping"),
    ],
)
@pytest.mark.parametrize("make", TRAINERS, ids=IDS)
def test_bad_fixed_strategies_are_rejected(make, fixed, message):
    with pytest.raises(ValueError) as info:
        make(RockPaperScissors(), fixed=fixed)
    assert message in str(info.value)
