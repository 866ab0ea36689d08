"""Malformed answers from a game's History methods: each is a GameError naming the method and
the history, in a short message -- never silently read as something else."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import cfrkit
from cfrkit import GameError, compile_game

from probe_game import DEPTH, Probe
from spec_game import D, SpecGame, T

PATHS = {0: "history []", 1: "history ['h']", 2: "history ['h', 'a']", 3: "history ['h', 'a', 'x']"}


def refused(game: Probe, *fragments: str) -> str:
    with pytest.raises(GameError) as info:
        compile_game(game)
    message = str(info.value)
    assert len(message) < 300, message
    if game.depth is not None:
        assert PATHS[game.depth] in message, message
    for fragment in fragments:
        assert fragment in message, message
    return message


def _generator():
    return (u for u in (1.0, -1.0))


BAD = [
    # utilities: a string is not two numbers, a dict is not its keys, a set has no order
    ("utilities", "12", "returned a str ('12')"),
    ("utilities", {"a": 1, "b": 2}, "returned a dict"),
    ("utilities", {1.0, -1.0}, "returned a set"),
    ("utilities", frozenset({1.0, -1.0}), "returned a frozenset"),
    ("utilities", b"\x01\x02", "returned a bytes"),
    ("utilities", _generator, "returned a generator"),
    ("utilities", 1.0, "returned a float"),
    ("utilities", None, "returned a NoneType"),
    ("utilities", (1.0, "-1"), "gave a str ('-1'), not a real number"),
    ("utilities", (1.0, None), "gave a NoneType (None), not a real number"),
    ("utilities", (True, False), "gave a bool (True), not a real number"),
    ("utilities", (np.bool_(True), 0.0), "gave a bool"),
    ("utilities", (1 + 2j, 0.0), "gave a complex"),
    ("utilities", ((1.0,), -1.0), "gave a tuple"),
    ("utilities", (1.0, -1.0, 0.0), "gave 3 values for 2 players"),
    ("utilities", (), "gave 0 values for 2 players"),
    ("utilities", (1.0,), "gave 1 value for 2 players"),
    ("utilities", np.array(["1", "2"]), "array of dtype <U1"),
    ("utilities", np.array([[1.0, -1.0]]), "shape (1, 2)"),
    ("utilities", np.array([1 + 0j, 0j]), "dtype complex128"),
    ("utilities", (math.nan, 0.0), "not a finite number"),
    ("utilities", (math.inf, -math.inf), "not a finite number"),
    ("utilities", (10**400, 0), "too large for a float64"),
    # chance outcomes: only (label, probability) pairs, probabilities real numbers
    ("chance_outcomes", [("h", 0.5), "h1"], "gave a str ('h1'), not a (label, probability) pair"),
    ("chance_outcomes", "h1", "returned a str ('h1')"),
    ("chance_outcomes", [("h", "0.5"), ("t", "0.5")], "has probability a str ('0.5')"),
    ("chance_outcomes", [("h", 0.5, "x"), ("t", 0.5, "y")], "not a (label, probability) pair"),
    ("chance_outcomes", [("h",), ("t",)], "not a (label, probability) pair"),
    ("chance_outcomes", {("h", 0.5), ("t", 0.5)}, "returned a set"),
    ("chance_outcomes", {"h": 0.5, "t": 0.5}, "returned a dict"),
    ("chance_outcomes", [("h", True), ("t", False)], "has probability a bool"),
    ("chance_outcomes", [("h", None), ("t", 1.0)], "has probability a NoneType"),
    ("chance_outcomes", [("h", math.nan), ("t", 1.0)], "has probability nan"),
    ("chance_outcomes", [("h", -0.5), ("t", 1.5)], "has probability -0.5"),
    ("chance_outcomes", [("h", 0.5), ("t", 0.6)], "sum to 1.1"),
    ("chance_outcomes", [("h", 0.5), ("h", 0.5)], "duplicate chance outcome 'h'"),
    ("chance_outcomes", [(["h"], 0.5), (["t"], 0.5)], "unhashable label a list"),
    ("chance_outcomes", [], "no outcomes"),
    # actions: an ordered sequence of hashable, distinct labels
    ("actions", "ab", "returned a str ('ab')"),
    ("actions", {"a", "b"}, "returned a set"),
    ("actions", {"a": 0, "b": 1}, "returned a dict"),
    ("actions", lambda: iter(("a", "b")), "returned a tuple_iterator"),
    ("actions", None, "returned a NoneType"),
    ("actions", [["a"], ["b"]], "unhashable label a list (['a'])"),
    ("actions", ("a", "a"), "duplicate action 'a'"),
    ("actions", (1, 1.0), "duplicate action 1.0"),
    ("actions", (), "no actions"),
    # the kind of node: bools only
    ("is_terminal", "no", "is_terminal() returned a str ('no'), not a bool"),
    ("is_terminal", None, "is_terminal() returned a NoneType"),
    ("is_terminal", 0, "is_terminal() returned an int (0), not a bool"),
    ("is_chance", 1, "is_chance() returned an int (1), not a bool"),
    ("is_chance", (), "is_chance() returned a tuple"),
    # the player: an int in range
    ("current_player", 0.0, "current_player() returned a float (0.0), not an int"),
    ("current_player", "0", "current_player() returned a str"),
    ("current_player", True, "current_player() returned a bool"),
    ("current_player", None, "current_player() returned a NoneType"),
    ("current_player", 2, "current_player() is 2, out of range for 2 players"),
    ("current_player", -1, "current_player() is -1, out of range"),
    # the infoset key: a str
    ("infoset_key", 3, "infoset_key() returned an int (3), not a str"),
    ("infoset_key", b"k", "infoset_key() returned a bytes"),
    ("infoset_key", None, "infoset_key() returned a NoneType"),
    ("infoset_key", ("k",), "infoset_key() returned a tuple"),
    # children: histories
    ("child", None, "child('a') returned a NoneType (None), not a History"),
    ("child", "history", "child('a') returned a str"),
]

WHERE = {"utilities": DEPTH["terminal"], "chance_outcomes": DEPTH["chance"],
         "actions": DEPTH["player0"], "is_terminal": DEPTH["player1"],
         "is_chance": DEPTH["chance"], "current_player": DEPTH["player0"],
         "infoset_key": DEPTH["player0"], "child": DEPTH["player0"]}


@pytest.mark.parametrize("method, value, fragment", BAD, ids=[f"{m}-{i}" for i, (m, _, _) in enumerate(BAD)])
def test_a_malformed_answer_is_refused(method, value, fragment):
    message = refused(Probe(method, WHERE[method], value), fragment)
    assert f"{method}(" in message


def test_a_bad_root_is_refused():
    for value in (None, "root", 3, ()):
        with pytest.raises(GameError, match=r"root\(\) returned .*, not a cfrkit.History"):
            compile_game(Probe("root", None, value))


def test_a_bad_num_players_is_refused():
    for value in (0, -1, 2.0, "2", True, None):
        game = Probe()
        game.num_players = value
        with pytest.raises(GameError, match="num_players must be a positive int"):
            compile_game(game)


GOOD = [
    ("utilities", [1.0, -1.0]),
    ("utilities", (np.float32(1.0), np.int64(-1))),
    ("utilities", np.array([1.0, -1.0])),
    ("utilities", np.array([1, -1], dtype=np.int8)),
    ("utilities", (Fraction(1, 1), -1)),
    ("utilities", range(1, -2, -2)),
    ("chance_outcomes", [["h", 0.5], ["t", np.float64(0.5)]]),
    ("chance_outcomes", (("h", Fraction(1, 2)), ("t", 0.5))),
    ("chance_outcomes", [("h", np.float32(0.5)), ("t", 0.5)]),
    ("is_terminal", np.bool_(False)),
    ("current_player", np.int64(0)),
    ("actions", ["a", "b"]),
]


@pytest.mark.parametrize("method, value", GOOD)
def test_numbers_and_sequences_of_any_real_kind_are_accepted(method, value):
    depth = {"is_terminal": DEPTH["player0"]}.get(method, WHERE[method])
    compiled = compile_game(Probe(method, depth, value))
    # the same game with plain floats and tuples: every array and label equal
    plain = Probe("utilities", DEPTH["terminal"], (1.0, -1.0)) if method == "utilities" else Probe()
    assert compiled.fingerprint == compile_game(plain).fingerprint


def test_a_str_subclass_key_becomes_the_plain_str_it_holds(tmp_path):
    # numpy.str_ keys compiled, but saving the game (and its cache) refused them
    def game(key):
        return SpecGame(D(0, key, ("a", T(1.0, -1.0)), ("b", D(1, key + "b", ("x", T(0.0, 0.0))))))

    compiled = compile_game(game(np.str_("root")))
    assert [type(key) for key in compiled.infoset_keys] == [str, str]
    assert compiled.fingerprint == compile_game(game("root")).fingerprint
    compiled.save(tmp_path / "g.npz")
    assert cfrkit.load_compiled(tmp_path / "g.npz").infoset_keys == ("root", "rootb")


# -- hypothesis: any wrong answer, anywhere it can be given ------------------------------------

not_bools = st.one_of(st.integers(), st.floats(), st.text(max_size=5), st.none(),
                      st.lists(st.booleans(), max_size=2).map(tuple))
not_ints = st.one_of(st.floats(), st.text(max_size=5), st.none(), st.booleans(),
                     st.integers().filter(lambda p: not 0 <= p < 2))
not_numbers = st.one_of(st.text(max_size=5), st.none(), st.booleans(), st.complex_numbers(),
                        st.lists(st.floats(), max_size=2).map(tuple),
                        st.floats().filter(lambda x: not math.isfinite(x)),
                        st.floats(min_value=1e201, max_value=1e308),
                        st.integers(min_value=10**309))
bad_utilities = st.one_of(
    st.text(max_size=4), st.none(), st.floats(), st.dictionaries(st.text(max_size=2), st.floats(), max_size=2),
    st.sets(st.integers(), max_size=2), st.lists(st.floats(-1, 1), max_size=4).filter(lambda v: len(v) != 2),
    st.tuples(not_numbers, st.floats(-1, 1)), st.tuples(st.floats(-1, 1), not_numbers),
)
bad_outcome = st.one_of(st.text(max_size=3), st.none(), st.floats(), st.tuples(st.text(max_size=1)),
                        st.tuples(st.text(max_size=1), st.floats(), st.integers()),
                        st.tuples(st.text(max_size=1), not_numbers))
bad_outcomes = st.one_of(
    st.text(max_size=4), st.none(), st.dictionaries(st.text(max_size=1), st.floats(0, 1), max_size=2),
    st.lists(bad_outcome, min_size=1, max_size=3),
    st.tuples(st.just(("h", 0.5)), bad_outcome),
    st.lists(st.tuples(st.sampled_from("ht"), st.floats(0, 1)), min_size=1, max_size=3).filter(
        lambda pairs: len({p[0] for p in pairs}) < len(pairs) or abs(math.fsum(p[1] for p in pairs) - 1) > 1e-9),
)
bad_actions = st.one_of(
    st.text(max_size=4), st.none(), st.integers(), st.just(()),
    st.sets(st.text(max_size=1), min_size=1, max_size=3), st.dictionaries(st.text(max_size=1), st.integers(), min_size=1, max_size=2),
    st.lists(st.lists(st.integers(), max_size=1), min_size=1, max_size=2),
    st.lists(st.sampled_from("ab"), min_size=2, max_size=4).filter(lambda a: len(set(a)) < len(a)),
)
not_keys = st.one_of(st.integers(), st.none(), st.binary(max_size=3), st.floats(),
                     st.tuples(st.text(max_size=2)))
not_histories = st.one_of(st.integers(), st.none(), st.text(max_size=3), st.floats())

ANSWERS = {
    "is_terminal": (not_bools, [0, 1, 2, 3]),
    "is_chance": (not_bools, [0, 1, 2]),
    "current_player": (not_ints, [1, 2]),
    "actions": (bad_actions, [1, 2]),
    "infoset_key": (not_keys, [1, 2]),
    "chance_outcomes": (bad_outcomes, [0]),
    "utilities": (bad_utilities, [3]),
    "child": (not_histories, [0, 1, 2]),
}


@st.composite
def wrong_answers(draw):
    method = draw(st.sampled_from(sorted(ANSWERS)))
    values, depths = ANSWERS[method]
    return method, draw(st.sampled_from(depths)), draw(values)


@settings(max_examples=400, deadline=None)
@given(wrong_answers())
def test_any_wrong_answer_is_a_short_game_error_naming_method_and_history(case):
    method, depth, value = case
    message = refused(Probe(method, depth, value))
    # the method named is the one that answered (or, for a bad kind of node, a check about it)
    assert f"{method}(" in message, message
