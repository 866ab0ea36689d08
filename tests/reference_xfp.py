"""A slow recursive oracle for extensive-form fictitious play (XFP) on the abstract Game API.

It shares nothing with cfrkit's compiled trees and kernels, nor with the update formula they
use. The average is kept in the *sequence form*: for every own sequence ``(infoset, action)``
of a player, the realization-plan sum

    X(u, a) = x_uniform(sigma_u a) + sum_{t=1..T} x_beta_t(sigma_u a)

(``x_beta(sigma_u a)`` is 1 when the pure response ``beta`` plays every own action on the way
to ``u`` and ``a`` at ``u``, else 0), read as the behavioural strategy
``X(u, a) / sum_b X(u, b)``. That is the uniform mixture of the uniform strategy and the T best
responses, which is what XFP's step ``1/(t+1)`` produces (Heinrich, Lanctot and Silver 2015,
Theorem 7 and Algorithm 1) -- here without using that step.

Best responses are recursive, as :func:`reference.reference_best_response`: the value of action
``a`` at infoset ``I`` is ``q(I, a) = sum_{h in I} cf(h) v(h a)``, with ``cf`` the chance and
other players' reach and ``v`` the responder's value with the response played below. Fictitious
play meets mathematically tied actions often (Kuhn poker at most iterations); any float
implementation then picks among them by rounding. So :meth:`ReferenceXFP.iterate` can *follow*
another implementation's choices: each is checked to be a best response (its ``q`` within
``tolerance`` of the best, relative to ``max(1, |best|)``) and then used, so both stay on one
trajectory; a choice that is not a best response raises ``AssertionError``. Without ``follow``
the first action within the tolerance is taken.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping

from cfrkit.game import Game, History
from reference import infosets

__all__ = ["ReferenceXFP", "best_response_choices"]

Policy = dict[str, dict[Hashable, float]]


def best_response_choices(
    game: Game,
    policy: Policy,
    player: int,
    *,
    follow: Mapping[str, Hashable] | None = None,
    tolerance: float = 1e-10,
) -> tuple[dict[str, Hashable], int]:
    """``player``'s pure best response to ``policy`` at every one of its infosets, and how many
    of those infosets had two or more actions within ``tolerance`` of the best."""
    groups: dict[str, list[tuple[History, float]]] = {}
    actions_of: dict[str, tuple[Hashable, ...]] = {}

    def collect(h: History, cf: float) -> None:
        if h.is_terminal():
            return
        if h.is_chance():
            for outcome, prob in h.chance_outcomes():
                collect(h.child(outcome), cf * prob)
            return
        key = h.infoset_key()
        if h.current_player() == player:
            groups.setdefault(key, []).append((h, cf))
            actions_of[key] = tuple(h.actions())
            for action in h.actions():
                collect(h.child(action), cf)
        else:
            for action in h.actions():
                collect(h.child(action), cf * policy[key][action])

    collect(game.root(), 1.0)
    best: dict[str, Hashable] = {}
    ties = 0

    def value(h: History) -> float:
        if h.is_terminal():
            return float(h.utilities()[player])
        if h.is_chance():
            return sum(p * value(h.child(o)) for o, p in h.chance_outcomes())
        key = h.infoset_key()
        if h.current_player() == player:
            return value(h.child(best_action(key)))
        return sum(policy[key][a] * value(h.child(a)) for a in h.actions())

    def best_action(key: str) -> Hashable:
        nonlocal ties
        if key not in best:
            actions = actions_of[key]
            q = [sum(cf * value(h.child(a)) for h, cf in groups[key]) for a in actions]
            top = max(q)
            close = [a for a, v in zip(actions, q) if v >= top - tolerance * max(1.0, abs(top))]
            ties += len(close) > 1
            if follow is None:
                best[key] = close[0]
            else:
                chosen = follow[key]
                if chosen not in close:
                    raise AssertionError(
                        f"player {player} plays {chosen!r} at {key!r}, not a best response: "
                        f"values {dict(zip(actions, q))}"
                    )
                best[key] = chosen
        return best[key]

    value(game.root())
    for key in groups:  # also the infosets the response itself never reaches
        best_action(key)
    return best, ties


class ReferenceXFP:
    """XFP from the uniform profile, the average held as realization-plan sums."""

    def __init__(self, game: Game, *, tolerance: float = 1e-10) -> None:
        self.game = game
        self.tolerance = tolerance
        self.infosets = infosets(game)  # key -> (player, actions)
        # each infoset's own previous (infoset, action) of its player, None at the first
        self.previous: dict[str, tuple[str, Hashable] | None] = {}

        def walk(h: History, last: tuple) -> None:
            if h.is_terminal():
                return
            if h.is_chance():
                for outcome, _p in h.chance_outcomes():
                    walk(h.child(outcome), last)
                return
            p, key = h.current_player(), h.infoset_key()
            self.previous[key] = last[p]
            for action in h.actions():
                walk(h.child(action), last[:p] + ((key, action),) + last[p + 1:])

        walk(game.root(), (None,) * game.num_players)
        self.weights = {}
        for key, (_player, actions) in self.infosets.items():
            reach = 1.0  # the uniform strategy's own realization probability of sigma_u
            link = self.previous[key]
            while link is not None:
                reach /= len(self.infosets[link[0]][1])
                link = self.previous[link[0]]
            self.weights[key] = {a: reach / len(actions) for a in actions}
        self.iteration = 0
        self.ties = 0  # infosets met with near-tied best actions, over all iterations

    def policy(self) -> Policy:
        """The behavioural average: each row of realization weights, normalised."""
        return {
            key: {a: w / sum(row.values()) for a, w in row.items()}
            for key, row in self.weights.items()
        }

    def iterate(self, follow: Mapping[str, Hashable] | None = None) -> dict[str, Hashable]:
        """One iteration; returns the best responses it mixed in (every infoset's action)."""
        policy = self.policy()
        responses: dict[str, Hashable] = {}
        for player in range(self.game.num_players):
            chosen, ties = best_response_choices(
                self.game, policy, player, follow=follow, tolerance=self.tolerance
            )
            responses.update(chosen)
            self.ties += ties
        for key in self.infosets:
            if self._reached(key, responses):
                self.weights[key][responses[key]] += 1.0
        self.iteration += 1
        return responses

    def _reached(self, key: str, responses: Mapping[str, Hashable]) -> bool:
        """Whether the response plays every own action on the way to ``key``."""
        link = self.previous[key]
        while link is not None:
            if responses[link[0]] != link[1]:
                return False
            link = self.previous[link[0]]
        return True
