"""A game written as a nested literal, for tests that need exactly one odd tree.

Nodes::

    ("T", (u0, u1, ...))                      terminal
    ("C", [(label, prob, node), ...])         chance
    ("D", player, key, [(label, node), ...])  decision
"""

from __future__ import annotations

from cfrkit import Game, History


class SpecGame(Game):
    def __init__(self, spec, num_players: int = 2, name: str = "spec") -> None:
        self.spec = spec
        self.num_players = num_players
        self.name = name

    def root(self) -> History:
        return SpecHistory(self.spec, ())


class SpecHistory(History):
    def __init__(self, node, path) -> None:
        self.node = node
        self.path = path

    def is_terminal(self) -> bool:
        return self.node[0] == "T"

    def is_chance(self) -> bool:
        return self.node[0] == "C"

    def current_player(self) -> int:
        return self.node[1]

    def actions(self):
        return tuple(label for label, _ in self.node[3])

    def chance_outcomes(self):
        return tuple((label, prob) for label, prob, _ in self.node[1])

    def child(self, action):
        if self.node[0] == "C":
            branches = {label: node for label, _, node in self.node[1]}
        else:
            branches = dict(self.node[3])
        return SpecHistory(branches[action], self.path + (action,))

    def infoset_key(self) -> str:
        return self.node[2]

    def utilities(self):
        return self.node[1]

    def __repr__(self) -> str:
        return f"SpecHistory{self.path}"


def T(*utilities):
    return ("T", tuple(utilities))


def C(*outcomes):
    return ("C", list(outcomes))


def D(player, key, *branches):
    return ("D", player, key, list(branches))
