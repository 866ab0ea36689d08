"""A slow, obviously-correct pure-Python oracle for CFR, expected values and best response.

Only the abstract :class:`cfrkit.game.Game` / :class:`cfrkit.game.History` API is used: every
function here walks the game tree directly with plain recursion and dicts, so it shares no code
(and no bugs) with the compiled trees and numba kernels it is meant to check.

Conventions are those of OpenSpiel's python ``CFRSolver`` (``open_spiel/python/algorithms/cfr.py``)
so results can be compared number for number:

* regret matching: proportional to positive cumulative regret, uniform when none is positive;
* alternating updates by default, players ``0..n-1`` in order, each player's current strategy
  refreshed right after its own pass;
* the average strategy is weighted by the acting player's own reach probability.

One deliberate difference (asked for by the design): ``strategy_sum`` is incremented **once per
infoset per pass**, whereas OpenSpiel adds ``reach * sigma`` once per *history* of the infoset.
Under perfect recall every history of an infoset has the same own reach, so OpenSpiel's row is
exactly ``len(histories in I)`` times ours and the normalised average strategies are identical.

A *policy* everywhere in this module is ``dict[infoset_key, dict[action, probability]]``; an
action missing from a row has probability 0, a missing infoset row is an error (``KeyError``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Hashable

from cfrkit.game import Game, History

__all__ = [
    "CFRResult",
    "check_perfect_recall",
    "infosets",
    "reference_best_response",
    "reference_cfr",
    "reference_expected_values",
    "reference_nash_conv",
    "regret_matching",
    "uniform_policy",
]

Policy = dict[str, dict[Hashable, float]]


# --------------------------------------------------------------------------------------------
# Tree helpers
# --------------------------------------------------------------------------------------------


def infosets(game: Game) -> dict[str, tuple[int, tuple[Hashable, ...]]]:
    """Every infoset of the game: ``key -> (player, actions)``, in depth-first first-visit order.

    Walks the whole tree (chance outcomes and actions in the order the game lists them).
    Raises ``ValueError`` if one key is reached with two different players or action tuples.
    """
    found: dict[str, tuple[int, tuple[Hashable, ...]]] = {}

    def walk(h: History) -> None:
        if h.is_terminal():
            return
        if h.is_chance():
            for outcome, _prob in h.chance_outcomes():
                walk(h.child(outcome))
            return
        key = h.infoset_key()
        entry = (h.current_player(), tuple(h.actions()))
        if key in found and found[key] != entry:
            raise ValueError(
                f"infoset {key!r} reached as {entry!r} and earlier as {found[key]!r} ({h!r})"
            )
        found[key] = entry
        for action in entry[1]:
            walk(h.child(action))

    walk(game.root())
    return found


def uniform_policy(game: Game) -> Policy:
    """The uniform random policy: every legal action of every infoset gets ``1 / len(actions)``."""
    return {
        key: {a: 1.0 / len(actions) for a in actions}
        for key, (_player, actions) in infosets(game).items()
    }


def check_perfect_recall(game: Game) -> None:
    """Raise ``ValueError`` unless the game has perfect recall.

    Perfect recall: all histories of one infoset have the same sequence of the acting player's
    own ``(infoset key, action)`` pairs on the path from the root (so in particular a player
    never meets the same infoset twice on one path).
    """
    seen: dict[str, tuple] = {}

    def walk(h: History, own: tuple[tuple, ...]) -> None:
        # own[p] is player p's sequence of (key, action) pairs so far.
        if h.is_terminal():
            return
        if h.is_chance():
            for outcome, _prob in h.chance_outcomes():
                walk(h.child(outcome), own)
            return
        p = h.current_player()
        key = h.infoset_key()
        if key in seen and seen[key] != own[p]:
            raise ValueError(
                f"imperfect recall at infoset {key!r}: own history {own[p]!r} "
                f"here ({h!r}) but {seen[key]!r} elsewhere"
            )
        seen[key] = own[p]
        if any(k == key for k, _a in own[p]):
            raise ValueError(f"infoset {key!r} visited twice on one path ({h!r})")
        for action in h.actions():
            extended = tuple(
                seq + ((key, action),) if q == p else seq for q, seq in enumerate(own)
            )
            walk(h.child(action), extended)

    walk(game.root(), tuple(() for _ in range(game.num_players)))


def regret_matching(row: dict[Hashable, float], actions: tuple[Hashable, ...]) -> dict:
    """Strategy proportional to positive regret; uniform when no regret is positive.

    Same arithmetic as OpenSpiel's ``_regret_matching``: the positive regrets are summed in the
    row's order, then each positive regret is divided by that sum.
    """
    total = sum(r for r in row.values() if r > 0)
    if total > 0:
        return {a: max(0.0, row[a]) / total for a in actions}
    return {a: 1.0 / len(actions) for a in actions}


def _row_prob(policy: Policy, key: str, action: Hashable) -> float:
    try:
        row = policy[key]
    except KeyError:
        raise KeyError(f"policy has no row for infoset {key!r}") from None
    return float(row.get(action, 0.0))


# --------------------------------------------------------------------------------------------
# CFR
# --------------------------------------------------------------------------------------------


@dataclass
class CFRResult:
    """The state of :func:`reference_cfr` after its last iteration.

    All tables are ``dict[infoset_key, dict[action, float]]`` with every infoset of the game and
    every legal action (in the game's action order).

    Attributes
    ----------
    regrets : cumulative counterfactual regrets.
    strategy_sum : cumulative own-reach-weighted strategies (once per infoset per iteration; for
        ``linear_averaging`` each term is also multiplied by the 1-based iteration number).
    current : the current (regret-matching) strategy after the last iteration, i.e. the one the
        next iteration would use.
    iterations : how many iterations were run.
    """

    regrets: dict[str, dict[Hashable, float]]
    strategy_sum: dict[str, dict[Hashable, float]]
    current: dict[str, dict[Hashable, float]]
    iterations: int = 0
    alternating: bool = True
    players: dict[str, int] = field(default_factory=dict)

    @property
    def average(self) -> dict[str, dict[Hashable, float]]:
        """The average strategy: ``strategy_sum`` normalised per infoset (uniform if the row sum is
        0). A fresh dict on every access."""
        return self.average_policy()

    def average_policy(self) -> dict[str, dict[Hashable, float]]:
        """Same as :attr:`average` (OpenSpiel's name); a fresh dict on every call."""
        out = {}
        for key, row in self.strategy_sum.items():
            total = sum(row.values())
            if total == 0.0:
                out[key] = {a: 1.0 / len(row) for a in row}
            else:
                out[key] = {a: s / total for a, s in row.items()}
        return out

    def current_policy(self) -> dict[str, dict[Hashable, float]]:
        """A fresh copy of :attr:`current`."""
        return {key: dict(row) for key, row in self.current.items()}


def reference_cfr(
    game: Game,
    iterations: int,
    alternating: bool = True,
    *,
    regret_matching_plus: bool = False,
    linear_averaging: bool = False,
) -> CFRResult:
    """Run vanilla CFR for ``iterations`` full-tree iterations, exactly as OpenSpiel's CFRSolver.

    With ``alternating=True`` each iteration makes one pass per player ``p = 0..n-1``: walk the
    whole tree with everyone's current strategy; at every history ``h`` of player ``p`` in infoset
    ``I`` add ``cf_reach(h) * (v_p(h.a) - v_p(h))`` to ``regrets[I][a]`` and (once per infoset per
    pass) ``own_reach(I) * sigma_I(a)`` to ``strategy_sum[I][a]``; then refresh ``p``'s current
    strategy by regret matching before the next player's pass. With ``alternating=False`` one pass
    updates every player from the same profile, then all strategies are refreshed.

    ``cf_reach(h)`` is the product of the other players' and chance's probabilities on the path
    (computed like OpenSpiel: ``prod(reach[:p]) * prod(reach[p+1:])`` with chance last).

    The keyword-only options reproduce OpenSpiel's CFR+ ingredients (``CFRPlusSolver`` is
    ``alternating=True, regret_matching_plus=True, linear_averaging=True``):
    ``regret_matching_plus`` clamps cumulative regrets at 0 after each pass (before the strategy
    refresh); ``linear_averaging`` weights the strategy-sum terms of iteration ``t`` (1-based) by
    ``t``.
    """
    if not isinstance(iterations, int) or iterations < 0:
        raise ValueError(f"iterations must be a non-negative int, got {iterations!r}")
    n = game.num_players
    table = infosets(game)
    regrets = {key: {a: 0.0 for a in actions} for key, (_p, actions) in table.items()}
    strategy_sum = {key: {a: 0.0 for a in actions} for key, (_p, actions) in table.items()}
    current = {key: regret_matching(regrets[key], actions) for key, (_p, actions) in table.items()}

    def walk(h: History, reach: tuple[float, ...], updating: frozenset, weight: float,
             own_reach_seen: dict[str, float]) -> list[float]:
        """Expected utilities (one per player) below ``h`` under ``current``; accumulates the
        regrets / strategy sums of the players in ``updating`` on the way back up.

        ``reach[i]`` is player i's own reach probability, ``reach[n]`` chance's."""
        if h.is_terminal():
            return [float(u) for u in h.utilities()]

        if h.is_chance():
            value = [0.0] * n
            for outcome, prob in h.chance_outcomes():
                child_reach = reach[:n] + (reach[n] * prob,)
                child_value = walk(h.child(outcome), child_reach, updating, weight,
                                   own_reach_seen)
                value = [v + prob * c for v, c in zip(value, child_value)]
            return value

        p = h.current_player()
        key = h.infoset_key()
        sigma = current[key]
        value = [0.0] * n
        child_values = {}
        for action in h.actions():
            prob = sigma[action]
            child_reach = reach[:p] + (reach[p] * prob,) + reach[p + 1:]
            child_value = walk(h.child(action), child_reach, updating, weight, own_reach_seen)
            child_values[action] = child_value
            value = [v + prob * c for v, c in zip(value, child_value)]

        if p in updating:
            cf_reach = math.prod(reach[:p]) * math.prod(reach[p + 1:])
            for action in h.actions():
                regrets[key][action] += cf_reach * (child_values[action][p] - value[p])
            own_reach = reach[p]
            if key not in own_reach_seen:
                own_reach_seen[key] = own_reach
                for action in h.actions():
                    strategy_sum[key][action] += weight * own_reach * sigma[action]
            elif own_reach_seen[key] != own_reach:
                raise ValueError(
                    f"infoset {key!r}: own reach {own_reach!r} here ({h!r}) but "
                    f"{own_reach_seen[key]!r} at another history (imperfect recall?)"
                )
        return value

    def refresh(players: frozenset) -> None:
        for key, (p, actions) in table.items():
            if p in players:
                if regret_matching_plus:
                    for a in actions:
                        regrets[key][a] = max(regrets[key][a], 0.0)
                current[key] = regret_matching(regrets[key], actions)

    root_reach = (1.0,) * (n + 1)
    for t in range(1, iterations + 1):
        weight = float(t) if linear_averaging else 1.0
        if alternating:
            for p in range(n):
                walk(game.root(), root_reach, frozenset([p]), weight, {})
                refresh(frozenset([p]))
        else:
            everyone = frozenset(range(n))
            walk(game.root(), root_reach, everyone, weight, {})
            refresh(everyone)

    return CFRResult(
        regrets=regrets,
        strategy_sum=strategy_sum,
        current=current,
        iterations=iterations,
        alternating=alternating,
        players={key: p for key, (p, _actions) in table.items()},
    )


# --------------------------------------------------------------------------------------------
# Evaluation
# --------------------------------------------------------------------------------------------


def reference_expected_values(game: Game, policy: Policy) -> list[float]:
    """Each player's expected utility when everyone plays ``policy`` (one float per player)."""
    n = game.num_players

    def value(h: History) -> list[float]:
        if h.is_terminal():
            return [float(u) for u in h.utilities()]
        total = [0.0] * n
        if h.is_chance():
            branches = list(h.chance_outcomes())
        else:
            key = h.infoset_key()
            branches = [(a, _row_prob(policy, key, a)) for a in h.actions()]
        for action, prob in branches:
            child = value(h.child(action))
            total = [t + prob * c for t, c in zip(total, child)]
        return total

    return value(game.root())


def reference_best_response(
    game: Game, policy: Policy, player: int, *, tie_tolerance: float = 0.0
) -> tuple[float, dict[str, Hashable]]:
    """``player``'s best-response value against the others playing ``policy``, and a pure BR.

    Textbook method (as OpenSpiel's ``BestResponsePolicy``): for every infoset ``I`` of
    ``player`` collect its histories ``h`` with their counterfactual reach ``cf(h)`` (chance and
    other players' probabilities on the path). The value of action ``a`` at ``I`` is
    ``sum_h cf(h) * v(h.a)``, where below ``h.a`` ``player`` keeps best-responding (memoised per
    infoset) and everyone else plays ``policy``. ``policy``'s rows for ``player``'s own infosets
    are never read.

    Tie rule: the BR action is the FIRST action, in the game's action order, whose value is
    ``>= max_value - tie_tolerance`` (default 0: the first action attaining the exact maximum,
    which is what Python's ``max`` does in OpenSpiel). Infosets whose histories all have zero
    counterfactual reach have all action values 0 and so get their first action. The returned
    dict covers every infoset of ``player``, reachable or not.
    """
    if not 0 <= player < game.num_players:
        raise ValueError(f"player must be in 0..{game.num_players - 1}, got {player!r}")

    # 1. Histories of each of player's infosets, with counterfactual reach, in DFS order.
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
                collect(h.child(action), cf * _row_prob(policy, key, action))

    collect(game.root(), 1.0)

    # 2. Values with player best-responding below, memoised BR action per infoset.
    best: dict[str, Hashable] = {}

    def value(h: History) -> float:
        if h.is_terminal():
            return float(h.utilities()[player])
        if h.is_chance():
            return sum(prob * value(h.child(outcome)) for outcome, prob in h.chance_outcomes())
        key = h.infoset_key()
        if h.current_player() == player:
            return value(h.child(best_action(key)))
        return sum(_row_prob(policy, key, a) * value(h.child(a)) for a in h.actions())

    def best_action(key: str) -> Hashable:
        if key not in best:
            action_values = [
                (a, sum(cf * value(h.child(a)) for h, cf in groups[key]))
                for a in actions_of[key]
            ]
            top = max(v for _a, v in action_values)
            best[key] = next(a for a, v in action_values if v >= top - tie_tolerance)
        return best[key]

    root_value = value(game.root())
    for key in groups:  # also the infosets the BR itself never reaches
        best_action(key)
    return root_value, {key: best[key] for key in groups}


def reference_nash_conv(game: Game, policy: Policy) -> float:
    """NashConv: ``sum_p (best-response value_p - on-policy value_p)``; 0 exactly at a Nash
    equilibrium, >= 0 (up to rounding) always."""
    on_policy = reference_expected_values(game, policy)
    return sum(
        reference_best_response(game, policy, p)[0] - on_policy[p]
        for p in range(game.num_players)
    )
