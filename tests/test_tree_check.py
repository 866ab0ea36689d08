"""The layout check (cfrkit.tree.check): every tree compile_game makes passes it, and a
CompiledGame put together from arrays that break the layout the kernels trust is refused
(the file loader's refusals are in test_store.py)."""

from __future__ import annotations

import copy
import dataclasses
import re

import numpy as np
import pytest
from hypothesis import given, settings

import cfrkit
from cfrkit import compile_game
from cfrkit.games import KuhnPoker
from cfrkit.tree import check, layout
from cfrkit.tree.layout import tree_sizes

from conftest import GAMES, LEDUC, RANDOM_GAMES
from random_games import random_games


def _problem(compiled):
    arrays = compiled.tree._asdict()
    sizes = tree_sizes(arrays, compiled.num_players, compiled.tree.num_action_slots,
                       compiled.num_infosets)
    return check.tree_problem(arrays, sizes)


# games without decisions: test_degenerate_games.py loads theirs, which runs the check
ALL = {**GAMES, **RANDOM_GAMES, "leduc": LEDUC}


@pytest.mark.parametrize("name", sorted(ALL))
def test_every_compiled_tree_passes_the_check(name):
    # compile_game skips the check on its own trees: they must pass it all the same
    assert _problem(compile_game(ALL[name])) is None


@settings(max_examples=60, deadline=None)
@given(game=random_games(max_players=4, max_depth=8, max_nodes=400))
def test_every_compiled_random_tree_passes_the_check(game):
    assert _problem(compile_game(game)) is None


def _previous_by_walking_up(compiled):
    """Each decision node's player's last action slot above it, found by walking parents."""
    tree = compiled.tree
    result = []
    for node in np.flatnonzero(tree.node_kind == cfrkit.tree.DECISION):
        player, child, up = tree.node_player[node], node, tree.node_parent[node]
        while up >= 0 and tree.node_player[up] != player:
            child, up = up, tree.node_parent[up]
        result.append(-1 if up < 0 else int(tree.edge_slot[child]))
    return np.array(result)


class Stretch(cfrkit.Game):
    """Player 0 acts, player 1 moves ``length`` times, player 0 acts again: the second
    decision's previous own action lies ``length + 1`` steps up."""

    num_players = 2

    def __init__(self, length: int) -> None:
        self.length, self.name = length, f"stretch of {length}"

    def root(self):
        return _Step(self.length, ())


class _Step(cfrkit.History):
    def __init__(self, length, path):
        self.length, self.path = length, path

    def is_terminal(self):
        return len(self.path) == self.length + 2

    def is_chance(self):
        return False

    def current_player(self):
        return 0 if len(self.path) in (0, self.length + 1) else 1

    def actions(self):
        return ("a", "b") if self.current_player() == 0 else ("on",)

    def chance_outcomes(self):
        return ()

    def child(self, action):
        return _Step(self.length, (*self.path, action))

    def infoset_key(self):
        return repr(self.path)

    def utilities(self):
        win = 1.0 if self.path[0] == self.path[-1] else -1.0
        return (win, -win)


@pytest.mark.parametrize("steps", [0, 1, 8])  # 0: all by pointer jumping
@pytest.mark.parametrize("name", ["kuhn3", "random2", "random3", "leduc", "stretch"])
def test_previous_own_slots_match_a_walk_up_the_parents(name, steps, monkeypatch):
    compiled = compile_game(Stretch(20) if name == "stretch" else ALL[name])
    monkeypatch.setattr(check, "_STEPS", steps)
    previous = check.previous_own_slots(compiled.tree._asdict(), compiled.num_players)
    np.testing.assert_array_equal(previous, _previous_by_walking_up(compiled))
    assert (previous >= 0).any() and (previous < 0).any()


def _with(compiled, **arrays):
    return dataclasses.replace(compiled, tree=compiled.tree._replace(**arrays))


def test_a_hand_made_tree_with_a_cycle_is_refused():
    """A sampled pass would go round the cycle for ever (on the previous revision,
    ExternalSamplingCFR and OutcomeSamplingCFR hung on such a tree)."""
    compiled = compile_game(KuhnPoker())
    first_child = compiled.tree.node_first_child.copy()
    first_child[compiled.tree.internal_nodes[-1]] = 1  # back up to the root's children
    with pytest.raises(ValueError, match="CompiledGame: the nodes are not a tree numbered "
                                         "breadth first"):
        _with(compiled, node_first_child=first_child)


def test_hand_made_utilities_beyond_the_limit_are_refused():
    # compile_game refuses them from a game (test_overflow.py); a replaced array the same
    compiled = compile_game(KuhnPoker())
    with pytest.raises(ValueError, match=r"CompiledGame: array 'utility' holds values beyond"):
        _with(compiled, utility=compiled.tree.utility * 1e250)
    with pytest.raises(ValueError, match=r"CompiledGame: array 'utility' holds values beyond"):
        _with(compiled, utility=np.where(compiled.tree.utility > 1, np.nan, compiled.tree.utility))
    scaled = _with(compiled, utility=compiled.tree.utility * 1e199)  # within: accepted
    assert scaled.zero_sum


def test_only_trees_already_checked_skip_the_check(monkeypatch, tmp_path):
    """compile_game's and a copy's trees are not checked again (a check costs about as much
    as a load); every other tree is, a loaded file's included."""
    calls = []
    real = layout.tree_problem
    monkeypatch.setattr(layout, "tree_problem", lambda *a: calls.append(1) or real(*a))
    compiled = compile_game(KuhnPoker(players=3))
    copied, shallow = copy.deepcopy(compiled), copy.copy(compiled)
    assert calls == [] and copied.tree is compiled.tree and shallow.tree is compiled.tree
    assert shallow is not compiled and shallow.game is compiled.game
    dataclasses.replace(compiled)  # the same arrays, but not vouched for: checked
    assert calls == [1]
    cfrkit.load_compiled(compiled.save(tmp_path / "k.npz"))
    assert calls == [1, 1]
    # a trusted construction that fails leaves no trust behind on the thread
    with pytest.raises(ValueError, match="infoset keys repeat"):
        layout._checked_game(type(compiled), compiled.game, compiled.tree,
                            ("x",) * compiled.num_infosets, compiled.infoset_actions)
    dataclasses.replace(compiled)
    assert calls == [1, 1, 1]


@pytest.mark.parametrize("field, value, message", [
    ("num_players", 2.0, "tree.num_players must be an int, got 2.0"),
    ("num_players", True, "tree.num_players must be an int, got True"),
    ("num_players", 0, "tree.num_players must be >= 1, got 0"),
    ("num_action_slots", -1, "tree.num_action_slots must be >= 0, got -1"),
    ("num_action_slots", "24", "tree.num_action_slots must be an int, got '24'"),
])
def test_a_tree_of_bad_sizes_is_refused(field, value, message):
    # a float count reached np.zeros in the first iterate() as a bare TypeError
    compiled = compile_game(KuhnPoker())
    with pytest.raises(ValueError, match="CompiledGame: " + re.escape(message)):
        _with(compiled, **{field: value})


def test_numpy_integer_sizes_become_ints():
    compiled = compile_game(KuhnPoker())
    tree = compiled.tree
    made = _with(compiled, num_players=np.int64(2),
                 num_action_slots=np.int32(tree.num_action_slots))
    assert type(made.tree.num_players) is int and type(made.tree.num_action_slots) is int
    assert made.fingerprint == compiled.fingerprint
    assert cfrkit.CFRPlus(made).iterate(3).iteration == 3
