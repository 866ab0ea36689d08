"""Policy files (save / load_policy), to_dict through JSON, the table view, and
BestResponse.as_policy."""

import dataclasses
import json
import math
import os
from pathlib import Path

import numpy as np
import pytest

import cfrkit
from cfrkit.evaluation import BestResponse, best_response, expected_values
from cfrkit.games import KuhnPoker, LeducPoker, RockPaperScissors
from cfrkit.policy import Policy, load_policy
from cfrkit.tree import compile_game

from spec_game import D, SpecGame, T
from random_games import random_policy

NATIVE = {
    "rps": RockPaperScissors(),
    "kuhn2": KuhnPoker(),
    "kuhn3": KuhnPoker(players=3),
    "leduc": LeducPoker(),
}


def same_bits(a: np.ndarray, b: np.ndarray) -> bool:
    return a.shape == b.shape and bool(np.all(a.view(np.int64) == b.view(np.int64)))


def odd_labels_game() -> SpecGame:
    """Labels JSON cannot tell apart on its own: 1 vs "1" vs 1.0 vs True, tuples, inf, None."""
    nested = ("a", (2, 2.5, None))
    return SpecGame(
        D(
            0, "ints",
            (1, D(1, "bools", (True, T(1, -1)), (False, T(0, 0)), (None, T(-1, 1)))),
            ("1", D(1, "floats", (1.5, T(2, -2)), (float("inf"), T(0, 0)), (-0.25, T(-2, 2)))),
            (nested, D(1, "tuples", ((), T(1, -1)), ((1, "1"), T(0, 0)), ((True,), T(3, -3)))),
            (np.int64(7), T(0, 0)),
        ),
        name="odd labels",
    )


# -- save / load --------------------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(NATIVE))
def test_round_trip_is_exact_for_native_games(name, tmp_path):
    game = NATIVE[name]
    policy = random_policy(game, seed=len(name))
    path = policy.save(tmp_path / "policy.json")
    assert path == tmp_path / "policy.json"
    loaded = load_policy(path, game)
    assert loaded.game is compile_game(game)
    assert same_bits(loaded.table, policy.table)
    assert loaded.to_dict() == policy.to_dict()


@pytest.mark.parametrize("name", ["kuhn_poker", "leduc_poker"])
def test_round_trip_is_exact_for_openspiel_games(name, tmp_path):
    pytest.importorskip("pyspiel")
    from cfrkit.openspiel import from_openspiel

    game = from_openspiel(name)
    policy = random_policy(game, seed=3)
    path = str(tmp_path / "policy.json")  # a str path works as well as a Path
    policy.save(path)
    data = json.loads(Path(path).read_text())
    labels = [label for entry in data["infosets"] for label in entry["actions"]]
    assert labels and all(type(label) is int for label in labels)
    loaded = load_policy(path, game)
    assert same_bits(loaded.table, policy.table)
    first = compile_game(game).infoset_keys[0]
    assert all(type(action) is int for action in loaded[first])


def test_file_layout(tmp_path):
    game = KuhnPoker()
    path = Policy.uniform(game).save(tmp_path / "kuhn.json")
    text = path.read_text(encoding="utf-8")
    data = json.loads(text)
    assert data["format"] == "cfrkit.policy" and data["version"] == 1
    assert data["game"] == "KuhnPoker(players=2)" and data["num_infosets"] == 12
    order = [(entry["player"], entry["key"]) for entry in data["infosets"]]
    assert order == sorted(order) and order[0] == (0, "J") and order[6] == (1, "Jb")
    # one readable line per infoset
    assert (
        '    {"key": "J", "player": 0, "actions": ["pass", "bet"], "probabilities": [0.5, 0.5]},'
        in text.splitlines()
    )
    assert len(text.splitlines()) == 12 + 8


def test_labels_keep_their_type(tmp_path):
    game = odd_labels_game()
    policy = random_policy(game, seed=11)
    path = policy.save(tmp_path / "odd.json")
    entries = {e["key"]: e["actions"] for e in json.loads(path.read_text())["infosets"]}
    assert entries["ints"] == [1, "1", {"tuple": ["a", {"tuple": [2, 2.5, None]}]}, 7]
    assert entries["bools"] == [True, False, None]
    assert [type(x) for x in entries["bools"]] == [bool, bool, type(None)]
    assert entries["floats"] == [1.5, {"float": "inf"}, -0.25]
    assert entries["tuples"] == [{"tuple": []}, {"tuple": [1, "1"]}, {"tuple": [True]}]
    loaded = load_policy(path, game)
    assert same_bits(loaded.table, policy.table)
    assert list(loaded["ints"]) == [1, "1", ("a", (2, 2.5, None)), 7]


def test_keys_and_labels_utf8_cannot_hold_round_trip(tmp_path):
    """A lone surrogate (``os.fsdecode`` makes them from undecodable bytes) has no UTF-8 form:
    such a file is written with JSON's ``\\u`` escapes; other files stay readable UTF-8."""
    game = SpecGame(D(0, "\udcff key", ("a\udcfe", D(1, "ключ", ("x", T(1, -1)), ("y", T(-1, 1)))),
                      ("b", D(1, "ключ", ("x", T(-1, 1)), ("y", T(1, -1))))))
    policy = random_policy(game, seed=3)
    path = policy.save(tmp_path / "surrogate.json")
    assert "\\udcff key" in path.read_text(encoding="ascii")
    loaded = load_policy(path, game)
    assert same_bits(loaded.table, policy.table) and list(loaded["\udcff key"]) == ["a\udcfe", "b"]
    plain = SpecGame(D(0, "ключ", ("a", T(1, -1)), ("b", T(-1, 1))))
    assert '"ключ"' in Policy.uniform(plain).save(tmp_path / "plain.json").read_text("utf-8")


def test_equal_action_tuples_of_other_types_keep_their_own_labels(tmp_path):
    # (1, 2), (True, 2) and (1.0, 2) are equal tuples; saving and loading remember each
    # infoset's labels per distinct tuple, and must not hand one infoset another's
    game = SpecGame(D(0, "root", *[
        (name, D(1, name, (first, T(1, -1)), (2, T(0, 0))))
        for name, first in [("int", 1), ("bool", True), ("float", 1.0), ("tuple", (1,)),
                            ("bool tuple", (True,)), ("zero", 0.0), ("negative zero", -0.0),
                            ("negative zero tuple", (-0.0,))]
    ]))
    policy = random_policy(game, seed=5)
    path = policy.save(tmp_path / "equal.json")
    data = json.loads(path.read_text())
    entries = {e["key"]: e["actions"] for e in data["infosets"]}
    assert entries["int"] == [1, 2] and type(entries["int"][0]) is int
    assert entries["bool"] == [True, 2] and type(entries["bool"][0]) is bool
    assert entries["float"] == [1.0, 2] and type(entries["float"][0]) is float
    assert entries["tuple"] == [{"tuple": [1]}, 2]
    assert entries["bool tuple"] == [{"tuple": [True]}, 2]
    # 0.0 == -0.0, but a file writes them apart
    assert math.copysign(1, entries["zero"][0]) == 1
    assert math.copysign(1, entries["negative zero"][0]) == -1
    assert math.copysign(1, entries["negative zero tuple"][0]["tuple"][0]) == -1
    assert same_bits(load_policy(path, game).table, policy.table)
    for entry in data["infosets"]:  # the int labels in the bool infoset's row: not its actions
        if entry["key"] == "bool":
            entry["actions"] = [1, 2]
    path.write_text(json.dumps(data))
    with pytest.raises(ValueError, match="infoset 'bool': unknown action 1 "):
        load_policy(path, game)
    for entry in data["infosets"]:  # nor -0.0 in the row of the infoset whose label is 0.0
        if entry["key"] == "bool":
            entry["actions"] = [True, 2]
        if entry["key"] == "zero":
            entry["actions"] = [-0.0, 2]
    path.write_text(json.dumps(data))
    with pytest.raises(ValueError, match="infoset 'zero': unknown action -0.0 "):
        load_policy(path, game)


@pytest.mark.parametrize(
    "key, index, written, shown",
    [
        ("ints", 0, True, "unknown action True"),  # True == 1 in Python, not in a policy file
        ("ints", 0, 1.0, "unknown action 1.0"),
        ("ints", 1, 1, "listed twice"),  # now two entries name the int 1
        ("tuples", 2, {"tuple": [1]}, "unknown action (1,)"),
        ("floats", 1, {"float": "nan"}, "is not an action label"),
        ("floats", 1, {"list": [1]}, "is not an action label"),
    ],
)
def test_labels_are_matched_with_their_type(tmp_path, key, index, written, shown):
    game = odd_labels_game()
    path = Policy.uniform(game).save(tmp_path / "odd.json")
    data = json.loads(path.read_text())
    entry = next(e for e in data["infosets"] if e["key"] == key)
    entry["actions"][index] = written
    path.write_text(json.dumps(data))
    with pytest.raises(ValueError) as info:
        load_policy(path, game)
    message = str(info.value)
    assert message.startswith(f"{path}: infoset {key!r}: ") and shown in message


@pytest.mark.parametrize(
    "label, shown",
    [
        (frozenset({1}), "action frozenset({1}) cannot be saved"),
        (("ok", object), "cannot be saved"),
    ],
)
def test_save_rejects_labels_it_cannot_write(tmp_path, label, shown):
    game = SpecGame(D(0, "root", ("fine", T(0, 0)), ("other", T(1, -1))))
    game = dataclasses.replace(compile_game(game), infoset_actions=(("fine", label),))
    target = tmp_path / "policy.json"
    target.write_text("old contents")
    with pytest.raises(ValueError) as info:
        Policy.uniform(game).save(target)
    assert str(info.value).startswith("infoset 'root': ") and shown in str(info.value)
    assert target.read_text() == "old contents"
    assert os.listdir(tmp_path) == ["policy.json"]  # no temporary file left behind


def test_non_finite_probabilities_never_reach_a_file(tmp_path):
    table = np.full(compile_game(KuhnPoker()).tree.num_action_slots, 0.5)
    table[0] = np.nan
    with pytest.raises(ValueError, match=r"row 'J', action 'pass' has probability nan"):
        Policy(KuhnPoker(), table).save(tmp_path / "policy.json")  # refused when built
    assert os.listdir(tmp_path) == []


def test_save_is_atomic(tmp_path, monkeypatch):
    game = KuhnPoker()
    target = tmp_path / "policy.json"
    Policy.uniform(game).save(target)
    before = target.read_bytes()

    def broken_replace(src, dst):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", broken_replace)
    with pytest.raises(OSError, match="No space left"):
        random_policy(game, 1).save(target)
    assert target.read_bytes() == before
    assert os.listdir(tmp_path) == ["policy.json"]
    monkeypatch.undo()
    second = random_policy(game, 1)
    second.save(target)  # replaces the existing file
    assert same_bits(load_policy(target, game).table, second.table)
    assert os.listdir(tmp_path) == ["policy.json"]


def test_save_into_a_missing_directory_names_the_file(tmp_path):
    target = tmp_path / "nowhere" / "policy.json"
    with pytest.raises(FileNotFoundError, match="policy.json"):
        Policy.uniform(KuhnPoker()).save(target)


def _edit(data: dict, change: str) -> object:
    entries = data["infosets"]
    if change == "format":
        data["format"] = "something.else"
    elif change == "version":
        data["version"] = 2
    elif change == "unknown key":
        entries[0]["key"] = "Z"
    elif change == "missing infoset":
        del entries[-1]
        data["num_infosets"] -= 1
    elif change == "unknown action":
        entries[0]["actions"][1] = "raise"
    elif change == "sum":
        entries[0]["probabilities"] = [0.5, 0.4]
    elif change == "negative":
        entries[0]["probabilities"] = [1.5, -0.5]
    elif change == "count":
        data["num_infosets"] = 13
    elif change == "twice":
        entries[1] = dict(entries[0])
    elif change == "player":
        entries[0]["player"] = 1
    elif change == "text probability":
        entries[0]["probabilities"] = ["0.5", "0.5"]
    elif change == "huge probability":
        entries[0]["probabilities"] = [10**400, 0]
    elif change == "lengths":
        entries[0]["probabilities"] = [1.0]
    elif change == "no key":
        del entries[0]["key"]
    elif change == "no infosets":
        del data["infosets"]
    elif change == "a list":
        return [data]
    return data


@pytest.mark.parametrize(
    "change, reason",
    [
        ("format", "not a cfrkit policy file (format 'something.else'"),
        ("version", "unsupported policy file version 2"),
        ("unknown key", "unknown infoset key 'Z' for KuhnPoker(players=2)"),
        ("missing infoset", "policy has no row for infoset(s) 'Qp'"),
        ("unknown action", "infoset 'J': unknown action 'raise'"),
        ("sum", "infoset 'J': probabilities sum to 0.9"),
        ("negative", "infoset 'J', action 'bet': probability -0.5 is invalid"),
        ("count", '"num_infosets" is 13 but 12 infosets are listed'),
        ("twice", "infoset 'J' is listed twice"),
        ("player", "infoset 'J' is player 0's, the file says 1"),
        ("text probability", "infoset 'J': probability '0.5' is not a number"),
        ("huge probability", "infoset 'J', action 'pass': probability 1000"),
        ("lengths", "infoset 'J': actions and probabilities must be lists of one length"),
        ("no key", "infoset #0 is not an object with key, player, actions, probabilities"),
        ("no infosets", '"infosets" must be a list'),
        ("a list", "not a cfrkit policy file (format 'list'"),
    ],
)
def test_load_rejects_bad_files(tmp_path, change, reason):
    game = KuhnPoker()
    path = Policy.uniform(game).save(tmp_path / "kuhn.json")
    path.write_text(json.dumps(_edit(json.loads(path.read_text()), change)))
    with pytest.raises(ValueError) as info:
        load_policy(path, game)
    message = str(info.value)
    assert message.startswith(f"{path}: ") and reason in message and "\n" not in message


def test_load_reports_missing_and_non_json_files(tmp_path):
    game = KuhnPoker()
    with pytest.raises(ValueError) as info:
        load_policy(tmp_path / "absent.json", game)
    assert str(info.value) == f"{tmp_path / 'absent.json'}: no such file"
    assert isinstance(info.value.__cause__, FileNotFoundError)

    broken = tmp_path / "broken.json"
    broken.write_text('{"format": "cfrkit.policy",\n  "version": 1,,}')
    with pytest.raises(ValueError) as info:
        load_policy(str(broken), game)
    assert str(info.value).startswith(f"{broken}: not JSON (") and "line 2" in str(info.value)
    assert isinstance(info.value.__cause__, json.JSONDecodeError)

    nested = tmp_path / "nested.json"  # json.loads raises RecursionError, not a JSONDecodeError
    nested.write_text("[" * 100_000 + "]" * 100_000)
    with pytest.raises(ValueError, match="nested too deeply"):
        load_policy(nested, game)

    binary = tmp_path / "binary.json"
    binary.write_bytes(b"\xff\xfe\x00")
    with pytest.raises(ValueError, match="not JSON"):
        load_policy(binary, game)

    with pytest.raises(ValueError, match="cannot read"):
        load_policy(tmp_path, game)  # a directory


def test_load_chains_the_row_error_and_names_the_other_game(tmp_path):
    path = Policy.uniform(KuhnPoker()).save(tmp_path / "kuhn.json")
    with pytest.raises(ValueError) as info:
        load_policy(path, RockPaperScissors())
    message = str(info.value)
    assert "unknown infoset key" in message
    assert message.endswith(
        "(file is for KuhnPoker(players=2), not RockPaperScissors(name='rock_paper_scissors'))"
    )
    assert isinstance(info.value.__cause__, ValueError)


# -- to_dict through JSON ------------------------------------------------------------------------


def test_to_dict_survives_json_with_integer_actions():
    pytest.importorskip("pyspiel")
    from cfrkit.openspiel import from_openspiel

    game = from_openspiel("leduc_poker")
    policy = random_policy(game, seed=5)
    through_json = json.loads(json.dumps(policy.to_dict()))
    assert all(isinstance(a, str) for row in through_json.values() for a in row)
    assert same_bits(Policy.from_dict(game, through_json).table, policy.table)


def test_to_dict_survives_json_with_bool_none_and_float_actions():
    game = SpecGame(
        D(0, "a", (True, T(1, -1)), (None, T(0, 0)), (0.5, T(-1, 1)), ("x", T(0, 0)))
    )
    policy = Policy.from_dict(game, {"a": [0.125, 0.25, 0.5, 0.125]})
    through_json = json.loads(json.dumps(policy.to_dict()))
    assert set(through_json["a"]) == {"true", "null", "0.5", "x"}
    assert same_bits(Policy.from_dict(game, through_json).table, policy.table)
    # str() spellings are accepted too
    assert Policy.from_dict(game, {"a": {"True": 0.5, "None": 0.5}})["a"][True] == 0.5


def test_text_actions_must_name_exactly_one_action():
    class Label:
        def __init__(self, text):
            self.text = text

        def __str__(self):
            return self.text

    one, other = Label("1"), Label("1")
    game = SpecGame(D(0, "a", (1, T(1, -1)), (2, T(0, 0)), (one, T(0, 0)), (other, T(0, 0))))
    assert Policy.from_dict(game, {"a": {"2": 1.0}})["a"][2] == 1.0
    with pytest.raises(ValueError, match=r"infoset 'a': action '1' could be any of 1, "):
        Policy.from_dict(game, {"a": {"1": 1.0}})
    with pytest.raises(ValueError, match="infoset 'a': unknown action '3'"):
        Policy.from_dict(game, {"a": {"3": 1.0}})
    game = SpecGame(D(0, "a", (1, T(1, -1)), (2, T(0, 0))))
    with pytest.raises(ValueError, match=r"infoset 'a': action 1 is given twice \(as '1'\)"):
        Policy.from_dict(game, {"a": {1: 0.5, "1": 0.5}})


# -- the table view ------------------------------------------------------------------------------


def test_format_table_of_uniform_rps():
    policy = Policy.uniform(RockPaperScissors())
    expected = (
        "P0  player 0  rock: 0.333  paper: 0.333  scissors: 0.333\n"
        "P1  player 1  rock: 0.333  paper: 0.333  scissors: 0.333"
    )
    assert policy.format_table() == expected
    assert str(policy) == expected
    first = policy.format_table(digits=1).splitlines()[0]
    assert first == "P0  player 0  rock: 0.3  paper: 0.3  scissors: 0.3"
    first = policy.format_table(digits=0).splitlines()[0]  # 0 digits is a choice, not an error
    assert first == "P0  player 0  rock: 0  paper: 0  scissors: 0"
    assert repr(policy) == "Policy(RockPaperScissors(name='rock_paper_scissors'), infosets=2)"


def test_format_table_keeps_each_infoset_on_one_line():
    # a newline in a key or label made two lines of one infoset
    game = SpecGame(D(0, "line\nbreak", ("a\tb", T(1, -1)), ("é", T(0, 0))))
    table = Policy.uniform(game).format_table(digits=1)
    assert table == "line\\nbreak  player 0  a\\tb: 0.5  é: 0.5"


def test_format_table_orders_by_player_then_key():
    policy = random_policy(KuhnPoker(players=3), seed=2)
    lines = policy.format_table().splitlines()
    assert len(lines) == len(policy)
    shown = [(int(line.split()[2]), line.split()[0]) for line in lines]
    assert shown == sorted((policy.game.infosets[k].player, k) for k in policy)
    assert shown[0] == (0, "A") and shown[-1] == (2, "Qpp")  # cards J < Q < K < A
    first = lines[0].split()
    row = policy["A"]
    assert first[3:] == ["pass:", f"{row['pass']:.3f}", "bet:", f"{row['bet']:.3f}"]


def test_format_table_aligns_leduc_actions_by_label():
    lines = Policy.uniform(LeducPoker()).format_table(digits=2).splitlines()
    assert len(lines) == 936
    assert lines[0] == "Jh:             player 0              call: 0.50  raise: 0.50"
    assert "Jh:cc|Js:cr     player 0  fold: 0.33  call: 0.33  raise: 0.33" in lines
    assert "Jh:cc|Js:rr     player 0  fold: 0.50  call: 0.50" in lines
    assert {line.index("call:") for line in lines} == {lines[0].index("call:")}


def test_format_table_aligns_by_position_when_labels_differ():
    game = SpecGame(
        D(0, "first", ("x", D(1, "second", ("long", T(1, -1)), ("z", T(0, 0)), ("w", T(0, 0)))),
          ("yy", T(0, 0)))
    )
    policy = Policy.from_dict(game, {"first": [0.25, 0.75], "second": [1.0, 0.0, 0.0]})
    assert policy.format_table(digits=2) == (
        "first   player 0  x: 0.25     yy: 0.75\n"
        "second  player 1  long: 1.00  z: 0.00   w: 0.00"
    )
    for digits in (-1, 21, 2**70, 2.0, True):  # 2**70 leaked Python's format error
        with pytest.raises(ValueError, match=r"digits must be an integer in \[0, 20\]"):
            policy.format_table(digits=digits)
    assert policy.format_table(digits=20).count("0.25000000000000000000") == 1


def test_format_table_keeps_each_rows_order_when_its_labels_are_another_rows_in_another_order():
    # b's labels (z, x) are all a's, but in another order: b is shown in its own order
    game = SpecGame(D(0, "a", ("x", D(1, "b", ("z", T(1, -1)), ("x", T(0, 0)))), ("y", T(0, 0)),
                      ("z", T(0, 0))))
    assert Policy.uniform(game).format_table(digits=2) == (
        "a  player 0  x: 0.33  y: 0.33  z: 0.33\n"
        "b  player 1  z: 0.50  x: 0.50"
    )


# -- best responses as policies ------------------------------------------------------------------


def test_best_response_is_still_a_two_tuple():
    game = RockPaperScissors()
    policy = Policy.from_dict(game, {"P0": [0.5, 0.25, 0.25], "P1": [1 / 3, 1 / 3, 1 / 3]})
    response = best_response(game, policy, 1)
    value, pure = response
    assert (value, pure) == (0.25, {"P1": "paper"})
    assert response == (0.25, {"P1": "paper"}) and response[0] == response.value == 0.25
    assert len(response) == 2 and isinstance(response, tuple) and response[1] is response.policy
    assert repr(response) == "BestResponse(value=0.25, policy={'P1': 'paper'})"
    assert BestResponse(0.25, {"P1": "paper"}) == response
    with pytest.raises(ValueError, match="made by cfrkit.best_response"):
        BestResponse(0.25, {"P1": "paper"}).as_policy()
    with pytest.raises(ValueError, match="made by cfrkit.best_response"):
        response._replace(value=0.0).as_policy()


@pytest.mark.parametrize("name", sorted(NATIVE))
def test_best_response_as_policy(name):
    game = NATIVE[name]
    compiled = compile_game(game)
    tree = compiled.tree
    for seed in range(3):
        policy = random_policy(game, seed)
        for player in range(compiled.num_players):
            response = best_response(game, policy, player)
            profile = response.as_policy()
            assert isinstance(profile, Policy) and profile.game is compiled
            assert expected_values(game, profile)[player] == pytest.approx(
                response.value, abs=1e-12, rel=1e-12
            )
            for key in compiled.infoset_keys:
                row = profile[key]
                if compiled.infosets[key].player == player:
                    assert dict(row) == {a: float(a == response.policy[key]) for a in row}
                else:
                    before = np.array(list(policy[key].values()))
                    assert same_bits(np.array(list(row.values())), before)
            others = tree.slot_infoset >= 0
            others &= tree.infoset_player[tree.slot_infoset] != player
            assert same_bits(profile.table[others], policy.table[others])


def test_best_response_as_policy_beats_the_policy_in_leduc():
    game = LeducPoker()
    policy = cfrkit.CFRPlus(game).iterate(5).average_policy()
    values = expected_values(game, policy)
    for player in (0, 1):
        response = best_response(game, policy, player)
        gain = expected_values(game, response.as_policy())[player] - values[player]
        assert gain > 0.01  # five iterations are far from equilibrium
        assert gain == pytest.approx(cfrkit.evaluate(game, policy).player_improvements[player])
