"""ResultTableLearner: a pure-Python oracle on the abstract Game API replaying the kernel's
draws, reproducibility, the counts, the two extremes of ``explore``, checkpoints, Ctrl-C and
argument checks."""

from __future__ import annotations

import math
import os
import signal
import threading
import time

import numpy as np
import pytest

import cfrkit
from cfrkit._kernels import result_table as kernel
from cfrkit._kernels.chance import sample_outcome
from cfrkit._kernels.random import next_double
from cfrkit.games import KuhnPoker, LeducPoker, RockPaperScissors
from cfrkit.result_table import MAX_GAMES
from cfrkit.statics import alias_tables
from cfrkit.tree import CHANCE

from conftest import RANDOM_GAMES, node_paths


# -- the oracle ---------------------------------------------------------------------------------


class OracleLearner:
    """The learner written from its description, on the Game / History objects.

    Its random draws are the kernel's, replayed from a copy of the learner's random state in
    the kernel's order: at a chance node ``sample_outcome`` through the game's alias tables
    (the only place it uses the compiled game: to find a chance node's alias slots); at a
    decision, one uniform ``u``, and if ``u < explore`` a second one for the uniform choice.
    """

    def __init__(self, learner: cfrkit.ResultTableLearner) -> None:
        compiled = learner.game
        self.game = compiled.game
        self.tree = compiled.tree
        self.explore = learner.explore
        self.rng = learner._rng.copy()
        self.alias_prob, self.alias_index = alias_tables(compiled)
        self.node_of = {path: n for n, path in enumerate(node_paths(self.game))}
        self.table: dict[str, dict] = {}  # key -> action -> [games, total gain]

    def choose(self, key: str, actions: list) -> int:
        row = self.table.setdefault(key, {a: [0, 0.0] for a in actions})
        if next_double(self.rng) < self.explore:
            return min(int(next_double(self.rng) * len(actions)), len(actions) - 1)
        for j, a in enumerate(actions):
            if row[a][0] == 0:
                return j  # the first untried choice
        averages = [row[a][1] / row[a][0] for a in actions]
        return averages.index(max(averages))  # the first of the best

    def play(self) -> None:
        history, path, made = self.game.root(), (), []
        while not history.is_terminal():
            if history.is_chance():
                n = self.node_of[path]
                k = sample_outcome(self.rng, self.alias_prob, self.alias_index,
                                   int(self.tree.node_slot[n]) - self.tree.num_action_slots,
                                   int(self.tree.node_num_children[n]))
                label = history.chance_outcomes()[k][0]
            else:
                key, actions = history.infoset_key(), list(history.actions())
                label = actions[self.choose(key, actions)]
                made.append((key, label, history.current_player()))
            history, path = history.child(label), path + (label,)
        payoff = history.utilities()
        for key, action, player in made:
            entry = self.table[key][action]
            entry[0] += 1
            entry[1] += float(payoff[player])


def assert_matches_oracle(learner: cfrkit.ResultTableLearner, oracle: OracleLearner) -> None:
    table = learner.result_table()
    for key, row in table.items():
        for action, (games, gain) in row.items():
            expected = oracle.table.get(key, {}).get(action, [0, 0.0])
            assert games == expected[0], (key, action)
            assert abs(gain - expected[1]) <= 1e-12 * max(1.0, abs(expected[1])), (key, action)
    assert set(oracle.table) <= set(table)
    np.testing.assert_array_equal(learner._rng, oracle.rng)  # the same number of draws


ORACLE_GAMES = {
    "kuhn2": KuhnPoker(),
    "kuhn3": KuhnPoker(players=3),
    **RANDOM_GAMES,
}


@pytest.mark.parametrize("explore", [0.01, 0.3, 0.0, 1.0])
@pytest.mark.parametrize("name", list(ORACLE_GAMES))
def test_kernel_matches_the_oracle(name, explore):
    learner = cfrkit.ResultTableLearner(ORACLE_GAMES[name], explore=explore, seed=17)
    oracle = OracleLearner(learner)
    for _ in range(3000):
        oracle.play()
    learner.iterate(1000).iterate(2000)
    assert_matches_oracle(learner, oracle)


def test_kernel_matches_the_oracle_on_leduc():
    learner = cfrkit.ResultTableLearner(LeducPoker(), explore=0.05, seed=3)
    oracle = OracleLearner(learner)
    for _ in range(1500):
        oracle.play()
    learner.iterate(1500)
    assert_matches_oracle(learner, oracle)


# -- reproducibility ------------------------------------------------------------------------------


def _arrays(learner):
    games, gains = learner.table_arrays()
    return games, gains, learner._rng.copy()


@pytest.mark.parametrize("game", [KuhnPoker(players=3), RANDOM_GAMES["random2"]],
                         ids=["kuhn3", "random2"])
def test_same_seed_same_bits_other_seed_other_table(game):
    a = cfrkit.ResultTableLearner(game, seed=2**64 - 1).iterate(20_000)
    b = cfrkit.ResultTableLearner(game, seed=2**64 - 1).iterate(20_000)
    c = cfrkit.ResultTableLearner(game, seed=5).iterate(20_000)
    for x, y in zip(_arrays(a), _arrays(b)):
        assert x.tobytes() == y.tobytes()
    assert a.decisions == b.decisions
    assert not np.array_equal(a.table_arrays()[0], c.table_arrays()[0])
    assert a.seed == 2**64 - 1 and c.seed == 5


def test_splitting_iterate_changes_nothing():
    game = LeducPoker()
    whole = cfrkit.ResultTableLearner(game, seed=8).iterate(30_000)
    split = cfrkit.ResultTableLearner(game, seed=8)
    for n in (0, 1, 2, 997, 5000, 24_000):
        split.iterate(n)
    assert split.iteration == whole.iteration == 30_000
    for x, y in zip(_arrays(whole), _arrays(split)):
        assert x.tobytes() == y.tobytes()


def test_seed_none_draws_64_bits():
    seeds = {cfrkit.ResultTableLearner(KuhnPoker()).seed for _ in range(4)}
    assert len(seeds) == 4 and all(0 <= s < 2**64 for s in seeds)


# -- counts -----------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["kuhn2", "kuhn3", "random2", "random3", "rps"])
def test_counts_are_int64_and_consistent(name):
    game = RockPaperScissors() if name == "rps" else ORACLE_GAMES[name]
    learner = cfrkit.ResultTableLearner(game, explore=0.2, seed=4).iterate(7_777)
    tree = learner.game.tree
    games, gains = learner.table_arrays()
    assert games.dtype == np.int64 and gains.dtype == np.float64
    assert int(games.sum()) == learner.decisions
    if tree.node_kind[0] != CHANCE:  # a decision at the root: its infoset counts every game
        root = tree.node_infoset[0]
        s, m = tree.infoset_first_slot[root], tree.infoset_num_actions[root]
        assert games[s : s + m].sum() == learner.iteration
    # each infoset is met at most once per game (perfect recall): its count is at most the games
    totals = np.add.reduceat(games, tree.infoset_first_slot)
    assert totals.max() <= learner.iteration
    # a player reaches an infoset only after its previous choice (the parent slot)
    below = np.zeros(tree.num_action_slots, dtype=np.int64)
    for i, parent_slot in enumerate(tree.infoset_parent_slot):
        if parent_slot >= 0:
            below[parent_slot] += totals[i]
    assert np.all(below <= games)
    # the infosets where each player acts first: one per game that reaches the player, so the
    # count is the games in which some history of them is reached
    roots = tree.infoset_parent == -1
    for p in range(tree.num_players):
        first = roots & (tree.infoset_player == p)
        assert totals[first].sum() <= learner.iteration
    table = learner.result_table()
    assert all(type(g) is int and type(v) is float for row in table.values() for g, v in row.values())


def test_kuhn_counts_at_the_root_infosets_are_the_games_played():
    learner = cfrkit.ResultTableLearner(KuhnPoker(players=3), seed=1).iterate(12_345)
    table = learner.result_table()
    # player 0 acts first in every game, on one of the card infosets
    cards = [key for key, info in learner.infosets.items() if info.player == 0 and len(key) == 1]
    assert sum(g for key in cards for g, _ in table[key].values()) == 12_345
    # in two-player Kuhn, player 1 acts exactly once per game as well
    two = cfrkit.ResultTableLearner(KuhnPoker(), seed=1).iterate(12_345)
    second = [key for key, info in two.infosets.items() if info.player == 1]
    assert sum(g for key in second for g, _ in two.result_table()[key].values()) == 12_345


def test_counts_past_32_bits():
    learner = cfrkit.ResultTableLearner(RockPaperScissors(), explore=0.0, seed=0)
    big = 2**40 + 3
    learner._games[:] = big  # as if 2^40 games had been played with every choice
    learner._gains[:] = 0.0
    learner.iterate(10)
    games, _ = learner.table_arrays()
    assert games.sum() == 6 * big + 20  # no wrap-around: each game adds two decisions
    row = learner.result_table()[next(iter(learner.infosets))]
    assert all(g >= big for g, _ in row.values())
    assert type(next(iter(row.values()))[0]) is int


# -- the extremes of explore -------------------------------------------------------------------------


def _uniform_reach(compiled) -> np.ndarray:
    """Probability that each infoset is reached per game when everyone plays uniformly."""
    tree = compiled.tree
    reach = np.zeros(compiled.num_nodes)
    reach[0] = 1.0
    for n in range(compiled.num_nodes):  # breadth first: parents before children
        c, m = tree.node_first_child[n], tree.node_num_children[n]
        for j in range(m):
            if tree.node_kind[n] == CHANCE:
                reach[c + j] = reach[n] * tree.chance_prob[tree.node_slot[n] - tree.num_action_slots + j]
            else:
                reach[c + j] = reach[n] / m
    per_infoset = np.zeros(compiled.num_infosets)
    decision = tree.node_infoset >= 0
    np.add.at(per_infoset, tree.node_infoset[decision], reach[decision])
    return per_infoset


@pytest.mark.parametrize("name", ["kuhn3", "random2", "random3"])
def test_explore_one_is_uniform_random_play(name):
    games_played = 40_000
    learner = cfrkit.ResultTableLearner(ORACLE_GAMES[name], explore=1.0, seed=9)
    learner.iterate(games_played)
    tree = learner.game.tree
    counts, _ = learner.table_arrays()
    reach = _uniform_reach(learner.game)
    for i, (s, m) in enumerate(zip(tree.infoset_first_slot, tree.infoset_num_actions)):
        # each slot: Binomial(games, reach(I) / m) -- an infoset is met at most once per game
        p = reach[i] / m
        sd = math.sqrt(games_played * p * (1 - p))
        for j in range(m):
            assert abs(counts[s + j] - games_played * p) <= 5 * sd + 1e-9, (i, j)
    policy = learner.average_policy()
    uniform = cfrkit.Policy.uniform(learner.game).table
    totals = np.repeat(np.add.reduceat(counts, tree.infoset_first_slot), tree.infoset_num_actions)
    sd = np.sqrt(uniform * (1 - uniform) / np.maximum(totals, 1))
    assert np.all(np.abs(policy.table - uniform) <= 5 * sd + 1e-12)


@pytest.mark.parametrize("name", ["kuhn2", "kuhn3", "random3"])
def test_explore_zero_plays_the_greedy_choice(name):
    learner = cfrkit.ResultTableLearner(ORACLE_GAMES[name], explore=0.0, seed=2)
    tree = learner.game.tree
    for _ in range(300):
        greedy = learner.greedy_policy().table
        before = learner.table_arrays()[0]
        learner.iterate(1)
        made = np.flatnonzero(learner.table_arrays()[0] - before)
        assert made.size and np.all(greedy[made] == 1.0)
    # and the greedy choice is the first untried, else the first of the best averages
    games, gains = learner.table_arrays()
    greedy = learner.greedy_policy().table
    for s, m in zip(tree.infoset_first_slot, tree.infoset_num_actions):
        untried = [j for j in range(m) if games[s + j] == 0]
        averages = [gains[s + j] / games[s + j] if games[s + j] else -np.inf for j in range(m)]
        best = untried[0] if untried else averages.index(max(averages))
        assert greedy[s + best] == 1.0


def test_explore_zero_without_chance_ignores_the_seed():
    tables = [cfrkit.ResultTableLearner(RockPaperScissors(), explore=0, seed=s).iterate(500)
              .table_arrays() for s in (0, 1, 2**63)]
    for games, gains in tables[1:]:
        np.testing.assert_array_equal(games, tables[0][0])
        np.testing.assert_array_equal(gains, tables[0][1])


def test_ties_go_to_the_first_action():
    # every choice untried: the first; equal averages: the first of them
    assert kernel.greedy_choice(np.zeros(3, np.int64), np.zeros(3), 0, 3) == 0
    games = np.array([0, 2, 2, 0, 1], np.int64)
    gains = np.array([0.0, 1.0, 1.0, 0.0, 0.5])
    assert kernel.greedy_choice(games, gains, 1, 4) == 2  # slot 3 untried
    assert kernel.greedy_choice(games, gains, 1, 2) == 0  # 1/2 == 1/2
    assert kernel.greedy_choice(np.array([1, 2, 4]), np.array([0.5, 1.0, 3.0]), 0, 3) == 2


# -- policies and tables ------------------------------------------------------------------------------


def test_average_policy_is_the_choice_frequencies_and_uniform_where_unvisited():
    learner = cfrkit.ResultTableLearner(LeducPoker(), seed=0)
    assert np.array_equal(learner.average_policy().table, cfrkit.Policy.uniform(learner.game).table)
    learner.iterate(200)
    policy = learner.average_policy()
    table = learner.result_table()
    unvisited = 0
    for key, row in table.items():
        total = sum(g for g, _ in row.values())
        for action, (games, _) in row.items():
            expected = games / total if total else 1 / len(row)
            assert policy[key][action] == pytest.approx(expected, abs=1e-15)
        unvisited += total == 0
    assert unvisited > 0  # 200 games leave some of Leduc's infosets unvisited
    assert policy is not learner.average_policy()


def test_result_table_is_a_fresh_copy_of_every_infoset():
    learner = cfrkit.ResultTableLearner(KuhnPoker(), seed=0).iterate(100)
    table = learner.result_table()
    assert list(table) == list(learner.game.infoset_keys)
    for key, row in table.items():
        assert tuple(row) == learner.game.infosets[key].actions
    table["J"]["bet"] = (0, 0.0)
    games, gains = learner.table_arrays()
    games[:] = 0
    assert learner.result_table()["J"]["bet"] != (0, 0.0)
    assert learner.table_arrays()[0].sum() == learner.decisions


# -- checkpoints and Ctrl-C ---------------------------------------------------------------------------


def test_checkpoint_round_trip(tmp_path):
    game = KuhnPoker(players=3)
    straight = cfrkit.ResultTableLearner(game, explore=0.05, seed=12).iterate(4000)
    first = cfrkit.ResultTableLearner(game, explore=0.05, seed=12).iterate(1500)
    first.save(tmp_path / "learner.npz")
    loaded = cfrkit.load_trainer(tmp_path / "learner.npz", KuhnPoker(players=3))
    assert isinstance(loaded, cfrkit.ResultTableLearner)
    assert (loaded.iteration, loaded.explore, loaded.seed) == (1500, 0.05, 12)
    loaded.iterate(2500)
    for x, y in zip(_arrays(straight), _arrays(loaded)):
        assert x.tobytes() == y.tobytes()
    assert loaded.decisions == straight.decisions
    with pytest.raises(cfrkit.CheckpointError, match="another game"):
        cfrkit.load_trainer(tmp_path / "learner.npz", KuhnPoker())
    with np.load(tmp_path / "learner.npz", allow_pickle=False) as data:
        arrays = {key: data[key] for key in data.files}
    arrays["state/rng"][:] = 0  # xoshiro's one state it never leaves
    np.savez(tmp_path / "zero.npz", **arrays)
    with pytest.raises(cfrkit.CheckpointError, match="'state/rng' is all zeros"):
        cfrkit.load_trainer(tmp_path / "zero.npz", KuhnPoker(players=3))


def test_ctrl_c_during_iterate():
    if not hasattr(signal, "pthread_kill"):
        pytest.skip("POSIX signals")
    make = lambda: cfrkit.ResultTableLearner(LeducPoker(), seed=1)  # noqa: E731
    learner = make().iterate(1)
    handler = signal.getsignal(signal.SIGINT)
    sent: list[float] = []

    def fire():
        time.sleep(0.3)
        sent.append(time.perf_counter())
        os.kill(os.getpid(), signal.SIGINT)

    threading.Thread(target=fire, daemon=True).start()
    with pytest.raises(KeyboardInterrupt):
        learner.iterate(10**15)
    assert sent and time.perf_counter() - sent[0] < 1.0
    assert 1 < learner.iteration < 10**15
    assert signal.getsignal(signal.SIGINT) is handler
    fresh = make().iterate(learner.iteration)
    for x, y in zip(_arrays(learner), _arrays(fresh)):
        assert x.tobytes() == y.tobytes()
    learner.iterate(5)  # and it keeps working


def test_kernel_releases_the_gil():
    assert kernel.run_result_table.targetoptions.get("nogil") is True


# -- arguments -----------------------------------------------------------------------------------------


@pytest.mark.parametrize("explore", [-0.01, 1.01, math.nan, math.inf, 10**400, "0.1", None, True, [0.1]])
def test_bad_explore(explore):
    with pytest.raises(ValueError, match="explore"):
        cfrkit.ResultTableLearner(KuhnPoker(), explore=explore)


def test_good_explore_values():
    for explore in (0, 1, 0.5, np.float32(0.25), np.int64(1)):
        assert cfrkit.ResultTableLearner(KuhnPoker(), explore=explore, seed=0).explore == float(explore)


@pytest.mark.parametrize("seed", [-1, 2**64, 1.5, "3", True])
def test_bad_seed(seed):
    with pytest.raises(ValueError, match="seed"):
        cfrkit.ResultTableLearner(KuhnPoker(), seed=seed)


@pytest.mark.parametrize("n", [-1, 1.0, "5", True, None])
def test_bad_game_count(n):
    learner = cfrkit.ResultTableLearner(KuhnPoker(), seed=0)
    with pytest.raises(ValueError, match="n must be"):
        learner.iterate(n)
    assert learner.iteration == 0


def test_game_count_limit():
    learner = cfrkit.ResultTableLearner(KuhnPoker(), seed=0)
    learner._iteration = MAX_GAMES - 1
    learner.iterate(0)
    with pytest.raises(ValueError, match="2\\*\\*63 - 1"):
        learner.iterate(2)
    assert learner.iteration == MAX_GAMES - 1


def test_repr_and_export():
    learner = cfrkit.ResultTableLearner(KuhnPoker(), seed=0).iterate(3)
    assert repr(learner) == "ResultTableLearner(KuhnPoker(players=2), explore=0.01, iteration=3)"
    assert "ResultTableLearner" in cfrkit.__all__
    assert cfrkit.__all__ == sorted(cfrkit.__all__)
