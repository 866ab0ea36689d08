"""A slow, obviously-correct pure-Python oracle for CFR, expected values and best response.

Only the abstract :class:`cfrkit.game.Game` / :class:`cfrkit.game.History` API is used: every
function here walks the game tree directly with plain recursion and dicts, so it shares no code
(and no bugs) with the compiled trees and numba kernels it is meant to check.

Conventions are those of OpenSpiel's python ``CFRSolver`` (``open_spiel/python/algorithms/cfr.py``)
so results can be compared number for number:

* regret matching: proportional to positive cumulative regret, uniform when none is positive;
* alternating updates by default, players ``0..n-1`` in order, each player's current strategy
  refreshed right after its own pass;
* the average strategy is weighted by the acting player's own reach probability, and the
  strategy averaged at iteration ``t`` is the one *played* at ``t``.

One deliberate difference (asked for by the design): in a full pass ``strategy_sum`` is
incremented **once per infoset per pass**, whereas OpenSpiel adds ``reach * sigma`` once per
*history* of the infoset. Under perfect recall every history of an infoset has the same own
reach, so OpenSpiel's row is exactly ``len(histories in I)`` times ours and the normalised
average strategies are identical. (A chance-sampled pass adds once per *visited history*.)

The regret rules (vanilla, CFR+, linear, discounted, predictive, ...) are one parametrised
update, :class:`OracleRule`, applied eagerly after each pass by :class:`ReferenceCFR`; chance
sampling replays outcomes chosen by the caller (:meth:`ReferenceCFR.iterate_sampled`).

A *policy* everywhere in this module is ``dict[infoset_key, dict[action, probability]]``; an
action missing from a row has probability 0, a missing infoset row is an error (``KeyError``).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Hashable

from cfrkit.game import Game, History

__all__ = [
    "CFRResult",
    "ORACLE_RULES",
    "OracleRule",
    "PassResult",
    "ReferenceCFR",
    "check_perfect_recall",
    "infosets",
    "read_rule",
    "reference_best_response",
    "reference_cfr",
    "reference_expected_values",
    "reference_nash_conv",
    "regret_matching",
    "regret_pass",
    "uniform_policy",
]

Policy = dict[str, dict[Hashable, float]]
ChancePath = tuple[Hashable, ...]
ChanceSample = Mapping[ChancePath, Hashable]


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
# Regret rules
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class OracleRule:
    """How cumulative regrets and the average strategy change after a pass.

    The same five fields as ``cfrkit.RegretRule``; :func:`read_rule` accepts either (or any
    object with these attributes). At iteration ``t`` (1-based), for every infoset ``I`` of the
    updated player and every action ``a``, with ``r`` the pass's instantaneous regret::

        x = R(I,a) + r(I,a)
        if floor:      x = max(x, 0)                       # CFR+ (Tammelin 2014)
        x *= dpos(t) if x > 0 else dneg(t)                 # DCFR (Brown & Sandholm 2019)
        R(I,a) = x
        if predictive: m(I,a) = r(I,a)                     # PCFR+ (Farina, Kroer & Sandholm 2021)
        S(I,a) += w(t) * own_reach * sigma_t(I,a)

    with ``dpos(t) = t**alpha / (t**alpha + 1)`` (1 when ``alpha`` is None), ``dneg`` likewise
    with ``beta``, and ``w(t) = t**gamma``. The next strategy is regret matching on ``R + m``
    if ``predictive`` else on ``R``.

    Attributes
    ----------
    floor : bool
        Clamp cumulative regrets at 0 after adding (regret matching+).
    alpha, beta : float or None
        Discount exponents of positive / non-positive cumulative regrets; None: no discount.
    gamma : float
        Exponent of the average-strategy weight ``t**gamma`` (0: uniform, 1: linear).
    predictive : bool
        Regret matching on ``R + m`` with the prediction ``m`` = the last instantaneous regret.
    """

    floor: bool = False
    alpha: float | None = None
    beta: float | None = None
    gamma: float = 0.0
    predictive: bool = False

    def positive_discount(self, t: int) -> float:
        """``t**alpha / (t**alpha + 1)``, the factor of a positive cumulative regret (1 if
        ``alpha`` is None). Written like OpenSpiel's ``DCFRSolver`` so the floats agree."""
        return 1.0 if self.alpha is None else t**self.alpha / (t**self.alpha + 1)

    def negative_discount(self, t: int) -> float:
        """``t**beta / (t**beta + 1)``, the factor of a non-positive cumulative regret (1 if
        ``beta`` is None)."""
        return 1.0 if self.beta is None else t**self.beta / (t**self.beta + 1)

    def average_weight(self, t: int) -> float:
        """``t**gamma``: the weight of iteration ``t``'s strategy in the average (1 for
        gamma = 0, so iteration 1 always has weight 1)."""
        return float(t) ** self.gamma


#: The named algorithms as rules. Vanilla CFR (Zinkevich et al. 2007); CFR+ (Tammelin 2014);
#: Linear CFR and DCFR(1.5, 0, 2) (Brown & Sandholm 2019); PCFR+ (Farina, Kroer & Sandholm
#: 2021); DCFR+ and PDCFR+ (Xu et al. 2024, "Minimizing Weighted Counterfactual Regret with
#: Optimistic Online Mirror Descent").
ORACLE_RULES: dict[str, OracleRule] = {
    "vanilla": OracleRule(),
    "cfr_plus": OracleRule(floor=True, gamma=1.0),
    "linear": OracleRule(alpha=1.0, beta=1.0, gamma=1.0),
    "dcfr": OracleRule(alpha=1.5, beta=0.0, gamma=2.0),
    "pcfr_plus": OracleRule(floor=True, gamma=2.0, predictive=True),
    "dcfr_plus": OracleRule(floor=True, alpha=1.5, gamma=4.0),
    "pdcfr_plus": OracleRule(floor=True, alpha=2.3, gamma=5.0, predictive=True),
}


def read_rule(
    rule: Any = None,
    *,
    floor: bool = False,
    alpha: float | None = None,
    beta: float | None = None,
    gamma: float = 0.0,
    predictive: bool = False,
) -> OracleRule:
    """An :class:`OracleRule` from an object with the five attributes (duck-typed, e.g.
    ``cfrkit.RegretRule``), a name of :data:`ORACLE_RULES`, or the keywords. An object that has
    the per-iteration methods of :class:`OracleRule` itself is used as it is.

    Raises ``ValueError`` if both ``rule`` and a non-default keyword are given.
    """
    keywords = OracleRule(floor=bool(floor), alpha=_exponent(alpha), beta=_exponent(beta),
                          gamma=float(gamma), predictive=bool(predictive))
    if rule is None:
        return keywords
    if keywords != OracleRule():
        raise ValueError(f"give either rule= or the rule keywords, not both (rule={rule!r})")
    if isinstance(rule, str):
        return ORACLE_RULES[rule]
    if all(hasattr(rule, m) for m in ("positive_discount", "negative_discount", "average_weight")):
        return rule  # its own per-iteration factors (a custom schedule), applied eagerly
    return OracleRule(floor=bool(rule.floor), alpha=_exponent(rule.alpha),
                      beta=_exponent(rule.beta), gamma=float(rule.gamma),
                      predictive=bool(rule.predictive))


def _exponent(value: float | None) -> float | None:
    return None if value is None else float(value)


# --------------------------------------------------------------------------------------------
# One pass
# --------------------------------------------------------------------------------------------


@dataclass
class PassResult:
    """What one walk of the tree under a fixed profile computes for the updating players.

    Attributes
    ----------
    regrets : dict[key, dict[action, float]]
        Instantaneous counterfactual regrets ``r(I,a) = sum_h pi_{-i}(h) (v_i(h.a) - v_i(h))``
        for EVERY infoset of the updating players (0 for infosets the pass did not visit).
    own_reach : dict[key, list[float]]
        The own-reach terms the average strategy receives, in visiting order: one entry
        ``pi_i(I)`` per infoset in a full pass, one entry ``pi_i(h)`` per visited history in a
        sampled pass. Infosets not visited are absent.
    values : list[float]
        Each player's utility at the root under the profile (a sampled estimate for a sampled
        pass).
    """

    regrets: dict[str, dict[Hashable, float]]
    own_reach: dict[str, list[float]]
    values: list[float]


def regret_pass(
    game: Game,
    profile: Policy,
    players: Iterable[int],
    chance: ChanceSample | None = None,
    *,
    table: dict[str, tuple[int, tuple[Hashable, ...]]] | None = None,
) -> PassResult:
    """Walk the tree once under ``profile``; instantaneous regrets of ``players``' infosets.

    Full pass (``chance is None``): every history is visited; at a history ``h`` of an
    updating player ``i`` in infoset ``I``, ``r(I,a) += pi_{-i}(h) (v_i(h.a) - v_i(h))``
    (Zinkevich et al. 2007), where ``pi_{-i}`` is the product of the other players' and
    chance's probabilities on the path (``prod(reach[:i]) * prod(reach[i+1:])`` with chance
    last, as OpenSpiel). ``pi_i(I)`` is recorded once per infoset (the first history met).

    Sampled pass (chance sampling, Lanctot et al. 2009, "Monte Carlo Sampling for Regret
    Minimization in Extensive Games"): at a chance node whose path from the root (the tuple of
    action / outcome labels) is ``path``, only the outcome ``chance[path]`` is followed and the
    reach is NOT multiplied by its probability (that probability cancels against the
    probability of sampling it, so the expected sampled regret is the full one). Every other
    node is walked in full, zero-probability actions included. ``pi_i(h)`` is recorded once
    per visited history.

    Parameters
    ----------
    game : Game
    profile : policy
        Everyone's strategy; every row must have every legal action.
    players : iterable of int
        The players whose regrets and own reaches are collected.
    chance : mapping of chance path -> outcome, optional
        The sampled outcomes; None for a full pass.
    table : dict, optional
        ``infosets(game)``, to save recomputing it.

    Raises
    ------
    KeyError
        A sampled pass reaches a chance node whose path is not in ``chance``.
    ValueError
        ``chance`` names an outcome that is not one of the node's outcomes; or (full pass) two
        histories of one infoset have different own reach (imperfect recall).
    """
    n = game.num_players
    table = infosets(game) if table is None else table
    updating = frozenset(players)
    regrets = {
        key: {a: 0.0 for a in actions}
        for key, (p, actions) in table.items()
        if p in updating
    }
    own_reach: dict[str, list[float]] = {}
    sampled = chance is not None

    def walk(h: History, path: ChancePath, reach: tuple[float, ...]) -> list[float]:
        """Utilities (one per player) below ``h`` under ``profile``; ``reach[i]`` is player
        i's own reach probability, ``reach[n]`` chance's (stays 1 in a sampled pass)."""
        if h.is_terminal():
            return [float(u) for u in h.utilities()]

        if h.is_chance():
            outcomes = h.chance_outcomes()
            if sampled:
                if path not in chance:
                    raise KeyError(f"no sampled chance outcome for the chance node at path "
                                   f"{path!r} ({h!r})")
                outcome = chance[path]
                if outcome not in [o for o, _prob in outcomes]:
                    raise ValueError(f"sampled outcome {outcome!r} at path {path!r} is not one "
                                     f"of {[o for o, _p in outcomes]!r}")
                # chance probability cancels against the sampling probability: reach unchanged
                return walk(h.child(outcome), path + (outcome,), reach)
            value = [0.0] * n
            for outcome, prob in outcomes:
                child_reach = reach[:n] + (reach[n] * prob,)
                child_value = walk(h.child(outcome), path + (outcome,), child_reach)
                value = [v + prob * c for v, c in zip(value, child_value)]
            return value

        p = h.current_player()
        key = h.infoset_key()
        sigma = profile[key]
        value = [0.0] * n
        child_values = {}
        for action in h.actions():
            prob = sigma[action]
            child_reach = reach[:p] + (reach[p] * prob,) + reach[p + 1:]
            child_value = walk(h.child(action), path + (action,), child_reach)
            child_values[action] = child_value
            value = [v + prob * c for v, c in zip(value, child_value)]

        if p in updating:
            cf_reach = math.prod(reach[:p]) * math.prod(reach[p + 1:])
            for action in h.actions():
                regrets[key][action] += cf_reach * (child_values[action][p] - value[p])
            if sampled:  # once per visited history
                own_reach.setdefault(key, []).append(reach[p])
            elif key not in own_reach:  # once per infoset
                own_reach[key] = [reach[p]]
            elif own_reach[key][0] != reach[p]:
                raise ValueError(
                    f"infoset {key!r}: own reach {reach[p]!r} here ({h!r}) but "
                    f"{own_reach[key][0]!r} at another history (imperfect recall?)"
                )
        return value

    values = walk(game.root(), (), (1.0,) * (n + 1))
    return PassResult(regrets=regrets, own_reach=own_reach, values=values)


# --------------------------------------------------------------------------------------------
# CFR with any rule
# --------------------------------------------------------------------------------------------


def _normalised(strategy_sum: dict[str, dict[Hashable, float]]) -> Policy:
    """Each row divided by its sum; uniform where the sum is 0. A fresh dict."""
    out = {}
    for key, row in strategy_sum.items():
        total = sum(row.values())
        if total == 0.0:
            out[key] = {a: 1.0 / len(row) for a in row}
        else:
            out[key] = {a: s / total for a, s in row.items()}
    return out


def _copy(table: dict[str, dict[Hashable, float]]) -> dict[str, dict[Hashable, float]]:
    return {key: dict(row) for key, row in table.items()}


class ReferenceCFR:
    """CFR with any :class:`OracleRule`, full or chance-sampled passes, optional locked infosets.

    One iteration ``t`` (1-based) with alternating updates (the default, OpenSpiel's
    ``CFRSolver`` convention): for each player ``i = 0..n-1`` in order, walk the tree with
    everyone's current strategies (:func:`regret_pass`), then update ``i``'s infosets:

    1. average: ``S(I,a) += w(t) * pi_i * sigma_t(I,a)`` for each own-reach term of the pass
       (once per infoset in a full pass, once per visited history in a sampled one), with
       ``sigma_t`` the strategy played in the pass;
    2. regrets, for EVERY infoset of ``i``, reached or not (``r = 0`` where not):
       ``x = R + r``; ``x = max(x, 0)`` if floor; ``x *= dpos(t) if x > 0 else dneg(t)``;
       ``R = x``; ``m = r`` if predictive;
    3. refresh ``i``'s unlocked infosets: ``sigma = regret_matching(R + m if predictive else
       R)``.

    With ``alternating=False`` a single walk computes every player's ``r`` and average terms
    from the same profile, then every player is updated and refreshed.

    Parameters
    ----------
    game : Game
    alternating : bool
        Alternating (default) or simultaneous updates.
    fixed : dict[key, dict[action, prob]], optional
        Locked infosets: their current strategy is this row from the start and is never
        refreshed (regrets and strategy sums still accumulate). Missing actions get 0.
    rule : OracleRule, cfrkit.RegretRule, str or None
        The rule (any object with ``floor, alpha, beta, gamma, predictive``, or a name in
        :data:`ORACLE_RULES`); or give the five keywords instead.
    floor, alpha, beta, gamma, predictive
        The rule's fields (see :class:`OracleRule`); default vanilla CFR.

    Attributes
    ----------
    regrets, strategy_sum, current, prediction, instantaneous : dict[key, dict[action, float]]
        Cumulative regrets ``R``, strategy sums ``S``, current strategy (the one the next
        iteration plays), prediction ``m`` (all 0 unless predictive) and the latest
        instantaneous regret ``r`` of each infoset (from its player's latest pass). Every
        infoset, every action in game order. Live tables: do not mutate.
    iteration : int
        Iterations done.
    """

    def __init__(
        self,
        game: Game,
        *,
        alternating: bool = True,
        fixed: Mapping[str, Mapping[Hashable, float]] | None = None,
        rule: Any = None,
        floor: bool = False,
        alpha: float | None = None,
        beta: float | None = None,
        gamma: float = 0.0,
        predictive: bool = False,
    ) -> None:
        self.game = game
        self.alternating = bool(alternating)
        self.rule = read_rule(rule, floor=floor, alpha=alpha, beta=beta, gamma=gamma,
                              predictive=predictive)
        self.table = infosets(game)
        self.players = {key: p for key, (p, _actions) in self.table.items()}
        zeros = {key: {a: 0.0 for a in actions} for key, (_p, actions) in self.table.items()}
        self.regrets = _copy(zeros)
        self.strategy_sum = _copy(zeros)
        self.prediction = _copy(zeros)
        self.instantaneous = _copy(zeros)
        self.fixed = self._check_fixed(fixed or {})
        self.current = {
            key: dict(self.fixed[key]) if key in self.fixed else regret_matching(zeros[key], acts)
            for key, (_p, acts) in self.table.items()
        }
        self.iteration = 0

    def _check_fixed(self, fixed: Mapping[str, Mapping[Hashable, float]]) -> Policy:
        rows = {}
        for key, row in fixed.items():
            if key not in self.table:
                raise ValueError(f"fixed: {key!r} is not an infoset of {self.game!r}")
            actions = self.table[key][1]
            unknown = [a for a in row if a not in actions]
            if unknown:
                raise ValueError(f"fixed[{key!r}]: {unknown[0]!r} is not one of {actions!r}")
            rows[key] = {a: float(row.get(a, 0.0)) for a in actions}
            probs = rows[key].values()
            if any(not (q >= 0.0) for q in probs) or abs(sum(probs) - 1.0) > 1e-9:
                raise ValueError(f"fixed[{key!r}] is not a probability row: {dict(row)!r}")
        return rows

    # -- one pass and one update -------------------------------------------------------------

    def regret_pass(self, players: Iterable[int], chance: ChanceSample | None = None,
                    profile: Policy | None = None) -> PassResult:
        """:func:`regret_pass` under ``profile`` (default: the current strategies)."""
        return regret_pass(self.game, self.current if profile is None else profile, players,
                           chance, table=self.table)

    def _update(self, players: frozenset[int], result: PassResult, t: int) -> None:
        """Fold one pass into ``players``' tables with the rule, then refresh them."""
        rule = self.rule
        weight = rule.average_weight(t)
        dpos, dneg = rule.positive_discount(t), rule.negative_discount(t)
        # 1. the average gets the strategy played in this pass (before the refresh below)
        for key, terms in result.own_reach.items():
            sigma = self.current[key]
            row = self.strategy_sum[key]
            for own_reach in terms:
                for a in row:
                    row[a] += weight * own_reach * sigma[a]
        # 2. every infoset of the players, reached or not: add, floor, discount, predict
        for key, (p, actions) in self.table.items():
            if p not in players:
                continue
            r = result.regrets[key]
            for a in actions:
                x = self.regrets[key][a] + r[a]
                if rule.floor:
                    x = max(x, 0.0)
                x *= dpos if x > 0 else dneg
                self.regrets[key][a] = x
                if rule.predictive:
                    self.prediction[key][a] = r[a]
            self.instantaneous[key] = dict(r)
        # 3. refresh the players' unlocked infosets
        for key, (p, actions) in self.table.items():
            if p in players and key not in self.fixed:
                if rule.predictive:
                    target = {a: self.regrets[key][a] + self.prediction[key][a] for a in actions}
                else:
                    target = self.regrets[key]
                self.current[key] = regret_matching(target, actions)

    def _iteration(self, samples: list[ChanceSample | None]) -> None:
        """One iteration; ``samples[i]`` is the chance sample of player ``i``'s pass (or of the
        single simultaneous pass), None for full passes."""
        t = self.iteration + 1
        n = self.game.num_players
        if self.alternating:
            for p in range(n):
                self._update(frozenset([p]), self.regret_pass([p], samples[p]), t)
        else:
            everyone = frozenset(range(n))
            self._update(everyone, self.regret_pass(everyone, samples[0]), t)
        self.iteration = t

    # -- public stepping ---------------------------------------------------------------------

    def iterate(self, n: int = 1) -> ReferenceCFR:
        """Run ``n`` full-tree iterations; returns ``self``."""
        if isinstance(n, bool) or not isinstance(n, int) or n < 0:
            raise ValueError(f"n must be a non-negative int, got {n!r}")
        for _ in range(n):
            self._iteration([None] * self.game.num_players)
        return self

    def iterate_sampled(self, chance: ChanceSample | Sequence[ChanceSample]) -> ReferenceCFR:
        """Run ONE chance-sampled iteration replaying the given outcomes; returns ``self``.

        Parameters
        ----------
        chance : mapping, or a sequence of one mapping per player
            ``{chance path: outcome}``, the path being the tuple of labels from the root. A
            single mapping is shared by every pass of the iteration (alternating: all players'
            passes; simultaneous: the one pass). A sequence (alternating only) gives player
            ``i``'s pass its own sample ``chance[i]``.
        """
        n = self.game.num_players
        if isinstance(chance, Mapping):
            samples = [chance] * n
        elif not self.alternating:
            raise ValueError("simultaneous updates make one pass: give one chance mapping")
        else:
            samples = list(chance)
            if len(samples) != n or not all(isinstance(s, Mapping) for s in samples):
                raise ValueError(f"give one chance mapping, or a list of {n} (one per player)")
        self._iteration(samples)
        return self

    # -- read back ---------------------------------------------------------------------------

    def average_policy(self) -> Policy:
        """``strategy_sum`` normalised per infoset (uniform where the sum is 0); a fresh dict."""
        return _normalised(self.strategy_sum)

    def current_policy(self) -> Policy:
        """A fresh copy of :attr:`current`."""
        return _copy(self.current)

    def result(self) -> CFRResult:
        """A snapshot (deep copy) of the state as a :class:`CFRResult`."""
        return CFRResult(
            regrets=_copy(self.regrets),
            strategy_sum=_copy(self.strategy_sum),
            current=_copy(self.current),
            iterations=self.iteration,
            alternating=self.alternating,
            players=dict(self.players),
            prediction=_copy(self.prediction),
            rule=self.rule,
        )


@dataclass
class CFRResult:
    """The state of :func:`reference_cfr` (or :meth:`ReferenceCFR.result`) after its last
    iteration.

    All tables are ``dict[infoset_key, dict[action, float]]`` with every infoset of the game and
    every legal action (in the game's action order).

    Attributes
    ----------
    regrets : cumulative counterfactual regrets (after the rule's floor / discount).
    strategy_sum : cumulative own-reach-weighted strategies (once per infoset per iteration in
        full passes), each term multiplied by the rule's weight ``t**gamma`` (``t`` for
        ``linear_averaging``).
    current : the current (regret-matching) strategy after the last iteration, i.e. the one the
        next iteration would use.
    iterations : how many iterations were run.
    prediction : the predictive rule's ``m`` (all 0 for non-predictive rules).
    rule : the :class:`OracleRule` used.
    """

    regrets: dict[str, dict[Hashable, float]]
    strategy_sum: dict[str, dict[Hashable, float]]
    current: dict[str, dict[Hashable, float]]
    iterations: int = 0
    alternating: bool = True
    players: dict[str, int] = field(default_factory=dict)
    prediction: dict[str, dict[Hashable, float]] = field(default_factory=dict)
    rule: OracleRule = field(default_factory=OracleRule)

    @property
    def average(self) -> dict[str, dict[Hashable, float]]:
        """The average strategy: ``strategy_sum`` normalised per infoset (uniform if the row sum is
        0). A fresh dict on every access."""
        return self.average_policy()

    def average_policy(self) -> dict[str, dict[Hashable, float]]:
        """Same as :attr:`average` (OpenSpiel's name); a fresh dict on every call."""
        return _normalised(self.strategy_sum)

    def current_policy(self) -> dict[str, dict[Hashable, float]]:
        """A fresh copy of :attr:`current`."""
        return _copy(self.current)


def reference_cfr(
    game: Game,
    iterations: int,
    alternating: bool = True,
    *,
    regret_matching_plus: bool = False,
    linear_averaging: bool = False,
    rule: Any = None,
    fixed: Mapping[str, Mapping[Hashable, float]] | None = None,
) -> CFRResult:
    """Run CFR for ``iterations`` full-tree iterations (vanilla by default, exactly as
    OpenSpiel's CFRSolver; Zinkevich et al. 2007).

    With ``alternating=True`` each iteration makes one pass per player ``p = 0..n-1``: walk the
    whole tree with everyone's current strategy; at every history ``h`` of player ``p`` in infoset
    ``I`` add ``cf_reach(h) * (v_p(h.a) - v_p(h))`` to the pass's instantaneous regret of
    ``(I, a)`` and (once per infoset per pass) ``own_reach(I) * sigma_I(a)`` to
    ``strategy_sum[I][a]``; then fold the instantaneous regrets into ``regrets`` and refresh
    ``p``'s current strategy by regret matching before the next player's pass. With
    ``alternating=False`` one pass updates every player from the same profile, then all
    strategies are refreshed. (This is :class:`ReferenceCFR` run for ``iterations``.)

    The keyword-only options reproduce OpenSpiel's CFR+ ingredients (``CFRPlusSolver`` is
    ``alternating=True, regret_matching_plus=True, linear_averaging=True``; Tammelin 2014):
    ``regret_matching_plus`` clamps cumulative regrets at 0 after each pass (before the strategy
    refresh); ``linear_averaging`` weights the strategy-sum terms of iteration ``t`` (1-based) by
    ``t``. Any other rule: ``rule=`` (see :func:`read_rule`); locked infosets: ``fixed=``.
    """
    if not isinstance(iterations, int) or iterations < 0:
        raise ValueError(f"iterations must be a non-negative int, got {iterations!r}")
    if rule is None:
        rule = OracleRule(floor=regret_matching_plus, gamma=1.0 if linear_averaging else 0.0)
    elif regret_matching_plus or linear_averaging:
        raise ValueError("give rule= or regret_matching_plus/linear_averaging, not both")
    solver = ReferenceCFR(game, alternating=alternating, rule=rule, fixed=fixed)
    return solver.iterate(iterations).result()


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
