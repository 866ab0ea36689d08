"""Random small extensive-form games with hidden information and perfect recall, for tests.

``RandomGame(seed, ...)`` builds a whole game tree up front from a plain integer seed (same seed
and parameters -> same game, on every run and platform), and ``random_games(...)`` is a
hypothesis strategy producing such games. A failing example prints as
``RandomGame(seed=..., num_players=..., max_depth=..., max_nodes=..., zero_sum=...)``, which is
valid Python to rebuild it.

How the games are made
----------------------
Nodes are expanded breadth first. Each node is terminal, chance or a decision of a random
player. Every player keeps a tuple of *observation tokens*:

* chance node, one of three kinds: a private deal (only one player ``j`` sees ``s<v>``), a
  public outcome (everyone sees ``c<v>``), or a hidden outcome (nobody sees it; it only moves
  payoffs and later structure);
* decision of player ``i``: ``i`` always sees its own action ``a<v>``; the others see either the
  action (``o<i>=<v>``), only that ``i`` moved (``t<i>``), or nothing -- fixed per infoset.

A decision node's infoset key is ``f"p{i}:" + ".".join(tokens of i)``. Because the key contains
the player's whole observation sequence, including its own past actions, histories sharing a key
share the player's own (infoset, action) history: perfect recall by construction; the ``p{i}:``
prefix keeps keys of different players apart. The number of actions (1..4) and the visibility
of an infoset are drawn once per key and memoised, so equal keys always have equal actions.
Hidden chance, private deals and hidden actions make infosets with several histories.

Sizes: at most ``max_nodes`` nodes (a node whose children would exceed the budget becomes
terminal), at least 5, and at least one infoset with two or more actions (otherwise the seed is
re-drawn deterministically).
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass
from typing import Hashable

from hypothesis import strategies as st

from cfrkit.game import Game, History

__all__ = ["RandomGame", "RandomHistory", "random_games"]

_TERMINAL, _CHANCE, _DECISION = "terminal", "chance", "decision"

# Weights for the number of actions at an infoset (1..4) and of outcomes at a chance node (1..3).
_ACTION_COUNTS = ((1, 2, 3, 4), (1, 4, 3, 2))
_OUTCOME_COUNTS = ((1, 2, 3), (1, 4, 2))
_MIN_NODES = 5
_MAX_ATTEMPTS = 100


@dataclass(frozen=True)
class _Node:
    kind: str
    path: tuple  # actions / chance outcomes from the root, for messages
    player: int = -1
    key: str = ""
    actions: tuple = ()  # legal actions, or chance outcomes
    probs: tuple = ()  # chance probabilities, aligned with actions
    children: tuple = ()  # node indices, aligned with actions
    utilities: tuple = ()


class RandomGame(Game):
    """A random game, built deterministically from ``seed`` and the size parameters.

    Parameters
    ----------
    seed : int
        Any non-negative int.
    num_players : int
        2 or more (tested with 2 and 3).
    max_depth : int
        No history is longer than this (>= 2).
    max_nodes : int
        Hard cap on the number of nodes (>= 10).
    zero_sum : bool
        Whether each terminal's utilities sum to exactly 0 (the last player's payoff is minus the
        sum of the others'); otherwise utilities are independent uniforms in [-3, 3].

    Useful attributes: ``num_nodes``, ``num_terminals``, ``num_chance_nodes``,
    ``num_decision_nodes``, ``num_infosets``, ``max_infoset_size`` (histories in the largest
    infoset), ``depth`` (longest history), ``attempt`` (how many re-draws were needed).
    """

    def __init__(
        self,
        seed: int,
        num_players: int = 2,
        max_depth: int = 5,
        max_nodes: int = 300,
        zero_sum: bool = False,
    ) -> None:
        if num_players < 1 or max_depth < 2 or max_nodes < 10:
            raise ValueError(
                f"need num_players >= 1, max_depth >= 2, max_nodes >= 10; got "
                f"{num_players}, {max_depth}, {max_nodes}"
            )
        self.seed = int(seed)
        self.num_players = int(num_players)
        self.max_depth = int(max_depth)
        self.max_nodes = int(max_nodes)
        self.zero_sum = bool(zero_sum)
        self.name = (
            f"random(seed={self.seed}, players={self.num_players}, depth<={self.max_depth}, "
            f"nodes<={self.max_nodes}, zero_sum={self.zero_sum})"
        )
        for attempt in range(_MAX_ATTEMPTS):
            nodes = self._generate(attempt)
            if len(nodes) >= _MIN_NODES and any(
                n.kind == _DECISION and len(n.actions) >= 2 for n in nodes
            ):
                break
        self.attempt = attempt
        self._nodes: tuple[_Node, ...] = tuple(nodes)
        self._compute_stats()

    def __repr__(self) -> str:
        return (
            f"RandomGame(seed={self.seed}, num_players={self.num_players}, "
            f"max_depth={self.max_depth}, max_nodes={self.max_nodes}, zero_sum={self.zero_sum})"
        )

    def root(self) -> RandomHistory:
        return RandomHistory(self, 0)

    # -- generation -----------------------------------------------------------------------

    def _generate(self, attempt: int) -> list[_Node]:
        # Seeding with a str is stable across runs and Python versions (sha512 of the string).
        rng = random.Random(f"cfrkit-random-game/{self.seed}/{attempt}")
        n = self.num_players
        chance_rate = rng.uniform(0.15, 0.45)  # how often an inner node is chance
        stop_rate = rng.uniform(0.05, 0.45)  # how often an inner node (depth >= 1) ends the game
        action_count: dict[str, int] = {}  # memoised per infoset key
        visibility: dict[str, str] = {}  # memoised per infoset key

        nodes: list[_Node | None] = [None]
        # queue entries: (node index, path, tokens per player)
        queue = [(0, (), tuple(() for _ in range(n)))]
        head = 0
        while head < len(queue):
            index, path, tokens = queue[head]
            head += 1
            depth = len(path)

            if depth >= self.max_depth or (depth >= 1 and rng.random() < stop_rate):
                kind = _TERMINAL
            elif rng.random() < (0.6 if depth == 0 else chance_rate):
                kind = _CHANCE
            else:
                kind = _DECISION

            if kind == _CHANCE:
                count = rng.choices(*_OUTCOME_COUNTS)[0]
            elif kind == _DECISION:
                player = rng.randrange(n)
                key = f"p{player}:" + ".".join(tokens[player])
                if key not in action_count:
                    action_count[key] = rng.choices(*_ACTION_COUNTS)[0]
                    visibility[key] = rng.choices(("public", "timing", "hidden"), (3, 1, 4))[0]
                count = action_count[key]
            if kind != _TERMINAL and len(nodes) + count > self.max_nodes:
                kind = _TERMINAL  # over budget: cut the tree here

            if kind == _TERMINAL:
                nodes[index] = _Node(_TERMINAL, path, utilities=self._utilities(rng))
                continue

            labels = tuple(range(count))
            children = tuple(range(len(nodes), len(nodes) + count))
            nodes.extend([None] * count)
            if kind == _CHANCE:
                how = rng.choices(("private", "public", "hidden"), (9, 8, 3))[0]
                seer = rng.randrange(n)
                for label, child in zip(labels, children):
                    if how == "public":
                        child_tokens = tuple(t + (f"c{label}",) for t in tokens)
                    elif how == "private":
                        child_tokens = tuple(
                            t + (f"s{label}",) if q == seer else t for q, t in enumerate(tokens)
                        )
                    else:
                        child_tokens = tokens
                    queue.append((child, path + (label,), child_tokens))
                nodes[index] = _Node(
                    _CHANCE, path, actions=labels, probs=self._probabilities(rng, count),
                    children=children,
                )
            else:
                seen = visibility[key]
                for label, child in zip(labels, children):
                    child_tokens = []
                    for q, t in enumerate(tokens):
                        if q == player:
                            t = t + (f"a{label}",)
                        elif seen == "public":
                            t = t + (f"o{player}={label}",)
                        elif seen == "timing":
                            t = t + (f"t{player}",)
                        child_tokens.append(t)
                    queue.append((child, path + (label,), tuple(child_tokens)))
                nodes[index] = _Node(
                    _DECISION, path, player=player, key=key, actions=labels, children=children
                )
        return nodes

    def _utilities(self, rng: random.Random) -> tuple[float, ...]:
        values = [rng.uniform(-3.0, 3.0) for _ in range(self.num_players)]
        if self.zero_sum:
            values[-1] = -sum(values[:-1])  # left-to-right sum is then exactly 0.0
        return tuple(values)

    @staticmethod
    def _probabilities(rng: random.Random, count: int) -> tuple[float, ...]:
        if count == 1:
            return (1.0,)
        weights = [rng.uniform(0.1, 1.0) for _ in range(count)]
        total = sum(weights)
        probs = [w / total for w in weights[:-1]]
        probs.append(1.0 - sum(probs))  # > 0 since every weight is >= 0.1 / (sum <= 3)
        return tuple(probs)

    def _compute_stats(self) -> None:
        nodes = self._nodes
        sizes: dict[str, int] = {}
        for node in nodes:
            if node.kind == _DECISION:
                sizes[node.key] = sizes.get(node.key, 0) + 1
        self.num_nodes = len(nodes)
        self.num_terminals = sum(node.kind == _TERMINAL for node in nodes)
        self.num_chance_nodes = sum(node.kind == _CHANCE for node in nodes)
        self.num_decision_nodes = sum(node.kind == _DECISION for node in nodes)
        self.num_infosets = len(sizes)
        self.max_infoset_size = max(sizes.values(), default=0)
        self.depth = max(len(node.path) for node in nodes)

    def describe(self) -> str:
        """A readable dump of the whole tree (one line per node), for debugging failures."""
        lines = [repr(self)]

        def show(index: int, indent: str) -> None:
            node = self._nodes[index]
            if node.kind == _TERMINAL:
                lines.append(f"{indent}T {tuple(round(u, 4) for u in node.utilities)}")
                return
            if node.kind == _CHANCE:
                lines.append(f"{indent}C {tuple(round(p, 4) for p in node.probs)}")
            else:
                lines.append(f"{indent}P{node.player} {node.key!r}")
            for label, child in zip(node.actions, node.children):
                lines.append(f"{indent}  -{label}->")
                show(child, indent + "    ")

        show(0, "")
        return "\n".join(lines)


@dataclass(frozen=True, eq=False)
class RandomHistory(History):
    """An immutable position in a :class:`RandomGame` (a node index into its frozen tree)."""

    game: RandomGame
    index: int

    @property
    def _node(self) -> _Node:
        return self.game._nodes[self.index]

    @property
    def path(self) -> tuple:
        """The actions and chance outcomes from the root to here."""
        return self._node.path

    def __repr__(self) -> str:
        return f"RandomHistory(seed={self.game.seed}, path={self.path!r})"

    def _require(self, kind: str, what: str) -> _Node:
        node = self._node
        if node.kind != kind:
            raise ValueError(f"{what}() called at a {node.kind} node: {self!r}")
        return node

    def is_terminal(self) -> bool:
        return self._node.kind == _TERMINAL

    def is_chance(self) -> bool:
        return self._node.kind == _CHANCE

    def current_player(self) -> int:
        return self._require(_DECISION, "current_player").player

    def actions(self) -> tuple[Hashable, ...]:
        return self._require(_DECISION, "actions").actions

    def chance_outcomes(self) -> tuple[tuple[Hashable, float], ...]:
        node = self._require(_CHANCE, "chance_outcomes")
        return tuple(zip(node.actions, node.probs))

    def infoset_key(self) -> str:
        return self._require(_DECISION, "infoset_key").key

    def utilities(self) -> tuple[float, ...]:
        return self._require(_TERMINAL, "utilities").utilities

    def child(self, action: Hashable) -> RandomHistory:
        node = self._node
        if node.kind == _TERMINAL:
            raise ValueError(f"child() called at a terminal node: {self!r}")
        try:
            position = node.actions.index(action)
        except ValueError:
            raise ValueError(f"{action!r} is not legal at {self!r}") from None
        return RandomHistory(self.game, node.children[position])


@st.composite
def random_games(
    draw,
    min_players: int = 2,
    max_players: int = 3,
    zero_sum: bool | None = None,
    min_depth: int = 2,
    max_depth: int = 6,
    max_nodes: int = 300,
) -> RandomGame:
    """Hypothesis strategy for :class:`RandomGame` instances.

    ``zero_sum=None`` lets hypothesis choose; ``True`` / ``False`` forces it. The depth cap is
    drawn from ``min_depth..max_depth`` and the node cap is ``max_nodes``. Shrinks towards seed
    0, fewer players and shallower games.
    """
    num_players = draw(st.integers(min_players, max_players), label="num_players")
    depth = draw(st.integers(min_depth, max_depth), label="max_depth")
    zs = draw(st.booleans(), label="zero_sum") if zero_sum is None else zero_sum
    seed = draw(st.integers(0, 2**32 - 1), label="seed")
    return RandomGame(seed, num_players=num_players, max_depth=depth, max_nodes=max_nodes,
                      zero_sum=zs)


def random_policy(game, seed: int, pure_share: float = 0.3):
    """A random :class:`cfrkit.Policy` for ``game`` (native, compiled or OpenSpiel).

    Rows are normalised exponential draws at full precision, so a lossy round trip or a wrong
    weighting shows; a ``pure_share`` of the rows are pure, so zero-reach subtrees occur.
    """
    import numpy as np

    from cfrkit import Policy, compile_game

    compiled = compile_game(game)
    rng = np.random.default_rng(seed)
    rows = {}
    for key, info in compiled.infosets.items():
        weights = rng.exponential(size=len(info.actions))
        if rng.random() < pure_share:
            weights = np.eye(len(info.actions))[rng.integers(len(info.actions))]
        rows[key] = list(weights / weights.sum())
    return Policy.from_dict(compiled, rows)


def _self_test(count: int = 300) -> None:
    """Build many games and check the promised properties; prints a short size summary."""
    from reference import check_perfect_recall, infosets

    sizes, multi, by_players = [], 0, {}
    for seed in range(count):
        n = 2 + seed % 2
        game = RandomGame(seed, num_players=n, max_depth=2 + seed % 5, zero_sum=bool(seed % 3))
        again = RandomGame(seed, num_players=n, max_depth=2 + seed % 5, zero_sum=bool(seed % 3))
        if again.describe() != game.describe():
            raise AssertionError(f"{game!r} is not deterministic")
        if not _MIN_NODES <= game.num_nodes <= game.max_nodes:
            raise AssertionError(f"{game!r} has {game.num_nodes} nodes")
        table = infosets(game)  # raises if a key has two players or action tuples
        for key, (player, actions) in table.items():
            if not key.startswith(f"p{player}:") or not 1 <= len(actions) <= 4:
                raise AssertionError(f"{game!r}: bad infoset {key!r} {player} {actions}")
        check_perfect_recall(game)
        for node in game._nodes:
            if node.kind == _CHANCE:
                if not (all(p > 0 for p in node.probs) and abs(math.fsum(node.probs) - 1) < 1e-15):
                    raise AssertionError(f"{game!r}: probabilities {node.probs}")
            if node.kind == _TERMINAL:
                u = node.utilities
                if len(u) != n or not all(math.isfinite(x) for x in u):
                    raise AssertionError(f"{game!r}: utilities {u}")
                if game.zero_sum and sum(u) != 0.0:
                    raise AssertionError(f"{game!r}: not zero-sum {u}")
        sizes.append(game.num_nodes)
        multi += game.max_infoset_size > 1
        by_players[n] = by_players.get(n, 0) + 1
    sizes.sort()
    print(
        f"{count} games OK; nodes min/median/max = {sizes[0]}/{sizes[len(sizes) // 2]}/"
        f"{sizes[-1]}; with a multi-history infoset: {multi}; by players: {by_players}"
    )


if __name__ == "__main__":
    _self_test()
