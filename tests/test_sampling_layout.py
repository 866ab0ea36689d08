"""The sampling layout of chance-sampled passes (cfrkit.statics.sampling_layout), against a
direct recursive reading of the tree; the draws and segments of a sample against a plain walk;
the in-pass update against the update after the pass."""

from __future__ import annotations

from collections import deque

import numpy as np
import pytest
from hypothesis import given, settings
from numba import njit

import cfrkit
from cfrkit._kernels.chance import draw_sample
from cfrkit._kernels.sampled_pass import (
    DECISION_ACTIONS,
    DECISION_FIRST_CHILD,
    DECISION_INFOSET,
    DECISION_POSITION,
    DECISION_SLOT,
    EDGE_FAMILY,
    EDGE_SLOT,
    INNER_PARENT,
    INNER_PLAYER,
    INNER_POSITION,
    INNER_SLOT,
    cut_segments,
)
from cfrkit.games import KuhnPoker, LeducPoker
from cfrkit.statics import sampling_layout
from cfrkit.tree import CHANCE, DECISION, TERMINAL

from conftest import GAMES, RANDOM_GAMES, replay_samples
from random_games import RandomGame, random_games

BUILT_IN = {**GAMES, "leduc": LeducPoker(), **RANDOM_GAMES}


def children(tree, n: int) -> list[int]:
    first = int(tree.node_first_child[n])
    return list(range(first, first + int(tree.node_num_children[n])))


def subtree(tree, n: int) -> list[int]:
    """Every node below ``n`` (``n`` included)."""
    nodes, stack = [], [n]
    while stack:
        m = stack.pop()
        nodes.append(m)
        stack.extend(children(tree, m))
    return nodes


def region(tree, n: int) -> list[int]:
    """The nodes reached from ``n`` without crossing a chance edge, breadth first."""
    order, queue = [], deque([n])
    while queue:
        m = queue.popleft()
        order.append(m)
        if tree.node_kind[m] != CHANCE:
            queue.extend(children(tree, m))
    return order


def check_layout(game) -> None:
    compiled = cfrkit.compile_game(game)
    tree = compiled.tree
    layout = sampling_layout(compiled)
    num_nodes = compiled.num_nodes
    node = layout["position_node"]
    assert sorted(node) == list(range(num_nodes))
    position = np.empty(num_nodes, dtype=np.int64)
    position[node] = np.arange(num_nodes)

    # regions: the root's and one per chance outcome, each breadth-first and contiguous,
    # tiling the positions in order; each outcome's whole subtree contiguous behind its start
    roots = [0] + [n for n in range(1, num_nodes) if tree.node_kind[tree.node_parent[n]] == CHANCE]
    starts = layout["region_start"]
    assert starts[0] == 0 and starts[-1] == num_nodes and np.all(np.diff(starts) > 0)
    assert sorted(position[roots]) == list(starts[:-1])
    for r in roots:
        below = subtree(tree, r)
        assert sorted(position[below]) == list(range(position[r], position[r] + len(below)))
        nodes = region(tree, r)
        assert list(position[nodes]) == list(range(position[r], position[r] + len(nodes)))
        k = np.searchsorted(starts, position[r])
        assert starts[k + 1] == position[r] + len(nodes)

    # the edge into each position, and utilities by position
    edges = layout["position_edge"]
    np.testing.assert_array_equal(edges[:, EDGE_SLOT], tree.edge_slot[node])
    family = np.where(tree.edge_last[node], position[np.maximum(tree.node_parent[node], 0)], -1)
    np.testing.assert_array_equal(edges[:, EDGE_FAMILY], family)
    np.testing.assert_array_equal(layout["position_utility"], tree.utility[:, node])

    # per player, the internal nodes but the regions' first with a decision node of the player
    # at or below them, in position order, region by region (last group: any player's)
    def ancestors(n: int) -> list[int]:
        path = []
        while n >= 0:
            path.append(n)
            n = int(tree.node_parent[n])
        return path

    decision_nodes = np.flatnonzero(tree.node_kind == DECISION)
    players = range(tree.num_players)
    above = {p: {a for n in decision_nodes if tree.node_player[n] == p for a in ancestors(n)}
             for p in players}
    above[tree.num_players] = set().union(*above.values())
    inner = layout["inner"]
    bounds = layout["region_inner"]
    for p in range(tree.num_players + 1):
        expected = sorted(
            position[n] for n in above[p]
            if tree.node_kind[n] != TERMINAL and tree.edge_player[n] >= 0
        )
        rows = inner[bounds[p, 0]:bounds[p, -1]]
        assert list(rows[:, INNER_POSITION]) == expected
        np.testing.assert_array_equal(
            bounds[p], bounds[p, 0] + np.searchsorted(rows[:, INNER_POSITION], starts)
        )
    at = node[inner[:, INNER_POSITION]]
    np.testing.assert_array_equal(inner[:, INNER_PARENT], position[tree.node_parent[at]])
    np.testing.assert_array_equal(inner[:, INNER_SLOT], tree.edge_slot[at])
    np.testing.assert_array_equal(inner[:, INNER_PLAYER], tree.node_player[tree.node_parent[at]])

    # per player and region, where the backward loop starts: the whole region below a decision
    # node of the player, from the first child of its first one, or nowhere
    for p in players:
        for k in range(len(starts) - 1):
            first = node[starts[k]]
            mine = [position[n] for n in decision_nodes
                    if tree.node_player[n] == p and starts[k] <= position[n] < starts[k + 1]]
            hangs = any(tree.node_kind[n] == DECISION and tree.node_player[n] == p
                        for n in ancestors(first)[1:])
            expected = (starts[k] + 1 if hangs
                        else position[tree.node_first_child[node[min(mine)]]] if mine
                        else starts[k + 1])
            assert layout["region_values"][p, k] == expected

    # decision nodes by player, in position order; their children contiguous
    decisions = layout["decisions"]
    at = node[decisions[:, DECISION_POSITION]]
    assert np.all(tree.node_kind[at] == DECISION)
    assert sorted(at) == list(np.flatnonzero(tree.node_kind == DECISION))
    for p in range(tree.num_players):
        rows = layout["region_decisions"][p]
        assert list(range(rows[0], rows[-1])) == list(np.flatnonzero(tree.node_player[at] == p))
        assert np.all(np.diff(decisions[rows[0]:rows[-1], DECISION_POSITION]) > 0)
        np.testing.assert_array_equal(
            rows, rows[0] + np.searchsorted(decisions[rows[0]:rows[-1], DECISION_POSITION], starts)
        )
    for row, n in zip(decisions, at):
        kids = children(tree, n)
        first = row[DECISION_FIRST_CHILD]
        assert list(position[kids]) == list(range(first, first + len(kids)))
        assert row[DECISION_ACTIONS] == len(kids)
        assert row[DECISION_SLOT] == tree.node_slot[n]
        assert row[DECISION_INFOSET] == tree.node_infoset[n]

    # chance nodes: numbered by node; the first one at or after each position; the nearest
    # chance nodes below each outcome; the region each outcome starts
    chance = [n for n in range(num_nodes) if tree.node_kind[n] == CHANCE]
    assert list(layout["chance_position"]) == [position[n] for n in chance] + [num_nodes]
    for i in range(num_nodes + 1):
        after = [k for k, n in enumerate(chance) if position[n] >= i]
        first = min(after, key=lambda k: position[chance[k]]) if after else len(chance)
        assert layout["next_chance"][i] == first

    def nearest_below(n: int) -> list[int]:
        if tree.node_kind[n] == CHANCE:
            return [chance.index(n)]
        return sorted(k for c in children(tree, n) for k in nearest_below(c))

    offset = tree.num_action_slots
    num_chance_slots = tree.chance_prob.shape[0]
    below, below_start = layout["chance_below"], layout["chance_below_start"]
    for k, n in enumerate(chance):
        assert layout["chance_slot_start"][k] == tree.node_slot[n] - offset
        for j, c in enumerate(children(tree, n)):
            s = tree.node_slot[n] - offset + j
            assert list(below[below_start[s]:below_start[s + 1]]) == nearest_below(c)
            assert starts[layout["chance_child_region"][s]] == position[c]
    top = nearest_below(0)
    assert list(below[below_start[num_chance_slots]:below_start[num_chance_slots + 1]]) == top

    # met once: no two histories of the infoset part at a decision node
    for infoset in range(compiled.num_infosets):
        lo, hi = tree.infoset_node_start[infoset], tree.infoset_node_start[infoset + 1]
        nodes = tree.infoset_nodes[lo:hi]
        twice = False
        for x in range(len(nodes)):
            above = set(ancestors(nodes[x]))
            for y in range(x + 1, len(nodes)):
                meet = next(n for n in ancestors(nodes[y]) if n in above)
                twice |= bool(tree.node_kind[meet] == DECISION)
        assert layout["infoset_once"][infoset] == (not twice), compiled.infoset_keys[infoset]


@pytest.mark.parametrize("name", sorted(BUILT_IN))
def test_layout_of_the_test_games(name):
    check_layout(BUILT_IN[name])


@settings(max_examples=60, deadline=None)
@given(game=random_games(max_depth=7))
def test_layout_of_random_games(game):
    check_layout(game)


def test_both_update_paths_are_exercised():
    # the in-pass update (infosets met once) on the poker games, the update after the pass
    # on some random games' infosets
    for game in (KuhnPoker(players=3), LeducPoker()):
        assert sampling_layout(cfrkit.compile_game(game))["infoset_once"].all()
    assert any(
        not sampling_layout(cfrkit.compile_game(game))["infoset_once"].all()
        for game in RANDOM_GAMES.values()
    )


def position_of(statics, n: int) -> int:
    return int(np.flatnonzero(statics.layout.position_node == n)[0])


@njit
def _draw_and_cut(tree, statics, state, scratch) -> tuple:
    draw_sample(tree, statics, state, scratch)
    return cut_segments(statics, scratch)


@pytest.mark.parametrize("game", [KuhnPoker(players=3), LeducPoker(), RANDOM_GAMES["random3"],
                                  RandomGame(seed=8, num_players=3, max_depth=7, max_nodes=400)],
                         ids=["kuhn3", "leduc", "random3", "random3_deep"])
def test_samples_are_drawn_in_breadth_first_order_and_cut_into_their_regions(game):
    # replay_samples re-draws on a copy of the stream in the order of a breadth-first walk of
    # the sample; the kernel must draw the same outcomes (leaving the stream where the replay
    # leaves it) and walk exactly the nodes consistent with them, region by region
    # (each sample is replayed from the stream the previous draw left: a draw that used too
    # many or too few numbers would show in the next samples)
    trainer = cfrkit.ChanceSampledCFR(game, seed=3)
    compiled, statics, scratch = trainer.game, trainer._statics, trainer._scratch
    tree = compiled.tree
    for _ in range(30):
        expected = replay_samples(trainer, 1)[0]  # {chance node path: outcome label}
        paths = compiled._cache["test_node_paths"]
        count, skipped = _draw_and_cut(tree, statics, trainer._state, scratch)
        # the nodes consistent with the sample, by a plain walk
        walked, queue = [], deque([0])
        while queue:
            n = queue.popleft()
            walked.append(n)
            kids = children(tree, n)
            if tree.node_kind[n] == CHANCE:
                kids = [c for c in kids if paths[c][-1] == expected[paths[n]]]
            queue.extend(kids)
        starts = statics.layout.region_start
        covered = []
        for g in range(count):
            r, link = scratch.segments[:, g]
            covered += range(starts[r], starts[r + 1])
            # the region starts at a drawn outcome; above it, drawn outcomes of chance nodes
            # up to the chance node at link (-1: up to the root)
            top = statics.layout.position_node[link] if link >= 0 else 0
            n = statics.layout.position_node[starts[r]]
            while n != top:
                up = tree.node_parent[n]
                assert tree.node_kind[up] == CHANCE and paths[n][-1] == expected[paths[up]]
                n = up
            assert link < 0 or link in covered  # (the regions come parents first)
        # the regions, and the lone chance nodes passed through, make the sample
        lone = [n for n in walked if tree.node_kind[n] == CHANCE
                and position_of(statics, n) not in covered]
        assert len(lone) == skipped
        assert sorted(list(statics.layout.position_node[covered]) + lone) == sorted(walked)


@pytest.mark.parametrize("game", [KuhnPoker(players=3), LeducPoker(), RANDOM_GAMES["random2"]],
                         ids=["kuhn3", "leduc", "random2"])
@pytest.mark.parametrize("rule", ["vanilla", "cfr_plus", "linear"])
def test_in_pass_updates_match_the_update_after_the_pass(game, rule):
    # with every infoset marked as possibly met twice, the trainer updates after each pass
    # (through scratch.instant and scratch.baseline): the same bits
    fused = cfrkit.ChanceSampledCFR(game, seed=4, rule=getattr(cfrkit.RegretRule, rule)())
    after = cfrkit.ChanceSampledCFR(game, seed=4, rule=getattr(cfrkit.RegretRule, rule)())
    layout = after._statics.layout
    never = np.zeros_like(layout.infoset_once)
    after._statics = after._statics._replace(layout=layout._replace(infoset_once=never))
    iterations = 200 if isinstance(game, LeducPoker) else 2000
    fused.iterate(iterations)
    after.iterate(iterations)
    for name in ("regret", "strategy_sum", "probs"):
        np.testing.assert_array_equal(getattr(fused._state, name), getattr(after._state, name))
    assert fused.nodes_touched == after.nodes_touched
