"""Compiled games on disk: CompiledGame.save / load_compiled, and compile_game(cache_dir=)."""

from __future__ import annotations

import dataclasses
import enum
import gc
import json
import math
import os
import re
import sys
import warnings
import zipfile
from collections import namedtuple

import numba
import numpy as np
import pytest
from conftest import GAMES, RANDOM_GAMES
from hypothesis import HealthCheck, given, settings
from random_games import random_games
from spec_game import C, D, SpecGame, T

import cfrkit
from cfrkit import GameError, compile_game, load_compiled
from cfrkit.games import KuhnPoker, LeducPoker, MatrixGame, RockPaperScissors
from cfrkit.tree import GameTree, store
from cfrkit.tree.layout import TREE_SCHEMA, fingerprint
from cfrkit.tree.store import StoredGame


def assert_same_compiled(loaded, original):
    """Every array, name, label (value, type and repr), flag and the fingerprint agree."""
    assert loaded.tree.num_players == original.tree.num_players
    assert loaded.tree.num_action_slots == original.tree.num_action_slots
    for field in GameTree._fields[2:]:
        a, b = getattr(loaded.tree, field), getattr(original.tree, field)
        assert a.dtype == b.dtype and a.shape == b.shape, field
        assert np.array_equal(a, b), field
        assert not a.flags.writeable and a.flags.c_contiguous and a.flags.aligned, field
        # the kernels see the same numba types: no second compilation for a loaded game
        assert numba.typeof(a) == numba.typeof(b), field
    assert loaded.infoset_keys == original.infoset_keys
    assert [[(type(x), repr(x)) for x in row] for row in loaded.infoset_actions] == [
        [(type(x), repr(x)) for x in row] for row in original.infoset_actions
    ]
    assert dict(loaded.key_index) == dict(original.key_index)
    assert repr(dict(loaded.infosets)) == repr(dict(original.infosets))  # nan != nan
    assert loaded.zero_sum == original.zero_sum
    assert loaded.fingerprint == original.fingerprint


def test_the_file_schema_covers_every_field_of_the_tree():
    # a new GameTree array needs its dtype and shape in TREE_SCHEMA (and a VERSION bump)
    assert set(TREE_SCHEMA) | set(store._SCALARS) == set(GameTree._fields)
    compiled = compile_game(KuhnPoker())
    for field, (dtype, _) in TREE_SCHEMA.items():
        assert getattr(compiled.tree, field).dtype == dtype, field


# -- round trips ----------------------------------------------------------------------------------

ROUND_TRIP = {
    **GAMES,
    "leduc": LeducPoker(),
    "kuhn_raises": KuhnPoker(max_bets=3, deal="independent"),
    **RANDOM_GAMES,
}


@pytest.mark.parametrize("name", list(ROUND_TRIP))
def test_round_trip_keeps_every_array_name_and_label(name, tmp_path):
    original = compile_game(ROUND_TRIP[name])
    path = original.save(tmp_path / "game.npz")
    assert path == tmp_path / "game.npz"
    loaded = load_compiled(path)
    assert_same_compiled(loaded, original)
    assert isinstance(loaded.game, StoredGame)
    assert loaded.game.num_players == original.num_players
    assert loaded.game.identity == getattr(original.game, "identity", None)
    assert repr(original.game) in repr(loaded.game) and str(path) in repr(loaded.game)
    assert compile_game(loaded.game) is loaded
    assert os.listdir(tmp_path) == ["game.npz"]  # no temporary file left behind


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(game=random_games(max_nodes=150))
def test_random_games_round_trip(game, tmp_path):
    original = compile_game(game)
    original.save(tmp_path / "random.npz")
    assert_same_compiled(load_compiled(tmp_path / "random.npz"), original)


def test_a_compressed_file_loads_the_same(tmp_path):
    original = compile_game(LeducPoker())
    original.save(tmp_path / "plain.npz")
    original.save(tmp_path / "small.npz", compress=True)
    assert (tmp_path / "small.npz").stat().st_size < (tmp_path / "plain.npz").stat().st_size / 4
    assert_same_compiled(load_compiled(tmp_path / "small.npz"), original)
    with pytest.raises(ValueError, match="compress must be True or False"):
        original.save(tmp_path / "x.npz", compress="yes")


def test_a_loaded_game_has_no_rules_to_walk(tmp_path):
    compile_game(KuhnPoker()).save(tmp_path / "kuhn.npz")
    loaded = load_compiled(tmp_path / "kuhn.npz")
    with pytest.raises(GameError, match="loaded from the compiled file .*kuhn.npz"):
        loaded.game.root()


def test_the_file_holds_no_pickle_and_documents_itself(tmp_path):
    compiled = compile_game(KuhnPoker(players=3))
    compiled.save(tmp_path / "k.npz")
    with np.load(tmp_path / "k.npz", allow_pickle=False) as data:
        assert all(data[name].dtype != object for name in data.files)
        metadata = json.loads(data["metadata"].tobytes())
    assert metadata["format"] == "cfrkit.compiled_game" and metadata["version"] == store.VERSION
    assert metadata["cfrkit_version"] == cfrkit.__version__
    assert metadata["fingerprint"] == compiled.fingerprint
    assert metadata["num_players"] == 3 and metadata["zero_sum"] is True
    assert metadata["game"]["identity"] == (
        "cfrkit.games.kuhn.KuhnPoker(players=3, max_bets=1, deal='deck')"
    )
    assert metadata["infoset_keys"] == list(compiled.infoset_keys)
    assert metadata["action_sets"] == [["pass", "bet"]]  # 48 infosets, one action tuple


# -- labels ---------------------------------------------------------------------------------------


def _labels_game(labels_per_infoset):
    """Player 0 picks at infoset k{i} among the labels of row i (one row after another)."""
    def node(i):
        if i == len(labels_per_infoset):
            return T(1.0, -1.0)
        row = labels_per_infoset[i]
        return D(0, f"k{i}", *[(label, node(i + 1) if j == 0 else T(float(j), -float(j)))
                                for j, label in enumerate(row)])
    return SpecGame(C(("deal", 1.0, node(0))))


EXOTIC = [
    ("a", "b"),
    (1, 2),
    (True, 2),  # equal to (1, 2) but not the same labels
    (1.0, 2),
    (0.0, "x"),
    (-0.0, "x"),
    (2**100, -(2**70), 0),
    (float("inf"), float("-inf"), 1e-300),  # a NaN label is refused by compile_game
    (None, False),
    ((1, ("x", 2.5)), ()),
    (b"\x00\xff", "bytes"),
    (np.int64(3), np.uint8(250), np.int32(-1)),
    (np.float32(0.1), np.float16(2.5), np.float64(0.2)),
    (np.bool_(True), np.str_("s")),
    ("é\u2603", "\ud800"),  # non-ASCII and a lone surrogate
]


def test_labels_of_every_supported_type_load_as_themselves(tmp_path):
    original = compile_game(_labels_game(EXOTIC))
    original.save(tmp_path / "labels.npz")
    loaded = load_compiled(tmp_path / "labels.npz")
    assert_same_compiled(loaded, original)
    assert type(loaded.infoset_actions[2][0]) is bool
    assert math.copysign(1.0, loaded.infoset_actions[5][0]) == -1.0
    assert type(loaded.infoset_actions[11][1]) is np.uint8
    assert loaded.infoset_actions[12][0] == np.float32(0.1)


class Suit(enum.Enum):
    HEARTS = 1


class Card(str):
    pass


Pair = namedtuple("Pair", "a b")


@pytest.mark.parametrize(
    "label, kind",
    [
        (Suit.HEARTS, "Suit"),
        (Pair(1, 2), "Pair"),
        (Card("K"), "Card"),
        (frozenset({1}), "frozenset"),
        ((1, Suit.HEARTS), "Suit"),
        (np.longdouble(1.5), "float128"),
    ],
)
def test_labels_that_would_not_load_as_themselves_are_refused(label, kind, tmp_path):
    compiled = compile_game(_labels_game([("ok", "fine"), ("x", label)]))
    with pytest.raises(ValueError, match=rf"action .* of infoset 'k1'.*{kind}"):
        compiled.save(tmp_path / "bad.npz")
    assert not (tmp_path / "bad.npz").exists()


def test_a_key_of_a_str_subclass_loads_back_as_itself(tmp_path):
    # compiled as the plain str it holds (it used to stay a Card, which saving refused)
    compiled = compile_game(SpecGame(D(0, Card("K"), ("a", T(1, -1)), ("b", T(0, 0)))))
    assert type(compiled.infoset_keys[0]) is str
    loaded = load_compiled(compiled.save(tmp_path / "k.npz"))
    assert loaded.infoset_keys == compiled.infoset_keys == ("K",)
    assert loaded.fingerprint == compiled.fingerprint


# -- damaged files --------------------------------------------------------------------------------


@pytest.fixture
def saved(tmp_path):
    compiled = compile_game(KuhnPoker(players=3))
    return compiled, compiled.save(tmp_path / "k.npz")


def _rewrite(path, change):
    """Write the file again with ``change(members)`` applied (a consistent zip: no CRC error)."""
    with np.load(path, allow_pickle=False) as data:
        members = {name: data[name] for name in data.files}
    change(members)
    with open(path, "wb") as stream:
        np.savez(stream, **members)


def _metadata(members):
    return json.loads(members["metadata"].tobytes())


def _set_metadata(members, metadata):
    members["metadata"] = np.frombuffer(json.dumps(metadata).encode(), dtype=np.uint8)


def test_a_flipped_byte_in_an_array_is_caught(saved):
    _, path = saved
    raw = bytearray(path.read_bytes())
    with zipfile.ZipFile(path) as archive:
        info = archive.getinfo("tree/utility.npy")
    raw[info.header_offset + 30 + len(info.filename) + info.file_size - 5] ^= 0x40
    path.write_bytes(bytes(raw))
    with pytest.raises(ValueError, match=r"k\.npz: truncated or damaged .*CRC"):
        load_compiled(path)


def test_an_edited_array_fails_the_fingerprint(saved):
    _, path = saved

    def change(members):
        utility = members["tree/utility"].copy()
        utility[0, np.flatnonzero(utility[0])[0]] += 1.0
        utility[1, np.flatnonzero(utility[0])[0]] -= 1.0  # still zero-sum
        members["tree/utility"] = utility

    _rewrite(path, change)
    with pytest.raises(ValueError, match="does not match its fingerprint"):
        load_compiled(path)


def test_an_edited_label_fails_the_fingerprint(saved):
    _, path = saved

    def change(members):
        metadata = _metadata(members)
        metadata["action_sets"] = [["pass", "raise"]]
        _set_metadata(members, metadata)

    _rewrite(path, change)
    with pytest.raises(ValueError, match="does not match its fingerprint"):
        load_compiled(path)


@pytest.mark.parametrize("labels, message", [
    ([1, True], "its action labels repeat"),  # one label to Python: a row lost its mass
    (["pass", "pass"], "its action labels repeat"),
    ([0.0, -0.0], "its action labels repeat"),
    ([{"float": "nan"}, 1], "is NaN"),
    ([{"numpy": ["|b1", [1, 2]]}, 1], "bad action labels"),  # decoded to an array
])
def test_labels_compile_game_refuses_are_refused_in_a_file_too(saved, labels, message):
    # with the fingerprint recomputed: only the loader's own checks stand in the way
    compiled, path = saved

    def forge(members):
        metadata = _metadata(members)
        metadata["action_sets"] = [labels]
        try:
            decoded = tuple(store._decode_label(v) for v in labels)
        except ValueError:
            decoded = compiled.infoset_actions[0]
        metadata["fingerprint"] = fingerprint(compiled.tree, compiled.infoset_keys,
                                              (decoded,) * compiled.num_infosets)
        _set_metadata(members, metadata)

    _rewrite(path, forge)
    with pytest.raises(cfrkit.CompiledFileError, match=re.escape(message)):
        load_compiled(path)
    with pytest.raises(ValueError, match="CompiledGame: infoset 'J': its action labels repeat"):
        dataclasses.replace(compiled, infoset_actions=((1, True),) * compiled.num_infosets)
    with pytest.raises(ValueError, match="CompiledGame: infoset 'J': the action label nan is"):
        dataclasses.replace(compiled, infoset_actions=((1, math.nan),) * compiled.num_infosets)


def test_an_edited_zero_sum_flag_is_caught(saved):
    _, path = saved

    def change(members):
        metadata = _metadata(members)
        metadata["zero_sum"] = False
        _set_metadata(members, metadata)

    _rewrite(path, change)
    with pytest.raises(ValueError, match="zero-sum flag"):
        load_compiled(path)


def test_an_index_out_of_range_is_refused_before_any_kernel_sees_it(saved):
    _, path = saved

    def change(members):
        first = members["tree/node_first_child"].copy()
        first[0] = 10**6
        members["tree/node_first_child"] = first

    _rewrite(path, change)
    with pytest.raises(ValueError, match="'node_first_child' holds values outside"):
        load_compiled(path)


def _forge(saved, field=None, change=None, keys=None):
    """Rewrite the file with one array (or the keys) changed and the fingerprint recomputed,
    so that only the loader's consistency checks stand between it and a kernel."""
    compiled, path = saved
    tree, infoset_keys = compiled.tree, compiled.infoset_keys

    def forge(members):
        nonlocal tree, infoset_keys
        metadata = _metadata(members)
        if field is not None:
            array = members[f"tree/{field}"].copy()
            change(array)
            members[f"tree/{field}"] = array
            tree = tree._replace(**{field: array})
        if keys is not None:
            infoset_keys = tuple(keys(list(infoset_keys)))
            metadata["infoset_keys"] = list(infoset_keys)
        metadata["fingerprint"] = fingerprint(tree, infoset_keys, compiled.infoset_actions)
        _set_metadata(members, metadata)

    _rewrite(path, forge)
    return path


def _at(index, value):
    return lambda array: array.__setitem__(index, value)


def _last_internal(array):
    return int(np.flatnonzero(array >= 0)[-1])


@pytest.mark.parametrize(
    "field, change, message",
    [
        # one past the end, and one below the start, of what each index may reach
        ("infoset_nodes", lambda a: a.__setitem__(0, 601), "'infoset_nodes' holds values outside [0, 601)"),
        ("node_parent", lambda a: a.__setitem__(5, 601), "'node_parent' holds values outside"),
        ("node_parent", lambda a: a.__setitem__(5, -2), "'node_parent' holds values outside"),
        ("slot_infoset", lambda a: a.__setitem__(0, 48), "'slot_infoset' holds values outside [0, 48)"),
        ("edge_player", lambda a: a.__setitem__(3, -3), "'edge_player' holds values outside [-2, 3)"),
        ("chance_prob", lambda a: a.__setitem__(0, 1.5), "'chance_prob' holds values outside [0, 1]"),
        # offsets must start at 0: else infoset 0, or its first history, belongs to nobody
        ("player_infoset_start", lambda a: a.__setitem__(0, 1), "grouped by player"),
        ("infoset_node_start", lambda a: a.__setitem__(0, 1), "'infoset_node_start' does not count"),
        # every index in range, but not a tree compile_game could make: a sampled pass would
        # go round the cycle (writing past its stack), a pruning walk round the infoset loop
        ("node_first_child", lambda a: a.__setitem__(_last_internal(a), 1), "not a tree numbered breadth first"),
        ("infoset_parent_slot", _at(0, 0), "perfect recall fails"),
        ("node_parent", _at(-1, 0), "'node_parent' does not match"),
        ("node_kind", _at(0, 0), "a terminal node has children"),
        ("node_player", _at(0, 1), "does not match its kind"),
        ("node_infoset", lambda a: a.__setitem__(int(np.flatnonzero(a >= 0)[0]), 1), "differs from its infoset's"),
        ("edge_slot", lambda a: a.__setitem__(1, a[1] + 1), "edge arrays"),
        ("internal_nodes", lambda a: a.__setitem__(slice(0, 2), a[1::-1]), "'internal_nodes' does not list"),
        ("infoset_nodes", lambda a: a.__setitem__(slice(0, 2), a[1::-1]), "'infoset_nodes' does not list"),
        ("slot_infoset", lambda a: a.__setitem__(1, a[1] + 1), "'slot_infoset' does not match"),
        ("infoset_first_slot", lambda a: a.__setitem__(1, a[1] + 1), "laid out one after another"),
        ("infoset_parent", _at(4, 1), "'infoset_parent' does not match"),
        ("chance_prob", _at(0, 0.5), "do not sum to 1"),
        ("utility", lambda a: a.__setitem__((0, -1), 1e250), "beyond +-1e+200"),
        ("utility", _at((0, 0), 1.0), "chance or decision node has a utility"),
    ],
)
def test_a_forged_file_is_refused(saved, field, change, message):
    assert saved[0].num_nodes == 601 and saved[0].num_infosets == 48  # three-player Kuhn
    with pytest.raises(ValueError, match=re.escape(message)):
        load_compiled(_forge(saved, field, change))


def test_a_consistent_file_with_a_repeated_key_is_refused(saved):
    # with one key twice, key_index would send the second infoset's key to the first
    path = _forge(saved, keys=lambda keys: [keys[0], keys[0], *keys[2:]])
    with pytest.raises(ValueError, match="infoset keys repeat"):
        load_compiled(path)


def test_a_forged_file_that_changes_nothing_loads(saved):
    # the forging itself is sound: with no change the file still loads
    assert load_compiled(_forge(saved)).fingerprint == saved[0].fingerprint


@pytest.mark.parametrize(
    "change, message",
    [
        (lambda m: m.pop("tree/edge_last"), r"arrays missing \['tree/edge_last'\]"),
        (lambda m: m.__setitem__("tree/node_kind", m["tree/node_kind"].astype(np.int32)),
         "'node_kind' is int32, expected int8"),
        (lambda m: m.__setitem__("tree/utility", m["tree/utility"][:, :-1].copy()),
         "'utility' has shape"),
        (lambda m: m.__setitem__("extra", np.zeros(2)), r"unexpected \['extra'\]"),
    ],
)
def test_wrong_arrays_are_refused(saved, change, message):
    _, path = saved
    _rewrite(path, change)
    with pytest.raises(ValueError, match=message):
        load_compiled(path)


def test_a_truncated_file_is_refused(saved):
    _, path = saved
    path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])
    with pytest.raises(ValueError, match=r"k\.npz: (truncated or damaged|not a readable)"):
        load_compiled(path)


def test_a_damaged_file_is_closed(saved, tmp_path):
    # np.load of a path leaves the file open when the zip directory is damaged
    _, path = saved
    cfrkit.CFRPlus(KuhnPoker()).iterate(3).save(tmp_path / "t.npz")
    loads = {path: load_compiled, tmp_path / "t.npz": lambda p: cfrkit.load_trainer(p, KuhnPoker())}
    for file, load in loads.items():
        whole = file.read_bytes()
        for cut in (10, len(whole) // 2, len(whole) - 10):
            file.write_bytes(whole[:cut])
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always", ResourceWarning)
                try:
                    load(file)
                except ValueError:
                    pass
                else:
                    raise AssertionError(f"{file} cut at {cut} loaded")
                gc.collect()
            assert not [w for w in caught if issubclass(w.category, ResourceWarning)], (file, cut)


@pytest.mark.parametrize("version, shown", [(store.VERSION + 1, str(store.VERSION + 1)),
                                             (True, "True"), (1.0, "1.0")])  # True == 1
def test_another_format_version_is_refused(saved, version, shown):
    _, path = saved

    def change(members):
        metadata = _metadata(members)
        metadata["version"] = version
        _set_metadata(members, metadata)

    _rewrite(path, change)
    with pytest.raises(ValueError, match=rf"format version {shown} .*compile the game"):
        load_compiled(path)


def test_a_pickled_object_array_is_refused(saved):
    _, path = saved

    def change(members):
        members["tree/node_kind"] = np.array([object()] * len(members["tree/node_kind"]))

    _rewrite(path, change)
    with pytest.raises(ValueError, match="not a readable compiled cfrkit game.*allow_pickle"):
        load_compiled(path)


def test_files_that_are_not_compiled_games_are_refused(tmp_path):
    (tmp_path / "text.npz").write_text("hello")
    with pytest.raises(ValueError) as info:  # numpy alone would suggest unpickling it
        load_compiled(tmp_path / "text.npz")
    assert str(info.value).endswith("text.npz: not a readable compiled cfrkit game (not an .npz file)")
    np.save(tmp_path / "one.npy", np.zeros(3))
    with pytest.raises(ValueError, match="a single .npy array"):
        load_compiled(tmp_path / "one.npy")
    np.savez(tmp_path / "other.npz", metadata=np.frombuffer(b'{"format": "x"}', np.uint8))
    with pytest.raises(ValueError, match="not a compiled cfrkit game"):
        load_compiled(tmp_path / "other.npz")
    with pytest.raises(FileNotFoundError):
        load_compiled(tmp_path / "missing.npz")


def test_a_failed_write_leaves_the_old_file_and_no_temporary(saved, monkeypatch):
    compiled, path = saved
    before = path.read_bytes()

    def broken(stream, **arrays):
        stream.write(b"PK half a file")
        raise OSError("disk full")

    monkeypatch.setattr(np, "savez", broken)
    with pytest.raises(OSError, match="disk full"):
        compiled.save(path)
    assert path.read_bytes() == before
    assert os.listdir(path.parent) == [path.name]


# -- trainers, evaluation, checkpoints and policies on a loaded game --------------------------------


def _state(trainer):
    return {k: np.array(v, copy=True) for k, v in trainer._state._asdict().items()}


def test_vanilla_cfr_on_a_loaded_leduc_matches_the_original_exactly(tmp_path):
    original = compile_game(LeducPoker())
    original.save(tmp_path / "leduc.npz")
    loaded = load_compiled(tmp_path / "leduc.npz")
    a = cfrkit.VanillaCFR(original).iterate(20)
    b = cfrkit.VanillaCFR(loaded).iterate(20)
    for (name, x), y in zip(_state(a).items(), _state(b).values()):
        assert np.array_equal(x, y), name
    policy_a, policy_b = a.average_policy(), b.average_policy()
    assert cfrkit.nash_conv(loaded, policy_b) == cfrkit.nash_conv(original, policy_a)
    # a policy of the original is one of the loaded game (same fingerprint), and back
    assert cfrkit.nash_conv(loaded, policy_a) == cfrkit.nash_conv(original, policy_b)


TRAINERS = {
    "cfr_plus": lambda g: cfrkit.CFRPlus(g),
    "dcfr": lambda g: cfrkit.DiscountedCFR(g),
    "pruned": lambda g: cfrkit.PrunedCFR(g),
    "chance_sampled": lambda g: cfrkit.ChanceSampledCFR(g, seed=3),
    "external": lambda g: cfrkit.ExternalSamplingCFR(g, seed=3),
    "outcome": lambda g: cfrkit.OutcomeSamplingCFR(g, seed=3),
    "fictitious": lambda g: cfrkit.FictitiousPlay(g),
    "result_table": lambda g: cfrkit.ResultTableLearner(g, seed=3),
}


@pytest.mark.parametrize("name", list(TRAINERS))
def test_every_trainer_and_evaluation_runs_on_a_loaded_game_as_on_the_original(name, tmp_path):
    original = compile_game(KuhnPoker(players=3))
    original.save(tmp_path / "kuhn3.npz")
    loaded = load_compiled(tmp_path / "kuhn3.npz")
    a = TRAINERS[name](original).iterate(30)
    b = TRAINERS[name](loaded.game).iterate(30)  # the StoredGame works as well
    pa, pb = a.average_policy(), b.average_policy()
    assert np.array_equal(pa.table, pb.table)
    ea, eb = cfrkit.evaluate(original, pa), cfrkit.evaluate(loaded, pb)
    assert ea.nash_conv == eb.nash_conv > 0
    assert np.array_equal(ea.best_response_values, eb.best_response_values)
    assert np.array_equal(cfrkit.expected_values(loaded, pb), cfrkit.expected_values(original, pa))
    br_a, br_b = cfrkit.best_response(original, pa, 1), cfrkit.best_response(loaded, pb, 1)
    assert br_a.value == br_b.value
    assert br_a.policy == br_b.policy


def test_exploitability_on_a_loaded_two_player_game(tmp_path):
    original = compile_game(KuhnPoker())
    original.save(tmp_path / "kuhn.npz")
    loaded = load_compiled(tmp_path / "kuhn.npz")
    policy = cfrkit.CFRPlus(original).iterate(50).average_policy()
    assert cfrkit.exploitability(loaded, policy) == cfrkit.exploitability(original, policy) > 0


# -- the cache -------------------------------------------------------------------------------------


class CountingKuhn(KuhnPoker):
    """Kuhn poker counting the walks of its tree (every compilation calls root() once)."""

    walks = 0

    def root(self):
        type(self).walks += 1
        return super().root()


@pytest.fixture
def counting():
    CountingKuhn.walks = 0
    return CountingKuhn


def test_a_second_game_object_of_the_same_identity_loads_from_disk(counting, tmp_path):
    first = compile_game(counting(players=3), cache_dir=tmp_path / "cache")
    assert counting.walks == 1
    (file,) = (tmp_path / "cache").iterdir()
    assert file.name.startswith("test_store.CountingKuhn_players=3_max_bets=1_deal=_deck-")
    assert file.suffix == ".npz"

    game = counting(players=3)
    second = compile_game(game, cache_dir=tmp_path / "cache")
    assert counting.walks == 1  # not walked
    assert second.game is game  # the real game, not a StoredGame
    assert_same_compiled(second, first)
    assert compile_game(game) is second  # and remembered in memory as usual
    # another identity is another file
    compile_game(counting(players=2), cache_dir=tmp_path / "cache")
    assert counting.walks == 2 and len(list((tmp_path / "cache").iterdir())) == 2


def test_a_game_already_compiled_in_memory_is_written_to_the_cache(counting, tmp_path):
    game = counting()
    compiled = compile_game(game)
    assert compile_game(game, cache_dir=tmp_path) is compiled
    assert counting.walks == 1
    assert_same_compiled(compile_game(counting(), cache_dir=tmp_path), compiled)
    assert counting.walks == 1


class Rules(cfrkit.Game):
    """A user's game whose rules are an attribute it lets change: Kuhn poker with ``bets``."""

    num_players = 2
    name = "rules"

    def __init__(self, bets):
        self.bets = bets

    @property
    def identity(self):
        return f"test_store.Rules(bets={self.bets})"

    def root(self):
        return KuhnPoker(max_bets=self.bets).root()


def test_a_game_changed_since_it_was_compiled_files_its_new_tree(tmp_path):
    """The tree kept on the object is the old rules': with cache_dir it must be neither
    returned nor filed under the new identity (every later process would load it)."""
    game = Rules(1)
    old = compile_game(game)
    game.bets = 2
    new = compile_game(game, cache_dir=tmp_path)
    assert (old.num_nodes, new.num_nodes) == (55, 91)
    assert compile_game(game, cache_dir=tmp_path) is new  # remembered as this identity's
    assert compile_game(Rules(2), cache_dir=tmp_path).fingerprint == new.fingerprint
    assert compile_game(Rules(1), cache_dir=tmp_path).fingerprint == old.fingerprint


def test_the_game_of_a_loaded_file_takes_a_cache_dir(tmp_path):
    """Its tree is in memory under the identity it was filed with: nothing to walk (a
    StoredGame cannot be walked)."""
    path = compile_game(KuhnPoker()).save(tmp_path / "kuhn.npz")
    loaded = load_compiled(path)
    assert compile_game(loaded.game, cache_dir=tmp_path / "cache") is loaded
    assert len(list((tmp_path / "cache").iterdir())) == 1


def test_a_game_class_without_a_source_file_uses_the_cache(tmp_path, monkeypatch):
    """A class defined at the interactive prompt, in python -c or in a notebook's kernel: its
    module (``__main__``) has no file, so inspect cannot find its source."""
    import types

    monkeypatch.setitem(sys.modules, "__main__", types.ModuleType("__main__"))
    Typed = type("Typed", (KuhnPoker,), {"__module__": "__main__"})
    first = compile_game(Typed(), cache_dir=tmp_path)
    assert compile_game(Typed(), cache_dir=tmp_path).fingerprint == first.fingerprint
    assert len(list(tmp_path.iterdir())) == 1


def test_a_game_without_identity_cannot_use_the_cache(tmp_path):
    game = SpecGame(D(0, "k", ("a", T(1, -1)), ("b", T(0, 0))))
    with pytest.raises(ValueError, match="cache_dir needs a game with a stable identity.*identity"):
        compile_game(game, cache_dir=tmp_path)
    assert list(tmp_path.iterdir()) == []


def test_a_bad_identity_is_refused(tmp_path):
    class Odd(KuhnPoker):
        identity = 42

    with pytest.raises(ValueError, match="identity must be a non-empty str or None, got 42"):
        compile_game(Odd(), cache_dir=tmp_path)

    class Empty(KuhnPoker):
        identity = ""

    with pytest.raises(ValueError, match="identity must be a non-empty str or None, got ''"):
        compile_game(Empty(), cache_dir=tmp_path)

    class Broken(KuhnPoker):
        @property
        def identity(self):
            raise KeyError("version")

    with pytest.raises(GameError, match=r"\): reading identity raised KeyError: 'version'$"):
        compile_game(Broken(), cache_dir=tmp_path)
    with pytest.raises(GameError, match="reading identity raised KeyError"):
        compile_game(Broken()).save(tmp_path / "broken.npz")  # saving reads it too


@pytest.mark.parametrize("what", ["format", "cfrkit", "sources"])
def test_a_file_of_another_version_or_source_is_never_loaded(what, counting, tmp_path, monkeypatch):
    compile_game(counting(), cache_dir=tmp_path)
    if what == "format":
        monkeypatch.setattr(store, "VERSION", store.VERSION + 1)
    elif what == "cfrkit":
        monkeypatch.setattr(cfrkit, "__version__", cfrkit.__version__ + ".post1")
    else:  # an edited compiler or rules module
        sources = store._sources
        monkeypatch.setattr(store, "_sources",
                            lambda cls: {**sources(cls), "cfrkit.tree.walk": "edited"})
    compile_game(counting(), cache_dir=tmp_path)
    assert counting.walks == 2
    assert len(list(tmp_path.iterdir())) == 2


def test_the_key_covers_the_sources_of_the_compiler_and_the_game_classes(tmp_path):
    sources = store._sources(CountingKuhn)
    assert set(sources) >= {"cfrkit.tree.walk", "cfrkit.tree.layout", "cfrkit.tree.store",
                            __name__, "cfrkit.games.kuhn"}
    with open(cfrkit.games.kuhn.__file__, "rb") as stream:
        import hashlib

        assert sources["cfrkit.games.kuhn"] == hashlib.sha256(stream.read()).hexdigest()


_RELOADED_GAME = """
import cfrkit
PAYOFF = {payoff}


class Coin(cfrkit.Game):
    num_players, name = 2, "coin"
    identity = "test_store.Coin"  # the rules are in the source, which the key covers

    def root(self):
        return Flip(())


class Flip(cfrkit.History):
    def __init__(self, path):
        self.path = path

    def is_terminal(self):
        return len(self.path) == 2

    def is_chance(self):
        return not self.path

    def current_player(self):
        return 0

    def actions(self):
        return ("a", "b")

    def chance_outcomes(self):
        return (("h", 0.5), ("t", 0.5))

    def child(self, action):
        return Flip(self.path + (action,))

    def infoset_key(self):
        return self.path[0]

    def utilities(self):
        return (PAYOFF, -PAYOFF) if self.path[1] == "a" else (0.0, 0.0)
"""


def test_a_game_module_edited_and_reloaded_gets_its_new_tree(tmp_path, monkeypatch):
    """A notebook's autoreload: the edited module is loaded again in the same process."""
    import importlib

    module_file = tmp_path / "reloaded_coin.py"
    module_file.write_text(_RELOADED_GAME.format(payoff=1.0))
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "reloaded_coin", raising=False)
    module = importlib.import_module("reloaded_coin")
    before = compile_game(module.Coin(), cache_dir=tmp_path / "cache")
    module_file.write_text(_RELOADED_GAME.format(payoff=5.0))
    os.utime(module_file, (0, 10**9))  # another modification time: reload compiles it again
    module = importlib.reload(module)
    after = compile_game(module.Coin(), cache_dir=tmp_path / "cache")
    assert (before.tree.utility.max(), after.tree.utility.max()) == (1.0, 5.0)
    assert len(list((tmp_path / "cache").iterdir())) == 2


def _damage_directory(file, offset: int, value: int) -> None:
    """Set byte ``offset`` of the zip directory's first entry (numbers from the zip format):
    6 is the zip version needed, 8 the flags (bit 0: encrypted), 10 the compression method."""
    raw = bytearray(file.read_bytes())
    raw[raw.index(b"PK\x01\x02") + offset] = value
    file.write_bytes(bytes(raw))


@pytest.mark.parametrize(
    "damage", ["truncate", "garbage", "another_game", "zip_version", "encrypted", "deflated"]
)
def test_a_damaged_cache_file_warns_and_is_replaced(damage, counting, tmp_path):
    compile_game(counting(), cache_dir=tmp_path)
    (file,) = tmp_path.iterdir()
    if damage == "truncate":
        file.write_bytes(file.read_bytes()[:1000])
    elif damage == "garbage":
        file.write_bytes(b"\x00" * 100)
    elif damage == "zip_version":  # zipfile: NotImplementedError
        _damage_directory(file, 6, 0x7F)
    elif damage == "encrypted":  # zipfile: RuntimeError, a password required
        _damage_directory(file, 8, 0x01)
    elif damage == "deflated":  # a stored member read as deflated: a bad CRC (or zlib.error)
        _damage_directory(file, 10, 8)
    else:  # a valid compiled game, but not this one (e.g. a file copied by hand)
        compile_game(LeducPoker()).save(file)
    with pytest.warns(RuntimeWarning, match="cannot use the cached compiled game.*compiling again"):
        compiled = compile_game(counting(), cache_dir=tmp_path)
    assert counting.walks == 2
    assert compiled.num_infosets == 12
    # replaced: the next process loads it without a walk or a warning
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        again = compile_game(counting(), cache_dir=tmp_path)
    assert counting.walks == 2
    assert again.fingerprint == compiled.fingerprint


def test_an_unwritable_cache_warns_and_still_compiles(counting, tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    with pytest.warns(RuntimeWarning, match="could not write the compiled game"):
        compiled = compile_game(counting(), cache_dir=blocker / "cache")
    assert compiled.num_infosets == 12


def test_a_checkpoint_of_a_fresh_compile_loads_on_the_cached_game(tmp_path):
    fresh = LeducPoker()
    trainer = cfrkit.CFRPlus(fresh).iterate(7)
    trainer.save(tmp_path / "run.npz")
    trainer.average_policy().save(tmp_path / "policy.json")

    compile_game(LeducPoker(), cache_dir=tmp_path / "cache")  # writes the file
    cached_game = LeducPoker()
    cached = compile_game(cached_game, cache_dir=tmp_path / "cache")  # loads it
    assert cached.game is cached_game and cached is not compile_game(fresh)
    resumed = cfrkit.load_trainer(tmp_path / "run.npz", cached_game).iterate(5)
    straight = trainer.iterate(5)
    assert np.array_equal(resumed.average_policy().table, straight.average_policy().table)
    # a standalone load too, and the policy file
    standalone = load_compiled(next((tmp_path / "cache").iterdir()))
    assert cfrkit.load_trainer(tmp_path / "run.npz", standalone).iteration == 7
    policy = cfrkit.load_policy(tmp_path / "policy.json", standalone)
    assert cfrkit.nash_conv(standalone, policy) == cfrkit.nash_conv(fresh, policy)


def test_identities_of_the_built_in_games_name_every_parameter():
    assert KuhnPoker(players=3).identity == (
        "cfrkit.games.kuhn.KuhnPoker(players=3, max_bets=1, deal='deck')"
    )
    assert KuhnPoker(max_bets=2, deal="independent").identity == (
        "cfrkit.games.kuhn.KuhnPoker(players=2, max_bets=2, deal='independent')"
    )
    assert LeducPoker().identity == "cfrkit.games.leduc.LeducPoker()"
    rps = RockPaperScissors().identity
    assert rps.startswith("cfrkit.games.rps.RockPaperScissors(name='rock_paper_scissors'")
    a = MatrixGame("m", ("x", "y"), [[1.0, 0.0], [0.0, 1.0]])
    b = MatrixGame("m", ("x", "y"), [[1.0, 0.0], [0.0, 1.0 + 1e-15]])
    assert a.identity != b.identity  # every payoff, exactly
    assert cfrkit.Game.identity.fget(a) is None  # the default


# -- OpenSpiel --------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["kuhn_poker(players=3)", "leduc_poker()"])
def test_openspiel_games_round_trip_and_load_from_the_cache(name, tmp_path, monkeypatch):
    pytest.importorskip("pyspiel")
    from cfrkit.openspiel import OpenSpielGame, from_openspiel, to_pyspiel_policy

    original = compile_game(from_openspiel(name))
    original.save(tmp_path / "game.npz")
    assert_same_compiled(load_compiled(tmp_path / "game.npz"), original)
    assert all(type(a) is int for row in original.infoset_actions for a in row)

    from_openspiel(name, cache_dir=tmp_path / "cache")

    def no_walk(self):
        raise AssertionError("walked")

    monkeypatch.setattr(OpenSpielGame, "root", no_walk)
    game = from_openspiel(name, cache_dir=tmp_path / "cache")
    assert game.identity.startswith(f"openspiel:{name}; keys_per_player=False; open_spiel ")
    assert_same_compiled(compile_game(game), original)
    # still an OpenSpiel game: its policies convert
    policy = cfrkit.VanillaCFR(game).iterate(5).average_policy()
    assert to_pyspiel_policy(game, policy) is not None


def test_an_openspiel_game_with_per_player_keys_loads_from_the_cache(tmp_path, monkeypatch):
    pytest.importorskip("pyspiel")
    from test_openspiel_keys import _NAME

    from cfrkit.openspiel import OpenSpielGame, from_openspiel

    first = from_openspiel(_NAME, cache_dir=tmp_path)
    assert first.keys_per_player
    (file,) = tmp_path.iterdir()
    assert "keys_per_player=True" in file.name

    def no_walk(self):
        raise AssertionError("walked")

    monkeypatch.setattr(OpenSpielGame, "root", no_walk)
    second = from_openspiel(_NAME, cache_dir=tmp_path)
    assert second.keys_per_player and second.identity != OpenSpielGame(
        second.openspiel_game).identity
    assert_same_compiled(compile_game(second), compile_game(first))


def test_a_checkpoint_and_a_compiled_game_passed_to_the_other_reader_are_named(tmp_path):
    game = KuhnPoker()
    compiled = compile_game(game).save(tmp_path / "game.npz")
    checkpoint = tmp_path / "run.npz"
    cfrkit.CFRPlus(game).iterate(2).save(checkpoint)
    with pytest.raises(cfrkit.CheckpointError) as info:
        cfrkit.load_trainer(compiled, game)
    assert str(info.value) == (f"{compiled}: a compiled game (cfrkit.load_compiled reads it), "
                               "not a checkpoint")
    with pytest.raises(ValueError) as info:
        load_compiled(checkpoint)
    assert str(info.value) == (f"{checkpoint}: a trainer checkpoint (cfrkit.load_trainer reads "
                               "it), not a compiled game")


def test_a_cache_dir_under_a_file_warns_in_a_line_that_says_so(tmp_path):
    (tmp_path / "afile").write_text("x")
    for folder in (tmp_path / "afile", tmp_path / "afile" / "sub"):
        with pytest.warns(RuntimeWarning) as warned:
            assert compile_game(KuhnPoker(players=3), cache_dir=folder).num_infosets == 48
        assert f"cache_dir {folder}: {tmp_path / 'afile'} is a file, not a folder" in str(
            warned[0].message)  # not mkdir's "File exists"


# -- fingerprints that do not depend on the process ---------------------------------------------


def _labelled(*labels):
    """A game whose one infoset has these action labels."""
    return SpecGame(D(0, "k", *((label, T(float(i), -float(i))) for i, label in enumerate(labels))))


def _fingerprint_in_a_process(code: str, **env: str) -> str:
    import subprocess

    tests = os.path.dirname(__file__)
    script = (f"import sys; sys.path.insert(0, {tests!r})\nimport cfrkit, numpy as np\n"
              f"from spec_game import D, SpecGame, T\nfrom test_store import _labelled\n{code}\n"
              "print(cfrkit.compile_game(game).fingerprint)")
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                            env={**os.environ, "CFRKIT_QUIET": "1", **env}, timeout=120)
    assert result.returncode == 0, result.stderr[-2000:]
    return result.stdout.strip()


def test_a_frozenset_labels_fingerprint_is_the_same_under_any_hash_seed():
    # its repr's order follows the string hashes: checkpoints then failed to load elsewhere
    code = "game = _labelled(frozenset({'a', 'b', 'c', 'd'}), frozenset({'e'}))"
    prints = {_fingerprint_in_a_process(code, PYTHONHASHSEED=str(seed)) for seed in (1, 2, 3)}
    assert len(prints) == 1


def test_numpy_scalar_labels_fingerprint_does_not_follow_numpys_print_options():
    # NumPy 2 prints np.int64(3), NumPy 1 (or legacy="1.25") 3: files would read as damaged
    compiled = compile_game(_labelled(np.int64(3), np.float32(0.5), np.str_("x"), (np.int8(1),)))
    parts = compiled.tree, compiled.infoset_keys, compiled.infoset_actions
    with np.printoptions(legacy="1.25"):
        assert fingerprint(*parts) == compiled.fingerprint
    # and a plain label of the same value is another game
    assert compile_game(_labelled(3, 0.5, "x", (1,))).fingerprint != compiled.fingerprint


def test_labels_with_the_default_repr_fingerprint_without_their_address():
    class Token:  # equal by value, printed with its address
        def __init__(self, name):
            self.name = name

        def __eq__(self, other):
            return isinstance(other, Token) and other.name == self.name

        def __hash__(self):
            return hash(self.name)

    first = compile_game(_labelled(Token("a"), Token("b"))).fingerprint
    assert compile_game(_labelled(Token("a"), Token("b"))).fingerprint == first
