"""The depth-first compiler lays out the same trees as the breadth-first one it replaced, and
OpenSpiel's own walk (over C++ states) agrees with the History walk node for node.

The fingerprints below were recorded with the breadth-first compiler (commit 8da0da9): any
change to node order, infoset numbering, keys, actions, slots, probabilities or utilities
changes them.
"""

from __future__ import annotations

import pytest

import cfrkit
from cfrkit import GameError, compile_game
from cfrkit.games import KuhnPoker, LeducPoker, RockPaperScissors

from random_games import RandomGame

BEFORE = {  # name -> (fingerprint, nodes, infosets) from the breadth-first compiler
    "kuhn2": ("41284ac444117727aa5b26374ed01de460d5a2ceb35bbbe751a13783f3bc4e41", 55, 12),
    "kuhn3": ("ddd4a489efd0df8bd6cdfa524793fc863ab85d8f8ad9ece7fbb61a5ea3f93acb", 601, 48),
    "kuhn4": ("f485894e08b011c863a6563f34b5cbd4d58e29d799ad8696a132fb019787915b", 7801, 160),
    "kuhn_2bets": ("63f70706357c747b9b8f4589ec1be340ad448fde07b24bdd5a844749d36a04b8", 91, 18),
    "kuhn_3bets_ind": ("88f140916a0509be0adf7eaec6cbcaff7033d0d9590b8457cf2711f0ea396271", 190, 24),
    "leduc": ("f72e580c84346ceb7d965750506a84d9ed7ce42968551e616c94fc4155bef748", 9457, 936),
    "rps": ("4bc8836db286355f71f0d777d3d71d76b75e5993c1b508a0f0f658167ceadf56", 13, 2),
    "random0_2": ("79715d51c7ef97075d0ee5484bb2fe1dc78c21db853036952ea5576f2d53f8e8", 159, 42),
    "random1_3": ("bd788f1c69b6de149a5126ff0fed088a3e0a104f5a9538dc62d1721420f9f72b", 13, 4),
    "random7_2": ("1c8680dd958254aed709fc3b862048365ffba3c05ce7fedd4b594e0d5442fef9", 165, 42),
    "random12_3": ("21ce095bdbd0d5cc23cc3900dec24bb69ce7e8e0b10cdb5d21c61006f0014edd", 266, 81),
}

OPENSPIEL_BEFORE = {
    "kuhn_poker": ("076d8cd2e4ac30f804ec7599d345434d203209389320e4e650bd8ace31813322", 58, 12),
    "kuhn_poker(players=3)":
        ("7b25965de10abb23a2e67d05cab174f35250fe18235b8eac550808e1f5b2e564", 617, 48),
    "leduc_poker": ("b8019e742682da83b0e70c65841f9fac1f83819ac8b0063ac5d3d7214bab9233", 9457, 936),
    "liars_dice(dice_sides=4)":
        ("955f06e8cef2a9e362671659f728bf305e894194712ba1a3cc28c88f30680515", 8181, 1024),
    "turn_based_simultaneous_game(game=goofspiel(num_cards=3,imp_info=True))":
        ("07bdb80447ade73429d8c827ab44fc0759d6d4a90e9b6759c3cefc169e0c2051", 418, 90),
    "dark_hex(board_size=2)":
        ("21c80691608c58ee2e0f24a1ad9b14ce017f6b95b0ce68bca10fe2e4f7e66fdd", 441, 134),
    "tiny_hanabi": ("64d05052941d11178c034a046c792ac268bcc6e6b47d923b082dea4331346947", 55, 8),
}


def _game(name: str) -> cfrkit.Game:
    if name.startswith("random"):
        seed, players = map(int, name[6:].split("_"))
        return RandomGame(seed, num_players=players, max_depth=6, max_nodes=400,
                          zero_sum=bool(seed % 2))
    return {
        "kuhn2": lambda: KuhnPoker(), "kuhn3": lambda: KuhnPoker(players=3),
        "kuhn4": lambda: KuhnPoker(players=4), "kuhn_2bets": lambda: KuhnPoker(max_bets=2),
        "kuhn_3bets_ind": lambda: KuhnPoker(max_bets=3, deal="independent"),
        "leduc": LeducPoker, "rps": RockPaperScissors,
    }[name]()


@pytest.mark.parametrize("name", sorted(BEFORE))
def test_python_games_compile_to_the_same_tree_as_before(name):
    compiled = compile_game(_game(name))
    assert (compiled.fingerprint, compiled.num_nodes, compiled.num_infosets) == BEFORE[name]


# -- OpenSpiel ---------------------------------------------------------------------------------

pyspiel = pytest.importorskip("pyspiel")

from cfrkit.openspiel import OpenSpielGame, _SharedKey  # noqa: E402


class HistoryWalked(OpenSpielGame):
    """The same game, compiled through the History interface instead of OpenSpiel's walk."""

    def _cfrkit_walk(self, walk) -> bool:
        self._holders = None if self.keys_per_player else {}  # as root() would
        return False


def _load(name: str):
    game = pyspiel.load_game(name)
    assert game.get_type().dynamics == pyspiel.GameType.Dynamics.SEQUENTIAL
    return game


@pytest.mark.parametrize("name", sorted(OPENSPIEL_BEFORE))
def test_openspiel_games_compile_to_the_same_tree_as_before_by_either_walk(name):
    fast = compile_game(OpenSpielGame(_load(name)))
    slow = compile_game(HistoryWalked(_load(name)))
    assert (fast.fingerprint, fast.num_nodes, fast.num_infosets) == OPENSPIEL_BEFORE[name]
    assert slow.fingerprint == fast.fingerprint
    assert fast.zero_sum == slow.zero_sum


def test_openspiel_walk_finds_a_string_two_players_hold():
    # phantom_ttt's strings do not name the player: its walk stops at the first shared one
    # with the History's message, and from_openspiel switches to per-player keys on it
    with pytest.raises(GameError) as info:
        compile_game(OpenSpielGame(_load("phantom_ttt")), max_nodes=1000)
    assert isinstance(info.value.__cause__, _SharedKey)
    assert str(info.value) == (
        "from_openspiel('phantom_ttt()'): history [0] (OpenSpielState([0])): infoset_key() "
        "raised _SharedKey: players 0 and 1 both hold '...\\n...\\n...\\n'"
    )
    keyed = compile_game(OpenSpielGame(_load("kuhn_poker"), keys_per_player=True))
    plain = compile_game(OpenSpielGame(_load("kuhn_poker")))
    assert keyed.infoset_keys == tuple(f"p{plain.infosets[key].player}|{key}"
                                       for key in plain.infoset_keys)


def test_openspiel_walk_reports_imperfect_recall_like_the_history_walk():
    messages = []
    for kind in (OpenSpielGame, HistoryWalked):
        with pytest.raises(GameError) as info:
            compile_game(kind(_load("dark_hex_ir(board_size=2)")))
        messages.append(str(info.value))
    assert messages[0] == messages[1]
    assert "imperfect recall: player 1 reaches infoset 'P1 xo\\n..'" in messages[0]
    # the history named is rebuilt from its path, repr included
    assert "history [0, 1, 1, 3, 0] (OpenSpielState([0, 1, 1, 3, 0]))" in messages[0]


def test_openspiel_walk_stops_at_max_nodes_like_the_history_walk():
    messages = []
    for kind in (OpenSpielGame, HistoryWalked):
        with pytest.raises(GameError) as info:
            compile_game(kind(_load("leduc_poker")), max_nodes=5000)
        messages.append(str(info.value))
    assert messages[0] == messages[1]
    assert "the tree has more than max_nodes=5000 nodes (reached below history [" in messages[0]
