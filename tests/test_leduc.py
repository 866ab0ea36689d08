"""The native Leduc hold'em: tree size, rules, infoset keys and the equilibrium value."""

import numpy as np
import pytest

import cfrkit
from cfrkit import Policy, VanillaCFR, compile_game
from cfrkit.games import LeducPoker
from cfrkit.tree import CHANCE, DECISION, TERMINAL

# OpenSpiel's leduc_poker: histories of every kind, and information sets of both players
NUM_CHANCE, NUM_DECISION, NUM_TERMINAL = 157, 3780, 5520
NUM_HISTORIES = 9457
NUM_INFOSETS = 936
GAME_VALUE = -0.0856064  # player 0's equilibrium value, as published with OpenSpiel


@pytest.fixture(scope="module")
def leduc():
    return compile_game(LeducPoker())


def play(*labels):
    history = LeducPoker().root()
    for label in labels:
        history = history.child(label)
    return history


def test_counts_match_openspiel_definitions(leduc):
    # OpenSpiel's 9,457 "histories" are all nodes -- chance, decision and terminal -- and its
    # 936 information sets are both players' decision infosets: compile_game counts the same.
    assert leduc.num_nodes == NUM_HISTORIES
    assert leduc.num_infosets == NUM_INFOSETS
    kinds = np.bincount(leduc.tree.node_kind, minlength=3)
    assert kinds[CHANCE] == NUM_CHANCE
    assert kinds[DECISION] == NUM_DECISION
    assert kinds[TERMINAL] == NUM_TERMINAL == leduc.num_terminals
    assert np.bincount(leduc.tree.infoset_player).tolist() == [468, 468]
    assert leduc.zero_sum


def test_counts_equal_a_walk_of_pyspiel(leduc):
    pyspiel = pytest.importorskip("pyspiel")
    counts = {"chance": 0, "decision": 0, "terminal": 0}
    infosets = set()
    stack = [pyspiel.load_game("leduc_poker").new_initial_state()]
    while stack:
        state = stack.pop()
        if state.is_terminal():
            counts["terminal"] += 1
            continue
        if state.is_chance_node():
            counts["chance"] += 1
            stack.extend(state.child(a) for a, _ in state.chance_outcomes())
            continue
        counts["decision"] += 1
        infosets.add(state.information_state_string())
        stack.extend(state.child(a) for a in state.legal_actions())
    assert counts == {"chance": NUM_CHANCE, "decision": NUM_DECISION, "terminal": NUM_TERMINAL}
    assert sum(counts.values()) == leduc.num_nodes
    assert len(infosets) == leduc.num_infosets


def test_readable_keys_and_actions(leduc):
    assert leduc.infosets["Qh:"].player == 0
    assert leduc.infosets["Qh:"].actions == ("call", "raise")
    assert leduc.infosets["Ks:c"].player == 1
    assert leduc.infosets["Ks:cr"].actions == ("fold", "call", "raise")
    assert leduc.infosets["Ks:crr"].actions == ("fold", "call")  # two raises: no more
    assert leduc.infosets["Jh:rc|Qs:"].player == 0
    assert leduc.infosets["Jh:rc|Qs:r"].player == 1
    assert leduc.infosets["Jh:rrc|Qs:crr"].actions == ("fold", "call")
    # every key is the private card, the round-one bets, then the public card and round two
    for key in leduc.infoset_keys:
        card, _, rest = key.partition(":")
        assert card in ("Js", "Jh", "Qs", "Qh", "Ks", "Kh")
        if "|" in rest:
            round1, public = rest.split("|")
            assert public[:2] in ("Js", "Jh", "Qs", "Qh", "Ks", "Kh") and public[2] == ":"


def test_deals_exclude_dealt_cards():
    root = LeducPoker().root()
    assert root.is_chance()
    assert [c for c, _ in root.chance_outcomes()] == ["Js", "Jh", "Qs", "Qh", "Ks", "Kh"]
    second = root.child("Qh")
    assert second.is_chance()
    assert [c for c, _ in second.chance_outcomes()] == ["Js", "Jh", "Qs", "Ks", "Kh"]
    assert all(p == pytest.approx(1 / 5) for _, p in second.chance_outcomes())
    public = play("Qh", "Ks", "call", "call")
    assert public.is_chance()
    assert [c for c, _ in public.chance_outcomes()] == ["Js", "Jh", "Qs", "Kh"]


@pytest.mark.parametrize(
    "labels, utilities",
    [
        # raise 2 / call, raise 4 / call: stakes 7 each, king high beats queen high
        (("Ks", "Qh", "raise", "call", "Js", "raise", "call"), (7.0, -7.0)),
        # check, raise 4, re-raise, call: stakes 9; player 0 pairs the public jack
        (("Js", "Kh", "call", "call", "Jh", "call", "raise", "raise", "call"), (9.0, -9.0)),
        # check, raise, fold in round one: player 0 loses the ante
        (("Qs", "Ks", "call", "raise", "fold"), (-1.0, 1.0)),
        # player 1 folds to a raise: loses the ante
        (("Js", "Ks", "raise", "fold"), (1.0, -1.0)),
        # equal ranks split the pot
        (("Qs", "Qh", "call", "call", "Ks", "call", "call"), (0.0, 0.0)),
        # raise, re-raise, call (stakes 5), then raise 4, re-raise, fold: player 0 loses 9
        (("Ks", "Js", "raise", "raise", "call", "Qh", "raise", "raise", "fold"), (-9.0, 9.0)),
        # a pair beats a higher card
        (("Kh", "Jh", "call", "call", "Js", "call", "call"), (-1.0, 1.0)),
    ],
)
def test_payoffs(labels, utilities):
    history = play(*labels)
    assert history.is_terminal()
    assert history.utilities() == utilities


def test_turn_order_and_round_structure():
    assert play("Qs", "Ks").current_player() == 0
    assert play("Qs", "Ks", "call").current_player() == 1
    assert play("Qs", "Ks", "raise", "raise").current_player() == 0
    assert play("Qs", "Ks", "raise", "raise").actions() == ("fold", "call")
    round_two = play("Qs", "Ks", "call", "raise", "call", "Jh")
    assert not round_two.is_chance() and round_two.current_player() == 0
    assert round_two.infoset_key() == "Qs:crc|Jh:"
    assert round_two.child("call").infoset_key() == "Ks:crc|Jh:c"
    assert not play("Qs", "Ks", "call").is_terminal()


def test_uniform_policy_values(leduc):
    # the same numbers OpenSpiel's policy_value / nash_conv give for its uniform policy
    evaluation = cfrkit.evaluate(leduc, Policy.uniform(leduc))
    np.testing.assert_allclose(evaluation.values, [-0.078125, 0.078125], atol=1e-12)
    assert evaluation.nash_conv == pytest.approx(4.747222222222222, abs=1e-12)


def test_converged_value_is_the_game_value(leduc):
    # 2,000 iterations already bring player 0's value within 8.5e-4 of the game value;
    # 3,000 (about 0.4 s) leave a margin (measured: -0.086101, NashConv 0.0099)
    trainer = VanillaCFR(leduc).iterate(3000)
    evaluation = cfrkit.evaluate(leduc, trainer.average_policy())
    assert evaluation.values[0] == pytest.approx(GAME_VALUE, abs=1e-3)
    assert evaluation.values.sum() == pytest.approx(0.0, abs=1e-12)
    assert evaluation.nash_conv < 0.02
