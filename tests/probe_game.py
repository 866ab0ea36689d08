"""A small game whose History methods can be made to misbehave, for the bad-input tests.

The tree: chance tosses a coin (``h``/``t``, 1/2 each); player 0, who sees it, picks ``a`` or
``b`` (infoset ``"k" + coin``); player 1, who sees only player 0's action, picks ``x`` or ``y``
(infoset ``"m" + action``); then the game ends with payoffs ``(w, -w)``, ``w = +-1``.

``Probe(method, depth, value=..., raise_=...)`` makes ``method`` return ``value`` (or, if
``value`` is callable, what it returns: a fresh generator each time, say) or raise ``raise_``,
at every history of that depth (0 = the root; ``None`` = every depth).
"""

from __future__ import annotations

from typing import Any

import cfrkit

DEPTH = {"chance": 0, "player0": 1, "player1": 2, "terminal": 3}
_UNSET = object()


class Probe(cfrkit.Game):
    num_players = 2
    name = "probe"

    def __init__(self, method: str | None = None, depth: int | None = None,
                 value: Any = _UNSET, raise_: BaseException | None = None) -> None:
        self.method, self.depth, self.value, self.raise_ = method, depth, value, raise_

    def hook(self, method: str, depth: int | None, normal: Any) -> Any:
        if self.method == method and (self.depth is None or self.depth == depth):
            if self.raise_ is not None:
                raise self.raise_
            if self.value is not _UNSET:
                return self.value() if callable(self.value) else self.value
        return normal

    def root(self) -> cfrkit.History:
        return self.hook("root", None, ProbeHistory(self, ()))


class ProbeHistory(cfrkit.History):
    def __init__(self, game: Probe, path: tuple) -> None:
        self.game, self.path = game, path

    def _hook(self, method: str, normal: Any) -> Any:
        return self.game.hook(method, len(self.path), normal)

    def is_terminal(self):
        return self._hook("is_terminal", len(self.path) == 3)

    def is_chance(self):
        return self._hook("is_chance", len(self.path) == 0)

    def current_player(self):
        return self._hook("current_player", len(self.path) - 1)

    def actions(self):
        return self._hook("actions", ("a", "b") if len(self.path) == 1 else ("x", "y"))

    def chance_outcomes(self):
        return self._hook("chance_outcomes", (("h", 0.5), ("t", 0.5)))

    def child(self, action):
        return self._hook("child", ProbeHistory(self.game, self.path + (action,)))

    def infoset_key(self):
        key = "k" + self.path[0] if len(self.path) == 1 else "m" + self.path[1]
        return self._hook("infoset_key", key)

    def utilities(self):
        win = 1.0 if (self.path[0] == "h") == (self.path[1] == "a") else -1.0
        return self._hook("utilities", (win, -win))

    def __repr__(self) -> str:
        return f"ProbeHistory{self.path}"
