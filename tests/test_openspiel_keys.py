"""OpenSpiel games whose information-state strings do not name the player load with per-player
keys, solve correctly, and their policies convert back to OpenSpiel's strings."""

import numpy as np
import pytest

import cfrkit
from cfrkit import GameError, Policy, compile_game

pyspiel = pytest.importorskip("pyspiel")

from open_spiel.python import policy as os_policy  # noqa: E402
from open_spiel.python.algorithms import exploitability as os_exploitability  # noqa: E402

from cfrkit.openspiel import (  # noqa: E402
    from_openspiel,
    from_openspiel_policy,
    to_pyspiel_policy,
    to_tabular_policy,
)

# A public coin (1/4, 3/4) scales a skew-symmetric rock-paper-scissors whose rock wins 2;
# player 1 moves without seeing player 0's move. Both players' strings are "coin x": the same
# string for two players, as in phantom_ttt, but a game small enough to check by hand. Its
# equilibrium is (1, 2, 1) / 4 for both players under either coin, its value 0.
_MATRIX = np.array([[0, -1, 2], [1, 0, -1], [-2, 1, 0]], dtype=float)
_COIN = (0.25, 0.75)
_NAME = "cfrkit_test_coin_rps"
_TYPE = pyspiel.GameType(
    short_name=_NAME,
    long_name="coin RPS (cfrkit tests)",
    dynamics=pyspiel.GameType.Dynamics.SEQUENTIAL,
    chance_mode=pyspiel.GameType.ChanceMode.EXPLICIT_STOCHASTIC,
    information=pyspiel.GameType.Information.IMPERFECT_INFORMATION,
    utility=pyspiel.GameType.Utility.ZERO_SUM,
    reward_model=pyspiel.GameType.RewardModel.TERMINAL,
    max_num_players=2,
    min_num_players=2,
    provides_information_state_string=True,
    provides_information_state_tensor=False,
    provides_observation_string=True,
    provides_observation_tensor=False,
)
_INFO = pyspiel.GameInfo(num_distinct_actions=3, max_chance_outcomes=2, num_players=2,
                         min_utility=-4.0, max_utility=4.0, utility_sum=0.0, max_game_length=3)


class _CoinRPSGame(pyspiel.Game):
    def __init__(self, params=None):
        super().__init__(_TYPE, _INFO, params or {})

    def new_initial_state(self):
        return _CoinRPSState(self)

    def make_py_observer(self, iig_obs_type=None, params=None):
        return _Observer()


class _CoinRPSState(pyspiel.State):
    def __init__(self, game):
        super().__init__(game)
        self.moves = []  # coin, then the players' moves

    def current_player(self):
        if len(self.moves) == 3:
            return pyspiel.PlayerId.TERMINAL
        return pyspiel.PlayerId.CHANCE if not self.moves else len(self.moves) - 1

    def _legal_actions(self, player):
        return [0, 1, 2]

    def chance_outcomes(self):
        return list(enumerate(_COIN))

    def _apply_action(self, action):
        self.moves.append(action)

    def _action_to_string(self, player, action):
        return f"coin {action}" if player == pyspiel.PlayerId.CHANCE else "RPS"[action]

    def is_terminal(self):
        return len(self.moves) == 3

    def returns(self):
        if len(self.moves) < 3:
            return [0.0, 0.0]
        coin, a, b = self.moves
        u = (1 + coin) * _MATRIX[a, b]
        return [u, -u]

    def __str__(self):
        return " ".join(map(str, self.moves))


class _Observer:
    """The coin, and nothing of anyone's move: the same string for both players."""

    def __init__(self):
        self.tensor, self.dict = np.zeros(0, np.float32), {}

    def set_from(self, state, player):
        pass

    def string_from(self, state, player):
        return f"coin {state.moves[0]}" if state.moves else ""


if _NAME not in pyspiel.registered_names():
    pyspiel.register_game(_TYPE, _CoinRPSGame)


class _PerPlayer(os_policy.Policy):
    """An OpenSpiel python policy reading a cfrkit policy by (player, string): what OpenSpiel's
    own exploitability needs to score a policy its tabular policies cannot hold."""

    def __init__(self, openspiel_game, policy):
        super().__init__(openspiel_game, [0, 1])
        self._rows = policy.to_dict()

    def action_probabilities(self, state, player_id=None):
        player = state.current_player()
        row = self._rows[f"p{player}|{state.information_state_string(player)}"]
        return {int(a): p for a, p in row.items()}


@pytest.fixture(scope="module")
def coin_rps():
    return from_openspiel(_NAME)


def test_a_string_two_players_share_gives_per_player_keys(coin_rps):
    assert coin_rps.keys_per_player
    compiled = compile_game(coin_rps)
    assert sorted(compiled.infoset_keys) == ["p0|coin 0", "p0|coin 1", "p1|coin 0", "p1|coin 1"]
    assert [coin_rps.openspiel_key(k) for k in compiled.infoset_keys].count("coin 0") == 2
    for key in ("coin 0", "q0|coin 0", "p|coin 0", 3):  # an IndexError or passed through before
        with pytest.raises(ValueError, match="key"):
            coin_rps.openspiel_key(key)


def test_games_whose_strings_name_the_player_keep_openspiel_keys():
    kuhn = from_openspiel("kuhn_poker")
    assert not kuhn.keys_per_player
    assert "0" in compile_game(kuhn).key_index  # player 0 holding the jack, before any bet


def test_the_solution_is_the_closed_form_and_openspiel_scores_it_the_same(coin_rps):
    trainer = cfrkit.CFRPlus(coin_rps).iterate(3000)
    policy = trainer.average_policy()
    for key in compile_game(coin_rps).infoset_keys:
        np.testing.assert_allclose(list(policy[key].values()), [0.25, 0.5, 0.25], atol=2e-3)
    ours = cfrkit.nash_conv(coin_rps, policy)
    theirs = os_exploitability.nash_conv(coin_rps.openspiel_game, _PerPlayer(coin_rps.openspiel_game, policy))
    assert ours < 1e-2
    assert abs(ours - theirs) < 1e-9
    values = cfrkit.expected_values(coin_rps, policy)
    assert abs(values[0]) < 1e-2 and abs(values[0] + values[1]) < 1e-12


def test_a_policy_openspiel_cannot_hold_is_refused_by_the_tabular_conversions(coin_rps):
    compiled = compile_game(coin_rps)
    rows = {key: [0.2, 0.3, 0.5] for key in compiled.infoset_keys}
    rows["p1|coin 1"] = [0.5, 0.3, 0.2]
    policy = Policy.from_dict(compiled, rows)
    for convert in (to_pyspiel_policy, to_tabular_policy):
        with pytest.raises(ValueError, match="'p0\\|coin 1' and 'p1\\|coin 1' share") as info:
            convert(coin_rps, policy)
        assert len(str(info.value)) < 300


def test_a_policy_both_players_play_alike_round_trips_through_openspiel(coin_rps):
    compiled = compile_game(coin_rps)
    rows = {"p0|coin 0": [0.2, 0.3, 0.5], "p1|coin 0": [0.2, 0.3, 0.5],
            "p0|coin 1": [0.6, 0.3, 0.1], "p1|coin 1": [0.6, 0.3, 0.1]}
    policy = Policy.from_dict(compiled, rows)
    for converted in (to_pyspiel_policy(coin_rps, policy), to_tabular_policy(coin_rps, policy)):
        back = from_openspiel_policy(coin_rps, converted)
        np.testing.assert_array_equal(back.table, policy.table)
    theirs = pyspiel.nash_conv(coin_rps.openspiel_game, to_pyspiel_policy(coin_rps, policy))
    assert abs(cfrkit.nash_conv(coin_rps, policy) - theirs) < 1e-9


def test_a_policy_of_another_game_is_refused_by_the_conversions(coin_rps):
    kuhn = from_openspiel("kuhn_poker")
    for convert in (to_pyspiel_policy, to_tabular_policy):
        with pytest.raises(ValueError, match="belongs to"):
            convert(coin_rps, Policy.uniform(kuhn))


@pytest.mark.parametrize("name", ["phantom_ttt", "latent_ttt"])
def test_phantom_and_latent_tic_tac_toe_load_until_their_size_stops_them(name):
    # before per-player keys these failed at once: "infoset is player 1's here but player 0's";
    # now the walk goes on until the tree is too big (they have billions of histories)
    with pytest.raises(GameError, match="more than max_nodes=3000 nodes"):
        from_openspiel(name, max_nodes=3000)
