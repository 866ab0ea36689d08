"""KuhnPoker(max_bets=..., deal=...): the toy poker of the result-table post ("Dave Computes: A
Simple Machine Learning Algorithm", 2019) and its relatives, checked by hand, by an exact
sequence-form LP (tests/sequence_form.py) and by CFR; and KuhnPoker() exactly as before."""

from __future__ import annotations

from fractions import Fraction
from itertools import product

import pytest

import cfrkit
from cfrkit.cli import UsageError, parse_game
from cfrkit.games import KuhnPoker

from sequence_form import solve

POST_GAME = dict(max_bets=2, deal="independent")


def play(game, deal, *actions):
    """The history after dealing ``deal`` (one card letter per player) and playing ``actions``."""
    history = game.root().child(deal)
    for action in actions:
        assert action in history.actions(), (deal, actions, history.actions())
        history = history.child(action)
    return history


def terminals(game):
    """Every terminal history below the root, with the betting letters that led there."""
    found = []

    def walk(history, path):
        if history.is_terminal():
            found.append((path, history))
        elif history.is_chance():
            for outcome, _ in history.chance_outcomes():
                walk(history.child(outcome), path)
        else:
            for action in history.actions():
                walk(history.child(action), path + (action,))

    walk(game.root(), ())
    return found


# -- sizes ---------------------------------------------------------------------------------------
#
# Two players, at most m bets (the opening bet plus m - 1 raises). After the deal a hand is
# either "check-check", or one of the two openings ("" or "c") followed by k = 1..m bets/raises
# and then a fold or a call: 1 + 2 * m * 2 = 1 + 4m endings per deal (m = 1: 5, m = 2: 9,
# m = 3: 13). Someone acts at the two unopened histories ("", "c") and after each of the k bets
# of each opening: 2 + 2m betting histories per deal (m = 2: the post's six "", c, cr, crr, r,
# rr). Each player sees only its own card, one of 3 values under either deal, so the infosets
# are 3 * (2 + 2m) (m = 1: 12, m = 2: 18, the post's 18 game states, m = 3: 24), half of them
# each player's. The deck deals 3 * 2 = 6 ordered pairs of distinct cards, the independent deal
# 3 * 3 = 9 pairs. Nodes: the chance root + deals * (decision + terminal histories).
SIZES = [
    # kwargs, deals, terminals, infosets, nodes
    ({}, 6, 6 * 5, 12, 1 + 6 * (4 + 5)),
    (dict(deal="independent"), 9, 9 * 5, 12, 1 + 9 * (4 + 5)),
    (dict(max_bets=2), 6, 6 * 9, 18, 1 + 6 * (6 + 9)),  # 54 terminals
    (POST_GAME, 9, 9 * 9, 18, 1 + 9 * (6 + 9)),  # 81 terminals
    (dict(max_bets=3), 6, 6 * 13, 24, 1 + 6 * (8 + 13)),
    (dict(max_bets=3, deal="independent"), 9, 9 * 13, 24, 1 + 9 * (8 + 13)),
]


@pytest.mark.parametrize("kwargs, deals, n_terminals, n_infosets, n_nodes", SIZES)
def test_sizes(kwargs, deals, n_terminals, n_infosets, n_nodes):
    game = KuhnPoker(**kwargs)
    outcomes = game.root().chance_outcomes()
    assert len(outcomes) == deals
    assert all(p == 1 / deals for _, p in outcomes)
    compiled = cfrkit.compile_game(game)
    assert compiled.num_terminals == n_terminals == len(terminals(game))
    assert compiled.num_infosets == n_infosets
    assert compiled.num_nodes == n_nodes
    per_player = [sum(info.player == p for info in compiled.infosets.values()) for p in (0, 1)]
    assert per_player == [n_infosets // 2] * 2


def test_the_deals():
    independent = [deal for deal, _ in KuhnPoker(**POST_GAME).root().chance_outcomes()]
    assert independent == ["".join(pair) for pair in product("QKA", repeat=2)]
    assert KuhnPoker(**POST_GAME).cards == ("Q", "K", "A")
    deck = [deal for deal, _ in KuhnPoker(max_bets=2).root().chance_outcomes()]
    assert deck == ["JQ", "JK", "QJ", "QK", "KJ", "KQ"]  # Kuhn's deck, as KuhnPoker()
    assert deck == [deal for deal, _ in KuhnPoker().root().chance_outcomes()]


def test_the_post_game_states_keys_and_actions():
    compiled = cfrkit.compile_game(KuhnPoker(**POST_GAME))
    # the post's 18 game states, its letters: c check/call, r bet/raise
    player_of = {"": 0, "c": 1, "cr": 0, "crr": 1, "r": 1, "rr": 0}
    actions_of = {
        "": ("check", "bet"), "c": ("check", "bet"),
        "r": ("fold", "call", "raise"), "cr": ("fold", "call", "raise"),
        "rr": ("fold", "call"), "crr": ("fold", "call"),  # two bets in: no third
    }
    expected = {card + h: (player_of[h], actions_of[h]) for card in "QKA" for h in player_of}
    got = {key: (info.player, info.actions) for key, info in compiled.infosets.items()}
    assert got == expected


# -- the rules, by hand ----------------------------------------------------------------------------

# (kwargs, deal as player 0's then player 1's card, actions, payoffs). Antes 1 each; a bet or a
# raise puts in what is owed plus 1; a call what is owed.
HAND_CHECKED = [
    # the post's example 2: both dealt a king, bet, call, "they split the pot ... gained $0"
    (POST_GAME, "KK", ("bet", "call"), (0.0, 0.0)),
    (POST_GAME, "QQ", ("bet", "call"), (0.0, 0.0)),
    (POST_GAME, "QQ", ("check", "check"), (0.0, 0.0)),
    (POST_GAME, "AA", ("check", "bet", "raise", "call"), (0.0, 0.0)),  # pot 6, split
    # example 1: ace against king, check, bet, raise, fold: "player 1 has gained $2"
    (POST_GAME, "AK", ("check", "bet", "raise", "fold"), (2.0, -2.0)),
    # the worked hand: a king bets, is raised, calls, beats a queen and wins the $6 pot
    (POST_GAME, "KQ", ("bet", "raise", "call"), (3.0, -3.0)),
    (POST_GAME, "AK", ("bet", "raise", "call"), (3.0, -3.0)),
    (POST_GAME, "KA", ("bet", "raise", "call"), (-3.0, 3.0)),
    (POST_GAME, "KA", ("bet", "raise", "fold"), (-2.0, 2.0)),
    (POST_GAME, "QA", ("bet", "fold"), (1.0, -1.0)),  # a bluff that works
    (POST_GAME, "QA", ("bet", "call"), (-2.0, 2.0)),
    (POST_GAME, "QK", ("check", "bet", "fold"), (-1.0, 1.0)),
    (POST_GAME, "QK", ("check", "bet", "call"), (-2.0, 2.0)),
    (POST_GAME, "AQ", ("check", "check"), (1.0, -1.0)),
    (POST_GAME, "KQ", ("check", "bet", "raise", "call"), (3.0, -3.0)),
    # the deck version: Kuhn's cards, no ties
    (dict(max_bets=2), "KJ", ("check", "bet", "raise", "call"), (3.0, -3.0)),
    (dict(max_bets=2), "JQ", ("bet", "raise", "fold"), (-2.0, 2.0)),
    # three bets: a bet, a raise and a re-raise, called: 4 chips each
    (dict(max_bets=3), "KJ", ("bet", "raise", "raise", "call"), (4.0, -4.0)),
    (dict(max_bets=3), "JK", ("check", "bet", "raise", "raise", "fold"), (-3.0, 3.0)),
    (dict(max_bets=3, deal="independent"), "AA", ("bet", "raise", "raise", "call"), (0.0, 0.0)),
    # one bet, Kuhn's labels, independent cards: ties split
    (dict(deal="independent"), "QQ", ("bet", "bet"), (0.0, 0.0)),
    (dict(deal="independent"), "AA", ("pass", "pass"), (0.0, 0.0)),
    (dict(deal="independent"), "AK", ("pass", "bet", "bet"), (2.0, -2.0)),
    (dict(deal="independent"), "KK", ("pass", "bet", "pass"), (-1.0, 1.0)),
]


@pytest.mark.parametrize("kwargs, deal, actions, payoffs", HAND_CHECKED, ids=[
    f"{KuhnPoker(**k).name}-{deal}-{'-'.join(actions)}" for k, deal, actions, _ in HAND_CHECKED
])
def test_hand_checked_payoffs(kwargs, deal, actions, payoffs):
    history = play(KuhnPoker(**kwargs), deal, *actions)
    assert history.is_terminal()
    assert history.utilities() == payoffs


def test_a_raise_cannot_be_reraised_with_two_bets():
    game = KuhnPoker(max_bets=2)
    for opening in ((), ("check",)):
        assert play(game, "JQ", *opening).actions() == ("check", "bet")
        assert play(game, "JQ", *opening, "bet").actions() == ("fold", "call", "raise")
        assert play(game, "JQ", *opening, "bet", "raise").actions() == ("fold", "call")
    for path, _ in terminals(game):
        assert sum(a in ("bet", "raise") for a in path) <= 2
    # one bet: Kuhn's game, its labels; after the bet only fold (pass) or call (bet)
    assert play(KuhnPoker(deal="independent"), "QK", "bet").actions() == ("pass", "bet")
    assert play(KuhnPoker(deal="independent"), "QK", "bet", "bet").is_terminal()


def test_three_bets_allow_one_reraise():
    game = KuhnPoker(max_bets=3)
    assert play(game, "JQ", "bet", "raise").actions() == ("fold", "call", "raise")
    assert play(game, "JQ", "bet", "raise", "raise").actions() == ("fold", "call")
    assert play(game, "JQ", "check", "bet", "raise", "raise").actions() == ("fold", "call")
    assert play(game, "JQ", "check", "bet", "raise", "raise").infoset_key() == "Jcrrr"
    assert max(sum(a in ("bet", "raise") for a in path) for path, _ in terminals(game)) == 3


def test_every_hand_is_zero_sum_and_settles_what_was_put_in():
    for kwargs in (POST_GAME, dict(max_bets=2), dict(max_bets=3, deal="independent")):
        for path, history in terminals(KuhnPoker(**kwargs)):
            u = history.utilities()
            assert u[0] + u[1] == 0
            # at most the ante plus one chip per bet or raise changes hands
            assert abs(u[0]) <= 1 + sum(a in ("bet", "raise") for a in path)


# -- exact values ------------------------------------------------------------------------------

VALUES = [
    ({}, Fraction(-1, 18)),  # Kuhn (1950): checks the LP itself
    (dict(max_bets=2), Fraction(-1, 18)),
    (POST_GAME, Fraction(-1, 36)),
    (dict(deal="independent"), Fraction(-1, 36)),
    (dict(max_bets=3), Fraction(-1, 18)),
    (dict(max_bets=3, deal="independent"), Fraction(-1, 36)),
]


@pytest.mark.parametrize("kwargs, value", VALUES, ids=[repr(KuhnPoker(**k)) for k, _ in VALUES])
def test_game_values_by_the_sequence_form_lp(kwargs, value):
    pytest.importorskip("scipy")
    game = KuhnPoker(**kwargs)
    by_player0, by_player1, equilibrium = solve(game)
    assert by_player0 == pytest.approx(float(value), abs=1e-9)
    assert by_player1 == pytest.approx(float(value), abs=1e-9)
    # the LP's strategies are an equilibrium by cfrkit's own best responses, worth the value
    policy = cfrkit.Policy.from_dict(game, equilibrium)
    assert cfrkit.nash_conv(game, policy) < 1e-7
    assert cfrkit.expected_values(game, policy)[0] == pytest.approx(float(value), abs=1e-7)


@pytest.mark.parametrize("kwargs, value", [(POST_GAME, -1 / 36), (dict(max_bets=2), -1 / 18)])
def test_cfr_converges_to_the_value(kwargs, value):
    game = KuhnPoker(**kwargs)
    policy = cfrkit.DCFRPlus(game).iterate(10_000).average_policy()
    assert cfrkit.nash_conv(game, policy) < 1e-4
    values = cfrkit.expected_values(game, policy)
    assert values[0] == pytest.approx(value, abs=1e-4)
    assert values[1] == pytest.approx(-value, abs=1e-4)


def test_the_posts_recommended_play_reads_as_a_policy():
    # The post's summary table (its "player 1" is player 0). Unstated rows are unreachable under
    # it: player 1 never bets a king, so "Kcrr" is filled in with a call.
    game = KuhnPoker(**POST_GAME)
    post = {
        "Q": {"check": 1}, "Qcr": {"fold": 1},
        "K": {"check": 1}, "Kcr": {"call": 2 / 3, "fold": 1 / 3},
        "A": {"check": 1}, "Acr": {"raise": 1},
        "Qc": {"check": 2 / 3, "bet": 1 / 3}, "Kc": {"check": 1}, "Ac": {"bet": 1},
        # "If player 1 ... leading off with a bet, then player 2 should fold a queen, fold (1/2)
        # or call (1/2) with a king, and raise an ace. If raised, player 1 should fold a queen
        # but call with a king or ace."
        "Qr": {"fold": 1}, "Kr": {"fold": 1 / 2, "call": 1 / 2}, "Ar": {"raise": 1},
        "Qrr": {"fold": 1}, "Krr": {"call": 1}, "Arr": {"call": 1},
        # facing check-bet-raise the table folds a queen and calls an ace
        "Qcrr": {"fold": 1}, "Kcrr": {"call": 1}, "Acrr": {"call": 1},
    }
    policy = cfrkit.Policy.from_dict(game, post)
    # By hand, player 0's payoff per deal (0's card, 1's card), each with probability 1/9:
    #   QQ 2/3 * 0 + 1/3 * -1 = -1/3   QK -1   QA -1
    #   KQ 2/3 * 1 + 1/3 * (2/3 * 2 + 1/3 * -1) = 1   KK 0   KA 2/3 * -2 + 1/3 * -1 = -5/3
    #   AQ 2/3 * 1 + 1/3 * 2 = 4/3   AK 1   AA 0 (bet, raise, call: split)
    # sum -2/3, value -2/27.
    assert cfrkit.expected_values(game, policy)[0] == pytest.approx(-2 / 27, abs=1e-12)
    # It is not an equilibrium: against player 1's replies to a bet, player 0 does best to bet
    # every card and fold every raise but an ace's. By hand, per deal:
    #   QQ +1   QK 1/2 * 1 + 1/2 * -2 = -1/2   QA -2   KQ +1   KK 1/2 * 1 + 1/2 * 0 = 1/2
    #   KA -2   AQ +1   AK 1/2 * 1 + 1/2 * 2 = 3/2   AA 0;  sum 1/2, value 1/18.
    value, response = cfrkit.best_response(game, policy, 0)
    assert value == pytest.approx(1 / 18, abs=1e-12)
    assert {response[c] for c in "QKA"} == {"bet"}
    assert cfrkit.nash_conv(game, policy) > 0.1


# -- KuhnPoker() as it was ----------------------------------------------------------------------

# Fingerprints of KuhnPoker() and KuhnPoker(players=3) computed on main at c7bb7ed (before the
# max_bets and deal parameters existed); checkpoints and policy files carry them.
FINGERPRINTS_BEFORE = {
    2: "41284ac444117727aa5b26374ed01de460d5a2ceb35bbbe751a13783f3bc4e41",
    3: "ddd4a489efd0df8bd6cdfa524793fc863ab85d8f8ad9ece7fbb61a5ea3f93acb",
}


@pytest.mark.parametrize("players", [2, 3])
def test_kuhn_is_unchanged(players):
    expected = FINGERPRINTS_BEFORE[players]
    for game in (KuhnPoker(players=players), KuhnPoker(players, max_bets=1, deal="deck")):
        compiled = cfrkit.compile_game(game)
        assert compiled.fingerprint == expected
        assert repr(game) == f"KuhnPoker(players={players})"
        assert game.name == ("kuhn_poker" if players == 2 else "kuhn_poker_3p")
    if players == 2:
        # the infoset order on main at c7bb7ed (player 0's, then player 1's)
        assert compiled.infoset_keys == (
            "J", "Q", "K", "Jpb", "Qpb", "Kpb", "Qp", "Qb", "Kp", "Kb", "Jp", "Jb"
        )
        assert {info.actions for info in compiled.infosets.values()} == {("pass", "bet")}
        assert (compiled.num_nodes, compiled.num_terminals) == (55, 30)
    else:
        assert (compiled.num_nodes, compiled.num_infosets) == (601, 48)


# The variants' own fingerprints as first released (so their checkpoints keep loading).
FINGERPRINTS_NEW = {
    "KuhnPoker(players=2, max_bets=2, deal='independent')":
        "be15c023e42ed8b62259075cf48857b06b3d66f0066aca2bad2273d5a67643ec",
    "KuhnPoker(players=2, max_bets=2)":
        "63f70706357c747b9b8f4589ec1be340ad448fde07b24bdd5a844749d36a04b8",
    "KuhnPoker(players=2, deal='independent')":
        "5d010a5e0acac1ab122827189cf91b0d2bf1445dfe85a7724c316bff37bac192",
}


@pytest.mark.parametrize("text", list(FINGERPRINTS_NEW))
def test_repr_describes_the_game(text):
    game = eval(text, {"KuhnPoker": KuhnPoker})
    assert repr(game) == text
    assert cfrkit.compile_game(game).fingerprint == FINGERPRINTS_NEW[text]
    fingerprints = {cfrkit.compile_game(eval(t, {"KuhnPoker": KuhnPoker})).fingerprint
                    for t in [*FINGERPRINTS_NEW, "KuhnPoker()"]}
    assert len(fingerprints) == 4  # every variant is its own game


def test_names():
    assert KuhnPoker(**POST_GAME).name == "kuhn_poker_2bets_independent"
    assert KuhnPoker(max_bets=3).name == "kuhn_poker_3bets"
    assert KuhnPoker(deal="independent").name == "kuhn_poker_independent"


# -- bad arguments ------------------------------------------------------------------------------

@pytest.mark.parametrize(
    "kwargs, message",
    [
        (dict(players=1), "players must be an int >= 2, got 1"),
        (dict(players=True), "players must be an int >= 2, got True"),
        (dict(max_bets=0), "max_bets must be an int >= 1, got 0"),
        (dict(max_bets=-1), "max_bets must be an int >= 1, got -1"),
        (dict(max_bets=2.0), "max_bets must be an int >= 1, got 2.0"),
        (dict(max_bets="2"), "max_bets must be an int >= 1, got '2'"),
        (dict(max_bets=True), "max_bets must be an int >= 1, got True"),
        (dict(max_bets=None), "max_bets must be an int >= 1, got None"),
        (dict(deal="Deck"), "deal must be 'deck' or 'independent', got 'Deck'"),
        (dict(deal="shoe"), "deal must be 'deck' or 'independent', got 'shoe'"),
        (dict(deal=None), "deal must be 'deck' or 'independent', got None"),
        (dict(players=3, max_bets=2),
         "players must be 2 when max_bets > 1 or deal='independent', got players=3 with "
         "max_bets=2, deal='deck'"),
        (dict(players=4, deal="independent"),
         "players must be 2 when max_bets > 1 or deal='independent', got players=4 with "
         "max_bets=1, deal='independent'"),
        # past compile_game's default 20 million nodes: refused at once, before a walk that
        # would fail after minutes (and before the (players + 1)! hands are listed: 40
        # players used to exhaust the memory)
        (dict(players=7),
         "players must be at most 6, got 7: the game has 36,167,041 histories, over "
         "compile_game's limit of 20,000,000 nodes"),
        (dict(players=40), "players must be at most 6, got 40: the game has more than 41! "),
        (dict(players=10**9), "players must be at most 6, got 1000000000: the game has more "
         "than 1000000001! histories"),
    ],
)
def test_bad_arguments(kwargs, message):
    with pytest.raises(ValueError) as caught:
        KuhnPoker(**kwargs)
    assert str(caught.value).startswith(message)


@pytest.mark.parametrize("players", [2, 3, 4, 5])
def test_the_size_formula_counts_the_compiled_histories(players):
    from cfrkit.games.kuhn import MAX_PLAYERS, deck_histories

    assert cfrkit.compile_game(KuhnPoker(players=players)).num_nodes == deck_histories(players)
    assert MAX_PLAYERS == 6 and deck_histories(6) == 1_940_401 <= 20_000_000 < deck_histories(7)


def test_the_deck_is_dealt_on_first_use():
    # the constructor lists no hand, so naming the game (cfrkit sweep checks its grid so)
    # is free, and the chance node lists them all
    game = KuhnPoker(players=6)
    assert "_deal_outcomes" not in vars(game)
    small = KuhnPoker(players=4)
    outcomes = small.root().chance_outcomes()
    assert len(outcomes) == 120 and outcomes[0] == ("0123", 1 / 120)
    assert len({deal for deal, _ in outcomes}) == 120


def test_new_parameters_are_keyword_only():
    with pytest.raises(TypeError):
        KuhnPoker(2, 2)


# -- the command line's game names --------------------------------------------------------------

@pytest.mark.parametrize(
    "spec, text",
    [
        ("kuhn(max_bets=2,deal=independent)",
         "KuhnPoker(players=2, max_bets=2, deal='independent')"),
        ("kuhn( deal = 'independent' , max_bets = 2 )",
         "KuhnPoker(players=2, max_bets=2, deal='independent')"),
        ('kuhn(deal="deck", max_bets=3)', "KuhnPoker(players=2, max_bets=3)"),
        ("kuhn(max_bets=1)", "KuhnPoker(players=2)"),
        ("kuhn(players=3)", "KuhnPoker(players=3)"),
    ],
)
def test_parse_game(spec, text):
    assert repr(parse_game(spec)) == text


@pytest.mark.parametrize(
    "spec, message",
    [
        ("kuhn(deal=shoe)", "game 'kuhn': deal must be 'deck' or 'independent', got 'shoe'"),
        ("kuhn(deal='independent)", "deal must be 'deck' or 'independent', got \"'independent\""),
        ("kuhn(max_bets=two)", "game 'kuhn': max_bets must be int, got 'two'"),
        ("kuhn(max_bets=0)", "game 'kuhn(max_bets=0)': max_bets must be an int >= 1, got 0"),
        ("kuhn(players=3,deal=independent)", "players must be 2 when max_bets > 1"),
        ("kuhn(players=40)", "game 'kuhn(players=40)': players must be at most 6, got 40"),
        ("kuhn(players=3, players=4)", "game 'kuhn': players given twice"),
    ],
)
def test_parse_game_refuses(spec, message):
    with pytest.raises(UsageError) as caught:
        parse_game(spec)
    assert message in str(caught.value)
