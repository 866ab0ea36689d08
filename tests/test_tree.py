"""compile_game: the flat layout, and one test per malformed-game GameError."""

import copy
import dataclasses
import gc
import math
import pickle
import weakref

import numpy as np
import pytest

import cfrkit
from cfrkit import GameError, compile_game
from cfrkit.games import KuhnPoker, RockPaperScissors
from cfrkit.game import History
from cfrkit.tree import CHANCE, DECISION, TERMINAL

from spec_game import C, D, SpecGame, T


def test_layout_is_breadth_first_with_contiguous_children():
    compiled = compile_game(KuhnPoker(players=3))
    tree = compiled.tree
    for n in tree.internal_nodes:
        first, count = tree.node_first_child[n], tree.node_num_children[n]
        assert first > n and count > 0
        assert np.all(tree.node_parent[first : first + count] == n)
    assert np.all(tree.node_num_children[tree.node_kind == TERMINAL] == 0)
    # each infoset's slots are contiguous and players' infosets come in player order
    assert np.all(np.diff(tree.infoset_player) >= 0)
    assert tree.infoset_first_slot[-1] + tree.infoset_num_actions[-1] == tree.num_action_slots
    # the previous-infoset links point backwards, to the same player
    linked = tree.infoset_parent >= 0
    assert np.all(tree.infoset_parent[linked] < np.flatnonzero(linked))
    assert np.all(tree.infoset_player[tree.infoset_parent[linked]] == tree.infoset_player[linked])


def test_kuhn_sizes():
    two = compile_game(KuhnPoker())
    # 1 deal node + 6 deals x (4 decision histories + 5 terminals) = 55 nodes, 12 infosets
    assert (two.num_nodes, two.num_infosets, two.num_terminals) == (55, 12, 30)
    assert two.zero_sum and two.tree.chance_prob.sum() == pytest.approx(1.0)
    assert compile_game(KuhnPoker(players=3)).num_infosets == 48


def test_compile_is_cached_per_game_object():
    game = KuhnPoker()
    assert compile_game(game) is compile_game(game)
    assert compile_game(KuhnPoker()) is not compile_game(game)
    assert cfrkit.VanillaCFR(game).game is compile_game(game)


def test_a_compiled_game_is_freed_with_its_game():
    # the cache must not keep every game ever compiled alive (the tree refers to its game)
    game = KuhnPoker(players=3)
    compiled = weakref.ref(compile_game(game))
    trainer = cfrkit.VanillaCFR(game)  # holds the tree, and through it the game
    assert trainer.game is compiled() and compile_game(game) is compiled()
    del game
    gc.collect()
    assert compiled() is trainer.game
    del trainer
    gc.collect()
    assert compiled() is None


class _Slotted(KuhnPoker):
    __slots__ = ("label",)


class _OwnState(KuhnPoker):
    def __getstate__(self):  # a class's own: its whole __dict__, the compiled tree included
        return dict(self.__dict__)


def test_copies_and_pickles_of_a_game_leave_its_compiled_tree_behind():
    game = KuhnPoker(players=3)
    compiled = compile_game(game)
    before = len(pickle.dumps(game))
    for other in (copy.copy(game), copy.deepcopy(game), pickle.loads(pickle.dumps(game))):
        # a copy may be changed before it is used: it compiles its own tree
        assert compile_game(other) is not compiled
        assert compile_game(other).fingerprint == compiled.fingerprint
    assert len(pickle.dumps(game)) == before < 1000  # the tree (35 kB) is not in it
    own = _OwnState(players=3)
    mine = compile_game(own)
    other = copy.copy(own)  # carries the tree in its __dict__: not taken as its own
    assert compile_game(other) is not mine and compile_game(other).game is other
    slotted = _Slotted(players=2)
    slotted.label = "kept"
    compile_game(slotted)
    assert copy.copy(slotted).label == "kept" and pickle.loads(pickle.dumps(slotted)).label == "kept"


@dataclasses.dataclass(frozen=True, eq=True)
class _FrozenChoice(cfrkit.Game):
    """A frozen dataclass: its own __setattr__ refuses every attribute."""

    payoff: float
    num_players: int = 2
    name: str = "frozen choice"

    def root(self) -> History:
        return SpecGame(D(0, "root", ("a", T(self.payoff, -self.payoff)), ("b", T(0, 0)))).root()


class _Unhashable(SpecGame):
    __hash__ = None  # type: ignore[assignment]


def test_frozen_and_unhashable_games_are_cached_too():
    frozen = _FrozenChoice(1.0)
    assert compile_game(frozen) is compile_game(frozen)
    assert compile_game(_FrozenChoice(1.0)) is not compile_game(frozen)  # per object, not per value
    unhashable = _Unhashable(D(0, "root", ("a", T(1, -1)), ("b", T(0, 0))))
    assert compile_game(unhashable) is compile_game(unhashable)


def test_tree_arrays_are_read_only():
    tree = compile_game(RockPaperScissors()).tree
    with pytest.raises(ValueError):
        tree.utility[0, 0] = 5.0


# --- a CompiledGame made from another (dataclasses.replace) -----------------------------------


def _with_utility(compiled, utility):
    return dataclasses.replace(compiled, tree=compiled.tree._replace(utility=utility))


def test_a_replaced_tree_keeps_nothing_cached_for_the_old_one(tmp_path):
    """A sampled trainer caches a layout holding a copy of the utilities, and the fingerprint
    is cached: a game made with other payoffs must not find either."""
    compiled = compile_game(KuhnPoker())
    trainer = cfrkit.ChanceSampledCFR(compiled, seed=0).iterate(5)  # fills the caches
    path = trainer.save(tmp_path / "kuhn.npz")
    # the players' payoffs swapped: a game with other equilibria (scaling them would not do:
    # regret matching is blind to scale)
    swapped = _with_utility(compiled, -compiled.tree.utility)
    fresh = _with_utility(compile_game(KuhnPoker()), -compiled.tree.utility)  # nothing cached
    assert swapped.fingerprint == fresh.fingerprint != compiled.fingerprint
    ran = cfrkit.ChanceSampledCFR(swapped, seed=0).iterate(200).average_policy().table
    expected = cfrkit.ChanceSampledCFR(fresh, seed=0).iterate(200).average_policy().table
    np.testing.assert_array_equal(ran, expected)
    with pytest.raises(cfrkit.CheckpointError, match="its tree differs"):
        cfrkit.load_trainer(path, swapped)


def test_zero_sum_follows_the_replaced_utilities(tmp_path):
    compiled = compile_game(KuhnPoker())
    assert compiled.zero_sum
    utility = compiled.tree.utility.copy()
    utility[1] = utility[0]  # both players are paid the same: a general-sum game
    shared = _with_utility(compiled, utility)
    assert not shared.zero_sum
    assert cfrkit.evaluate(shared, cfrkit.Policy.uniform(shared)).exploitability is None
    # and the file it writes loads (its zero-sum flag agrees with its utilities)
    loaded = cfrkit.load_compiled(shared.save(tmp_path / "shared.npz"))
    assert not loaded.zero_sum and loaded.fingerprint == shared.fingerprint


@pytest.mark.parametrize("utility, message", [
    (lambda u: u[:, :-1], r"array 'utility' has shape \(2, 54\), expected \(2, 55\)"),
    (lambda u: u.T, r"array 'utility' has shape \(55, 2\), expected \(2, 55\)"),
    (lambda u: u.astype(np.float32), "array 'utility' is float32, expected float64"),
    (lambda u: u.tolist(), "'utility' is a list, not a numpy array"),
])
def test_a_replaced_array_of_the_wrong_shape_or_type_is_refused(utility, message):
    """A kernel would read past its end (numba checks no bounds)."""
    compiled = compile_game(KuhnPoker())
    with pytest.raises(ValueError, match="CompiledGame: " + message):
        _with_utility(compiled, utility(compiled.tree.utility))
    with pytest.raises(ValueError, match="2 action tuples for 12 infoset keys"):
        dataclasses.replace(compiled, infoset_actions=compiled.infoset_actions[:2])
    with pytest.raises(TypeError, match="tree must be a GameTree, got dict"):
        dataclasses.replace(compiled, tree=compiled.tree._asdict())


def test_a_writable_array_given_is_copied_and_the_tree_stays_read_only():
    compiled = compile_game(KuhnPoker())
    utility = 2.0 * compiled.tree.utility
    doubled = _with_utility(compiled, utility)
    assert utility.flags.writeable and not doubled.tree.utility.flags.writeable
    utility[:] = 0.0  # the caller's array, not the game's
    np.testing.assert_array_equal(doubled.tree.utility, 2.0 * compiled.tree.utility)
    # arrays compile_game made are taken as they are
    assert doubled.tree.node_parent is compiled.tree.node_parent
    # a read-only view of memory someone can still write to is copied too
    view = utility[:, :]
    view.setflags(write=False)
    assert _with_utility(compiled, view).tree.utility is not view
    # so is an array over a read-only memoryview of a bytearray: the bytearray still changes
    # (an edge slot written there after the check made the kernels read past their arrays)
    memory = bytearray(compiled.tree.edge_slot.tobytes())
    slots = np.frombuffer(memoryview(memory).toreadonly(), dtype=compiled.tree.edge_slot.dtype)
    given = dataclasses.replace(compiled, tree=compiled.tree._replace(edge_slot=slots))
    memory[-4:] = (10**8).to_bytes(4, "little")
    np.testing.assert_array_equal(given.tree.edge_slot, compiled.tree.edge_slot)


def test_an_outcome_a_rounding_above_1_compiles_and_survives_a_round_trip(tmp_path):
    # compile_game takes it (its node sums to 1 within the tolerance); the tree check refused it
    game = SpecGame(C(("a", 1 + 5e-10, D(0, "k", ("x", T(1, -1)), ("y", T(0, 0)))),
                      ("b", 0.0, T(0, 0))))
    compiled = compile_game(game)
    assert pickle.loads(pickle.dumps(compiled)).fingerprint == compiled.fingerprint
    assert cfrkit.load_compiled(compiled.save(tmp_path / "g.npz")).fingerprint == compiled.fingerprint


def test_replaced_keys_and_actions_make_the_name_maps_afresh():
    compiled = compile_game(KuhnPoker())
    renamed = dataclasses.replace(
        compiled, infoset_keys=tuple(f"kuhn:{key}" for key in compiled.infoset_keys)
    )
    assert renamed.key_index["kuhn:Qpb"] == compiled.key_index["Qpb"]
    assert "Qpb" not in renamed.key_index and "Qpb" not in renamed.infosets
    assert renamed.infosets["kuhn:Qpb"].actions == ("pass", "bet")
    policy = cfrkit.CFRPlus(renamed).iterate(10).average_policy()
    assert set(policy.to_dict()) == set(renamed.infoset_keys)
    labels = [("p", "b") for _ in compiled.infoset_actions]  # a list: kept as a tuple
    relabelled = dataclasses.replace(compiled, infoset_actions=labels)
    labels[0] = ("x", "y")
    assert relabelled.infosets["J"].actions == ("p", "b")
    assert isinstance(relabelled.infoset_actions, tuple)
    with pytest.raises(ValueError, match="CompiledGame: infoset keys repeat"):
        dataclasses.replace(compiled, infoset_keys=("J",) * compiled.num_infosets)


@pytest.mark.parametrize("how", [copy.copy, copy.deepcopy,
                                 lambda c: pickle.loads(pickle.dumps(c))])
def test_copies_and_pickles_of_a_compiled_game_are_made_afresh(how):
    """A copy made field by field would have writable arrays (a pickle's or a deep copy's)
    and the original's cache: change its payoffs and a sampled trainer still ran on the old
    ones, and the old fingerprint let the old game's checkpoints load."""
    compiled = compile_game(KuhnPoker())
    cfrkit.ChanceSampledCFR(compiled, seed=0).iterate(5)  # fills the caches
    copied = how(compiled)
    assert copied is not compiled and "sampling_layout" not in copied._cache
    for array in copied.tree:
        if isinstance(array, np.ndarray):
            assert not array.flags.writeable
            with pytest.raises(ValueError, match="read-only"):
                array.flat[0] = 1
    assert copied.fingerprint == compiled.fingerprint and copied.zero_sum
    assert dict(copied.key_index) == dict(compiled.key_index)
    np.testing.assert_array_equal(
        cfrkit.ChanceSampledCFR(copied, seed=0).iterate(50).average_policy().table,
        cfrkit.ChanceSampledCFR(compiled, seed=0).iterate(50).average_policy().table,
    )


def test_compiling_and_loading_copy_no_array(tmp_path, monkeypatch):
    """The tree's arrays are read-only from the start, np.load's too (views of arrays of
    their own, both made read-only): a compile or a cache load makes no second copy."""
    from cfrkit.tree.layout import CompiledGame

    copied = []
    check = CompiledGame.__post_init__

    def counting(self):
        given = tuple(self.tree)
        check(self)
        copied.append(sum(a is not b for a, b in zip(given, self.tree)))

    monkeypatch.setattr(CompiledGame, "__post_init__", counting)
    compiled = compile_game(KuhnPoker(players=3))
    cfrkit.load_compiled(compiled.save(tmp_path / "kuhn3.npz"))
    compile_game(KuhnPoker(players=3), cache_dir=tmp_path / "cache")  # compiles, writes
    compile_game(KuhnPoker(players=3), cache_dir=tmp_path / "cache")  # loads
    assert copied == [0, 0, 0, 0]


def test_infosets_records():
    compiled = compile_game(KuhnPoker())
    record = compiled.infosets["Qpb"]
    assert (record.key, record.player, record.actions) == ("Qpb", 0, ("pass", "bet"))
    assert cfrkit.VanillaCFR(KuhnPoker()).infosets["Kp"].player == 1


def test_node_kinds():
    tree = compile_game(KuhnPoker()).tree
    assert tree.node_kind[0] == CHANCE
    assert np.count_nonzero(tree.node_kind == DECISION) == 24


# --- one test per GameError case -------------------------------------------------------------

def _raises(game, *fragments, **kwargs):
    with pytest.raises(GameError) as info:
        compile_game(game, **kwargs)
    message = str(info.value)
    for fragment in fragments:
        assert fragment in message, message
    return message


def test_negative_chance_probability():
    game = SpecGame(C(("a", 1.5, T(1, -1)), ("b", -0.5, T(0, 0))))
    _raises(game, "'b' has probability -0.5", "history []")


def test_chance_probabilities_not_summing_to_one():
    game = SpecGame(D(0, "k", ("x", C(("a", 0.5, T(1, -1)), ("b", 0.4, T(0, 0))))))
    _raises(game, "sum to 0.9", "history ['x']")


def test_chance_probabilities_within_tolerance_are_accepted():
    game = SpecGame(C(("a", 0.5 + 4e-10, T(1, -1)), ("b", 0.5, T(0, 0))))
    assert compile_game(game).num_nodes == 3
    # the documented tolerance is 1e-9, not ten times more
    for off in (2e-9, -2e-9):
        _raises(SpecGame(C(("a", 0.5 + off, T(1, -1)), ("b", 0.5, T(0, 0)))), "sum to")


def test_decision_node_without_actions():
    game = SpecGame(C(("a", 1.0, D(1, "k"))))
    _raises(game, "no actions", "history ['a']")


def test_duplicate_actions():
    game = SpecGame(D(0, "k", ("x", T(0, 0)), ("x", T(1, -1))))
    _raises(game, "duplicate action 'x'")


def test_infoset_with_different_actions():
    game = SpecGame(
        C(
            ("a", 0.5, D(0, "k", ("x", T(0, 0)), ("y", T(1, -1)))),
            ("b", 0.5, D(0, "k", ("x", T(0, 0)), ("z", T(1, -1)))),
        )
    )
    _raises(game, "infoset 'k' has actions ('x', 'z')", "history ['b']", "history ['a']")


def test_a_nan_action_label_is_refused_where_it_first_appears():
    # a NaN never equals itself: the infoset met again would have other actions (two NaN
    # objects) or the same (one object), and no policy row could be looked up by it
    game = SpecGame(
        C(
            ("a", 0.5, D(0, "k", (float("nan"), T(0, 0)), ("y", T(1, -1)))),
            ("b", 0.5, D(0, "k", (float("nan"), T(0, 0)), ("y", T(1, -1)))),
        )
    )
    _raises(game, "infoset 'k': the action label nan is NaN, which never equals itself",
            "history ['a']")
    once = SpecGame(D(0, "k", (np.float32("nan"), T(0, 0)), ("y", T(1, -1))))
    _raises(once, "infoset 'k': the action label ", "is NaN, which never equals itself",
            "history []")
    # inside a tuple too (it trained, and policy files then refused it)
    nested = SpecGame(D(0, "k", ((float("nan"), 1), T(0, 0)), ("y", T(1, -1))))
    _raises(nested, "infoset 'k': the action label (nan, 1) holds a NaN", "history []")


def test_an_int_label_too_long_to_write_is_refused_where_it_first_appears():
    # it trained, then trainer.save, print(policy) and policy.save raised Python's own error
    huge = 10**5000
    game = SpecGame(D(0, "k", (huge, T(0, 0)), (("y", -huge), T(1, -1))))
    _raises(game, "infoset 'k': an action label holds an int too long for Python to write",
            "history []")
    fine = 10**600  # under any limit Python allows
    assert cfrkit.compile_game(SpecGame(D(0, "k", (fine, T(0, 0)), ("y", T(1, -1))))).num_infosets == 1


def test_infoset_with_different_player():
    game = SpecGame(
        C(
            ("a", 0.5, D(0, "k", ("x", T(0, 0)))),
            ("b", 0.5, D(1, "k", ("x", T(0, 0)))),
        )
    )
    _raises(game, "is player 1's here but player 0's", "history ['b']")


def test_imperfect_recall():
    # player 0 forgets its own first action: both second-round histories share key "k2"
    game = SpecGame(
        D(
            0, "k1",
            ("x", D(0, "k2", ("u", T(0, 0)), ("v", T(1, -1)))),
            ("y", D(0, "k2", ("u", T(0, 0)), ("v", T(1, -1)))),
        )
    )
    _raises(game, "imperfect recall", "infoset 'k2'", "history ['y']", "'x'")


def test_imperfect_recall_of_an_infoset_visited_twice():
    game = SpecGame(D(0, "k", ("x", D(0, "k", ("x", T(0, 0))))))
    _raises(game, "imperfect recall", "history ['x']")


def test_non_finite_utilities():
    game = SpecGame(D(0, "k", ("x", T(0, 0)), ("y", T(math.nan, 0))))
    _raises(game, "not a finite number", "history ['y']")


def test_wrong_number_of_utilities():
    game = SpecGame(D(0, "k", ("x", T(1, -1, 0))))
    _raises(game, "3 values for 2 players", "history ['x']")


def test_player_out_of_range():
    game = SpecGame(D(0, "k", ("x", D(2, "j", ("y", T(0, 0))))))
    _raises(game, "current_player() is 2, out of range for 2 players", "history ['x']")


class _Endless(History):
    """A game that never ends: compile must stop at max_nodes, not hang."""

    def __init__(self, depth=0):
        self.depth = depth

    def is_terminal(self):
        return False

    def is_chance(self):
        return False

    def current_player(self):
        return 0

    def actions(self):
        return ("left", "right")

    def chance_outcomes(self):
        return ()

    def child(self, action):
        return _Endless(self.depth + 1)

    def infoset_key(self):
        return f"d{self.depth}-{id(self)}"

    def utilities(self):
        return (0.0, 0.0)


def test_tree_larger_than_max_nodes():
    game = SpecGame(None)
    game.root = lambda: _Endless()
    _raises(game, "more than max_nodes=1000 nodes", max_nodes=1000)


def test_max_nodes_argument_is_checked():
    with pytest.raises(ValueError, match="max_nodes"):
        compile_game(KuhnPoker(), max_nodes=0)


def test_non_game_is_rejected():
    with pytest.raises(TypeError, match="cfrkit.Game"):
        compile_game(object())


class _Fan(cfrkit.Game):
    """One decision with ``width`` actions, each a terminal paying ``payoff(i)``: more terminals
    than the walk buffers between two flushes."""

    num_players = 2

    def __init__(self, width, payoff):
        self.width, self.payoff = width, payoff

    def root(self):
        return _FanHistory(self, None)


class _FanHistory(History):
    def __init__(self, game, leaf):
        self.game, self.leaf = game, leaf

    def is_terminal(self):
        return self.leaf is not None

    def is_chance(self):
        return False

    def current_player(self):
        return 0

    def actions(self):
        return tuple(range(self.game.width))

    def chance_outcomes(self):
        return ()

    def child(self, action):
        return _FanHistory(self.game, action)

    def infoset_key(self):
        return "root"

    def utilities(self):
        return self.game.payoff(self.leaf)

    def __repr__(self):
        return f"Fan({self.leaf})"


@pytest.mark.parametrize("kind", [float, int, np.float64, np.int32])
def test_utilities_of_any_real_kind_survive_the_walks_buffers(kind):
    # 20,000 terminals: two flushes in the middle of the walk and one at its end
    compiled = compile_game(_Fan(20_000, lambda i: (kind(i % 7), kind(-(i % 7)))))
    tree = compiled.tree
    leaves = np.arange(1, 20_001)  # breadth first: the root's child i is node i + 1
    np.testing.assert_array_equal(tree.utility[0, leaves], (leaves - 1) % 7)
    np.testing.assert_array_equal(tree.utility[1, leaves], -((leaves - 1) % 7))


@pytest.mark.parametrize("bad, fragment", [
    (True, "gave a bool (True), not a real number"),
    ("3", "gave a str ('3'), not a real number"),
    (10**400, "too large for a float64"),
])
def test_a_bad_utility_found_at_a_flush_names_its_history(bad, fragment):
    # the bad terminal sits past the first flush (8,192 nodes), among plain ones
    game = _Fan(20_000, lambda i: (bad, 0.0) if i == 12_345 else (1.0, -1.0))
    with pytest.raises(GameError) as info:
        compile_game(game)
    message = str(info.value)
    assert fragment in message and "history [12345] (Fan(12345))" in message, message
