"""Monte Carlo CFR agrees in distribution with OpenSpiel's C++ MCCFR solvers.

cfrkit's ExternalSamplingCFR / OutcomeSamplingCFR and OpenSpiel's ExternalSamplingMCCFRSolver
(simple averaging) / OutcomeSamplingMCCFRSolver (epsilon 0.6, as cfrkit's default exploration)
draw from different random streams, so their runs never match number for number; what must
match is the distribution of where they get. Over fixed seeds (0..n-1 for both), the median
NashConv after the same number of iterations must be within a stated factor of OpenSpiel's.
Every seed is fixed, so the test is deterministic; the factors leave room for a legitimate
change of cfrkit's draw order to land elsewhere in the distribution.

OpenSpiel's MCCFR average policy answers for states only (``pyspiel.nash_conv`` on it fails
on Leduc, whose unvisited information states fall back to a uniform policy that takes no
string), so it is read state by state into a cfrkit Policy and measured by cfrkit's exact
evaluator -- checked against ``pyspiel.nash_conv`` on Kuhn, where that works.
"""

from __future__ import annotations

import statistics

import numpy as np
import pytest

import cfrkit

pyspiel = pytest.importorskip("pyspiel")

from cfrkit.openspiel import from_openspiel  # noqa: E402

# (game, seeds, ES iterations, OS iterations, factor). The factors come from measurements of
# the ratio cfrkit median / OpenSpiel median over disjoint blocks of seeds, each with the same
# count as here, next to the variant that drops the averaging (current_policy):
#
# * kuhn_poker, ES 10^4 / OS 3x10^4 iterations, 9 seeds: NashConv is noise-dominated (per seed
#   0.003 .. 0.08), block ratios 0.80 .. 1.27 (6 blocks; blocks of 7 seeds reached 0.51 and
#   1.79). Bound: 2.5x either way. Dropping the averaging gives 12x .. 38x.
# * leduc_poker, ES 10^4 / OS 10^5, 5 seeds: far tighter (per seed 0.50 .. 0.66 for ES,
#   0.85 .. 1.21 for OS), block ratios 0.87 .. 1.09 (6 blocks). Bound: 1.3x either way.
#   Dropping the averaging gives 2.4x .. 3.0x (ES) and 1.55x .. 2.1x (OS). (OS needs 10^5
#   iterations here: at 3x10^4 the dropped average is only 1.1x .. 1.2x off.)
CASES = {
    "kuhn_poker": (9, 10_000, 30_000, 2.5),
    "leduc_poker": (5, 10_000, 100_000, 1.3),
}


def read_policy(compiled: cfrkit.CompiledGame, states: list, policy) -> cfrkit.Policy:
    """An OpenSpiel policy as a cfrkit Policy: asked at one state per information state."""
    table = np.zeros(compiled.tree.num_action_slots)
    first = compiled.tree.infoset_first_slot
    for infoset, (state, actions) in enumerate(zip(states, compiled.infoset_actions)):
        theirs, probabilities = policy.get_state_policy_as_parallel_vectors(state)
        assert list(theirs) == list(actions)
        table[first[infoset] : first[infoset] + len(actions)] = probabilities
    return cfrkit.Policy(compiled, table, normalise=True)


def representative_states(compiled: cfrkit.CompiledGame) -> list:
    """One OpenSpiel state per information state of ``compiled``, in cfrkit's infoset order."""
    found: dict[str, object] = {}
    stack = [compiled.game.openspiel_game.new_initial_state()]
    while stack:
        state = stack.pop()
        if state.is_terminal():
            continue
        if not state.is_chance_node():
            found.setdefault(state.information_state_string(), state)
        stack.extend(state.child(a) for a in state.legal_actions())
    return [found[key] for key in compiled.infoset_keys]


class Runs:
    """NashConv per seed of cfrkit's and OpenSpiel's ES and OS runs on one game."""

    def __init__(self, name: str) -> None:
        seeds, es_iterations, os_iterations, self.factor = CASES[name]
        compiled = cfrkit.compile_game(from_openspiel(name))
        game = compiled.game.openspiel_game
        states = representative_states(compiled)
        self.compiled, self.game, self.states = compiled, game, states
        self.nash_conv: dict[str, list[float]] = {}
        self.last_openspiel = {}
        for algorithm, iterations in (("ES", es_iterations), ("OS", os_iterations)):
            ours, dropped, theirs = [], [], []
            for seed in range(seeds):
                if algorithm == "ES":
                    trainer = cfrkit.ExternalSamplingCFR(compiled, seed=seed)
                    solver = pyspiel.ExternalSamplingMCCFRSolver(
                        game, seed=seed, avg_type=pyspiel.MCCFRAverageType.SIMPLE)
                else:
                    trainer = cfrkit.OutcomeSamplingCFR(compiled, seed=seed, exploration=0.6)
                    solver = pyspiel.OutcomeSamplingMCCFRSolver(game, seed=seed, epsilon=0.6)
                trainer.iterate(iterations)
                ours.append(cfrkit.nash_conv(compiled, trainer.average_policy()))
                # the same seeds and draws, the averaging dropped: what a broken average gives
                dropped.append(cfrkit.nash_conv(compiled, trainer.current_policy()))
                for _ in range(iterations):
                    solver.run_iteration()
                theirs.append(cfrkit.nash_conv(
                    compiled, read_policy(compiled, states, solver.average_policy())))
            self.nash_conv[f"cfrkit {algorithm}"] = ours
            self.nash_conv[f"cfrkit {algorithm} without averaging"] = dropped
            self.nash_conv[f"OpenSpiel {algorithm}"] = theirs
            self.last_openspiel[algorithm] = solver

    def ratio(self, ours: str, algorithm: str) -> float:
        """Median NashConv of ``ours`` over the seeds / OpenSpiel's median for ``algorithm``."""
        return (statistics.median(self.nash_conv[ours])
                / statistics.median(self.nash_conv[f"OpenSpiel {algorithm}"]))


@pytest.fixture(scope="module", params=list(CASES))
def runs(request) -> Runs:
    return Runs(request.param)


@pytest.mark.parametrize("algorithm", ["ES", "OS"])
def test_median_nash_conv_matches_openspiel(runs, algorithm):
    ratio = runs.ratio(f"cfrkit {algorithm}", algorithm)
    assert 1 / runs.factor <= ratio <= runs.factor, (ratio, runs.nash_conv)


@pytest.mark.parametrize("algorithm", ["ES", "OS"])
def test_dropping_the_averaging_falls_outside_the_bound(runs, algorithm):
    """The bound is tight enough to catch a trainer whose draws are fine but whose average is
    lost (emulated with the current policy of the same runs)."""
    ratio = runs.ratio(f"cfrkit {algorithm} without averaging", algorithm)
    assert ratio > runs.factor, (ratio, runs.nash_conv)


def test_reading_openspiel_policies_matches_pyspiel_nash_conv(runs):
    """Where ``pyspiel.nash_conv`` works on OpenSpiel's MCCFR average policy (Kuhn: every
    information state visited), it equals cfrkit's NashConv of the policy as read, to 1e-9."""
    if runs.compiled.num_infosets > 100:
        pytest.skip("pyspiel.nash_conv fails on the MCCFR policies of larger games")
    for algorithm, solver in runs.last_openspiel.items():
        policy = solver.average_policy()
        theirs = pyspiel.nash_conv(runs.game, policy)
        ours = cfrkit.nash_conv(runs.compiled, read_policy(runs.compiled, runs.states, policy))
        assert abs(theirs - ours) <= 1e-9, (algorithm, theirs, ours)
