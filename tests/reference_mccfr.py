"""A slow, obviously-correct oracle for external- and outcome-sampling MCCFR.

Like :mod:`reference`, it walks the abstract Game / History API with plain recursion and dicts
and shares no traversal code with the kernels. To be compared number for number it must make
the kernels' random draws: a :class:`Draws` object replays them from a copy of the trainer's
random state (or of one of its streams'), in the kernels' order (depth-first pre-order: a
node's draw when it is reached, children in the game's order), chance outcomes through the
game's alias tables, actions by inverse CDF over the oracle's own current strategy. The
oracle's strategies equal the kernels' to rounding, so the draws coincide.

The formulas (Lanctot, Waugh, Zinkevich and Bowling 2009), for a pass of traverser ``p``:

* external sampling: at a history ``h`` of ``p``, ``v(h) = sum_a sigma(a) v(h a)`` over every
  action, and ``r(I, a) += v(h a) - v(h)``; elsewhere ``v(h)`` is the sampled child's value.
  The average: each sampled history of ``q = (p + 1) mod P`` adds ``1 / pi_o(h)`` times
  ``sigma(I)``, ``pi_o`` the sampled reach of the players other than ``p`` and ``q`` (one
  player: ``p``'s own histories add their own reach).
* chance sampling (``ChanceSampledCFR`` with streams): the outcomes drawn as the layout
  kernels draw them (:func:`chance_sample`), then :func:`reference.regret_pass` over that
  sample.
* outcome sampling: one path; at ``p``'s history with sampled ``a*`` and exploring
  probability ``s(a*)``, ``x = v(h a*) / s(a*)``, ``v(h) = sigma(a*) x``, and
  ``r(I, a*) += x / q_p(h)``, ``r(I, a) -= v(h) / q_p(h)`` for every ``a``; the average
  adds ``pi_p(h) / q(h)`` times ``sigma(I)``.

Then :class:`reference.ReferenceCFR`'s update folds the regrets in with the rule and adds the
average terms with the iteration's weight.
"""

from __future__ import annotations

from collections.abc import Hashable

from cfrkit._kernels.chance import sample_outcome
from cfrkit._kernels.random import next_double
from cfrkit.game import Game, History
from reference import PassResult, Policy, ReferenceCFR, regret_pass

from conftest import draw_one_sample, node_paths


class Draws:
    """The kernels' random draws, replayed from a copy of a trainer's random state."""

    def __init__(self, trainer, rng=None) -> None:
        compiled = trainer.game
        self.tree = compiled.tree
        self.statics = trainer._statics
        self.rng = (trainer._state.rng if rng is None else rng).copy()
        paths = compiled._cache.get("test_node_paths")
        if paths is None:
            paths = compiled._cache["test_node_paths"] = node_paths(compiled.game)
        self.paths = paths
        self.node_of = {path: n for n, path in enumerate(paths)}

    def chance(self, history: History, path: tuple) -> Hashable:
        """The outcome the kernels draw at the chance node ``history`` (at ``path``)."""
        n = self.node_of[path]
        tree = self.tree
        k = sample_outcome(self.rng, self.statics.alias_prob, self.statics.alias_index,
                           int(tree.node_slot[n]) - tree.num_action_slots,
                           int(tree.node_num_children[n]))
        return history.chance_outcomes()[k][0]

    def action(self, probabilities: list[float]) -> int:
        """Inverse CDF over ``probabilities`` with one uniform draw; never an action of
        probability 0."""
        u = next_double(self.rng)
        total, last = 0.0, 0
        for j, p in enumerate(probabilities):
            if p > 0.0:
                last = j
                total += p
                if u < total:
                    return j
        return last


def chance_sample(draws: Draws) -> dict[tuple, Hashable]:
    """The outcomes one chance sample draws from the stream's state, by chance path (see
    ``conftest.draw_one_sample``)."""
    return draw_one_sample(draws.tree, draws.statics, draws.rng, draws.paths)


def _zeros(table, player: int) -> dict:
    return {key: {a: 0.0 for a in actions} for key, (p, actions) in table.items() if p == player}


def external_pass(game: Game, profile: Policy, player: int, draws: Draws, table) -> PassResult:
    """One external-sampling pass of ``player`` under ``profile``."""
    n = game.num_players
    averaged = (player + 1) % n
    regrets = _zeros(table, player)
    terms: dict[str, list[float]] = {}

    def walk(h: History, path: tuple, others: float, own: float) -> float:
        if h.is_terminal():
            return float(h.utilities()[player])
        if h.is_chance():
            outcome = draws.chance(h, path)
            return walk(h.child(outcome), path + (outcome,), others, own)
        actor, key, actions = h.current_player(), h.infoset_key(), list(h.actions())
        sigma = profile[key]
        if actor == player:
            if n == 1:
                terms.setdefault(key, []).append(own)
            values = [walk(h.child(a), path + (a,), others, own * sigma[a]) for a in actions]
            v = sum(sigma[a] * x for a, x in zip(actions, values))
            for a, x in zip(actions, values):
                regrets[key][a] += x - v
            return v
        k = draws.action([sigma[a] for a in actions])
        if actor == averaged:
            terms.setdefault(key, []).append(1.0 / others)
            below = others
        else:
            below = others * sigma[actions[k]]
        return walk(h.child(actions[k]), path + (actions[k],), below, own)

    value = walk(game.root(), (), 1.0, 1.0)
    return PassResult(regrets=regrets, own_reach=terms, values=[value])


def outcome_pass(game: Game, profile: Policy, player: int, draws: Draws, table,
                 exploration: float) -> PassResult:
    """One outcome-sampling pass of ``player`` under ``profile``."""
    regrets = _zeros(table, player)
    terms: dict[str, list[float]] = {}

    def walk(h: History, path: tuple, own: float, own_sampling: float, sampling: float) -> float:
        if h.is_terminal():
            return float(h.utilities()[player])
        if h.is_chance():
            outcomes = h.chance_outcomes()
            outcome = draws.chance(h, path)
            prob = dict(outcomes)[outcome]
            return walk(h.child(outcome), path + (outcome,), own, own_sampling, sampling * prob)
        actor, key, actions = h.current_player(), h.infoset_key(), list(h.actions())
        sigma = profile[key]
        if actor != player:
            k = draws.action([sigma[a] for a in actions])
            a = actions[k]
            return walk(h.child(a), path + (a,), own, own_sampling, sampling * sigma[a])
        terms.setdefault(key, []).append(own / sampling)
        m = len(actions)
        explore = [exploration / m + (1.0 - exploration) * sigma[a] for a in actions]
        k = draws.action(explore)
        a = actions[k]
        below = walk(h.child(a), path + (a,), own * sigma[a], own_sampling * explore[k],
                     sampling * explore[k])
        sampled_value = below / explore[k]
        v = sigma[a] * sampled_value
        regrets[key][a] += sampled_value / own_sampling
        for b in actions:
            regrets[key][b] -= v / own_sampling
        return v

    value = walk(game.root(), (), 1.0, 1.0, 1.0)
    return PassResult(regrets=regrets, own_reach=terms, values=[value])


class ReferenceMCCFR(ReferenceCFR):
    """:class:`reference.ReferenceCFR` with external- or outcome-sampling passes, replaying a
    trainer's draws (build it before the trainer's first iteration, with the trainer's rule,
    updates and locked rows).

    With the trainer's ``streams`` and ``samples``, a player's pass is ``streams`` times
    ``samples`` passes, stream by stream, each stream replaying its own random state; their
    regrets and average terms are averaged (each scaled by ``1 / (streams * samples)``).
    """

    def __init__(self, game: Game, trainer, *, outcome: bool = False, chance: bool = False,
                 exploration: float = 0.6, **options) -> None:
        super().__init__(game, **options)
        self.samples = trainer.samples
        if trainer.streams == 1 and trainer.samples == 1:
            self.streams = [Draws(trainer)]
        else:
            self.streams = [Draws(trainer, rng) for rng in trainer._pool.rng]
        self.outcome = outcome
        self.chance = chance
        # chance sampling with one sample per iteration: every player's round replays the
        # streams from their states at the iteration's start
        self.shared = chance and not trainer.sample_per_player
        self.starts: list | None = None
        self.exploration = exploration

    def _one_pass(self, player: int, draws: Draws) -> PassResult:
        if self.chance:
            return regret_pass(self.game, self.current, [player], chance_sample(draws),
                               table=self.table)
        if self.outcome:
            return outcome_pass(self.game, self.current, player, draws, self.table,
                                self.exploration)
        return external_pass(self.game, self.current, player, draws, self.table)

    def _pass(self, player: int) -> PassResult:
        if self.starts is not None:
            for draws, start in zip(self.streams, self.starts):
                draws.rng[:] = start
        rounds = [[self._one_pass(player, draws) for _ in range(self.samples)]
                  for draws in self.streams]
        if len(rounds) == 1 and self.samples == 1:
            return rounds[0][0]
        # a stream's regrets summed first, then scaled: the kernels' order, so that regrets
        # that cancel within a stream come out exactly 0 in both (regret matching turns a
        # rounding error's sign into a different strategy)
        share = 1.0 / (len(rounds) * self.samples)
        merged = PassResult(regrets=_zeros(self.table, player), own_reach={}, values=[])
        for results in rounds:
            stream = _zeros(self.table, player)
            for result in results:
                for key, row in result.regrets.items():
                    for a, x in row.items():
                        stream[key][a] += x
                for key, terms in result.own_reach.items():
                    merged.own_reach.setdefault(key, []).extend(share * x for x in terms)
            for key, row in stream.items():
                for a, x in row.items():
                    merged.regrets[key][a] += share * x
        return merged

    def iterate(self, n: int = 1) -> ReferenceMCCFR:
        for _ in range(n):
            t = self.iteration + 1
            players = range(self.game.num_players)
            if self.shared:
                self.starts = [draws.rng.copy() for draws in self.streams]
            if self.alternating:
                for p in players:
                    self._update(frozenset([p]), self._pass(p), t)
            else:  # every pass on the same profile, then every update
                results = [self._pass(p) for p in players]
                merged = PassResult(regrets={}, own_reach={}, values=[])
                for result in results:
                    merged.regrets.update(result.regrets)
                    for key, values in result.own_reach.items():
                        merged.own_reach.setdefault(key, []).extend(values)
                self._update(frozenset(players), merged, t)
            self.iteration = t
        return self


def table_of(trainer, name: str) -> dict[str, dict[Hashable, float]]:
    """A trainer's regrets (``"regrets"``, discounts applied) or strategy sums, as oracle
    tables."""
    rows = trainer.cumulative_regrets() if name == "regrets" else trainer.strategy_sums()
    return {key: dict(row) for key, row in rows.items()}


def assert_tables_close(ours: dict, theirs: dict, tolerance: float = 1e-12) -> None:
    """Every entry within ``tolerance`` times the table's largest magnitude (at least 1)."""
    scale = max([1.0] + [abs(x) for row in theirs.values() for x in row.values()])
    worst = max(abs(ours[key][a] - x) for key, row in theirs.items() for a, x in row.items())
    assert worst <= tolerance * scale, f"differs by {worst:.3g} (scale {scale:.3g})"


__all__ = ["Draws", "ReferenceMCCFR", "assert_tables_close", "chance_sample", "external_pass",
           "outcome_pass", "table_of"]
