"""Errors and checks that do not grow with the game: messages stay short whatever the depth,
the labels or the reprs, and the checks are linear in the number of actions."""

from __future__ import annotations

import pytest

import cfrkit
from cfrkit import GameError, compile_game

from probe_game import Probe, ProbeHistory


class Chain(cfrkit.Game):
    """One long line of single-action decisions, then a terminal: depth ``length``."""

    num_players = 2
    name = "chain"

    def __init__(self, length: int, label: object = "go") -> None:
        self.length, self.label = length, label

    def root(self):
        return ChainHistory(self, 0)


class ChainHistory(cfrkit.History):
    def __init__(self, game: Chain, depth: int) -> None:
        self.game, self.depth = game, depth

    def is_terminal(self):
        return self.depth == self.game.length

    def is_chance(self):
        return False

    def current_player(self):
        return self.depth % 2

    def actions(self):
        return (self.game.label,)

    def chance_outcomes(self):
        return ()

    def child(self, action):
        return ChainHistory(self.game, self.depth + 1)

    def infoset_key(self):
        return f"d{self.depth}"

    def utilities(self):
        return (1.0, -1.0)

    def __repr__(self):
        return f"ChainHistory(depth={self.depth}, path={[self.game.label] * self.depth})"


def test_max_nodes_on_a_deep_chain_gives_a_short_message():
    # the old message spelled out the whole path: 180 million characters for a deep chain
    with pytest.raises(GameError) as info:
        compile_game(Chain(10**6), max_nodes=50_000)
    message = str(info.value)
    assert len(message) < 300, message
    assert "max_nodes=50000" in message and "(depth 49,999)" in message
    assert "[..., 'go', 'go', 'go', 'go', 'go', 'go']" in message


def test_a_huge_label_and_a_huge_repr_are_trimmed():
    with pytest.raises(GameError) as info:
        compile_game(Chain(100, label="x" * 10**6), max_nodes=50)
    message = str(info.value)
    assert len(message) < 400, message
    assert "'xxxxxxxx" in message and "..." in message


@pytest.mark.parametrize("method, depth, value", [
    ("actions", 1, ("a" * 10**5, "a" * 10**5)),                 # duplicate of a huge label
    ("utilities", 3, ("9" * 10**5, 0.0)),                        # a huge string utility
    ("infoset_key", 1, b"k" * 10**6),                             # a huge non-str key
    ("chance_outcomes", 0, [("h", 0.5), ("t" * 10**6, 0.6)]),    # a huge label, bad sum
])
def test_messages_about_huge_values_stay_short(method, depth, value):
    with pytest.raises(GameError) as info:
        compile_game(Probe(method, depth, value))
    assert len(str(info.value)) < 400, str(info.value)[:500]


def test_an_infoset_clash_with_huge_keys_stays_short():
    key = "k" * 10**6

    class Clash(ProbeHistory):
        def infoset_key(self):
            return key  # the same key for both players: a clash

        def child(self, action):
            return Clash(self.game, self.path + (action,))

    game = Probe()
    game.root = lambda: Clash(game, ())
    with pytest.raises(GameError) as info:
        compile_game(game)
    message = str(info.value)
    assert "is player 1's here but player 0's" in message and len(message) < 400


class CountedLabel:
    """An action label that counts how often it is compared."""

    comparisons = 0

    def __init__(self, value: int) -> None:
        self.value = value

    def __hash__(self) -> int:
        return hash(self.value)

    def __eq__(self, other: object) -> bool:
        CountedLabel.comparisons += 1
        return isinstance(other, CountedLabel) and other.value == self.value

    def __repr__(self) -> str:
        return f"L{self.value}"


@pytest.mark.parametrize("method, depth, wrap", [
    ("actions", 1, lambda labels: tuple(labels)),
    ("chance_outcomes", 0, lambda labels: [(x, 1 / len(labels)) for x in labels]),
])
def test_finding_a_duplicate_is_linear_in_the_number_of_labels(method, depth, wrap):
    # the old check searched every earlier label for each label: n^2 / 2 comparisons
    n = 3000
    labels = [CountedLabel(i) for i in range(n)] + [CountedLabel(n - 1)]
    CountedLabel.comparisons = 0
    with pytest.raises(GameError, match=r"duplicate .* L2999 \(among 3,001\)"):
        compile_game(Probe(method, depth, wrap(labels)))
    assert CountedLabel.comparisons < 10 * n


def test_a_duplicate_among_100000_actions_is_found():
    actions = tuple(range(100_000)) + (99_999,)
    with pytest.raises(GameError, match=r"duplicate action 99999 \(among 100,001\)"):
        compile_game(Probe("actions", 1, actions))


def test_many_distinct_actions_are_checked_once_per_infoset():
    # two histories share each infoset: the second is compared with the first, not rechecked
    n = 2000
    labels = tuple(CountedLabel(i) for i in range(n))
    CountedLabel.comparisons = 0
    game = Probe("actions", 2, labels)
    compiled = compile_game(game)
    assert compiled.num_infosets == 4 and compiled.num_nodes == 3 + 4 + 4 * n
    # one identity-shortcut comparison per label per revisit, no quadratic search
    assert CountedLabel.comparisons < 10 * n
