"""The exact value of a two-player zero-sum game by its sequence-form linear program.

Independent of every solver and of the compiler: it walks the user's :class:`cfrkit.Game`
objects itself (``root``, ``child``, ``infoset_key``, ...), builds the realisation-plan
constraints ``E x = e``, ``F y = f`` and the payoff matrix ``A`` (player 0's chance-weighted
payoff per pair of sequences), and solves

    max_{x, v}  f'v   subject to   F'v <= A'x,  E x = e,  x >= 0        (player 0's LP)

with ``scipy.optimize.linprog`` (HiGHS), and the same program for player 1 on ``-A'``. By
strong duality both give the game value (Koller, Megiddo and von Stengel 1996).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass
class SequenceForm:
    payoff: np.ndarray  # A[seq0, seq1], player 0's payoff
    constraints: tuple  # ((E, e), (F, f))
    sequences: tuple  # per player {(): 0, (infoset key, action): column}
    parents: tuple  # per player {infoset key: parent sequence}
    actions: tuple  # per player {infoset key: actions}


def sequence_form(game) -> SequenceForm:
    """Walk ``game`` (two players, zero-sum, perfect recall) into its sequence form."""
    sequences = ({(): 0}, {(): 0})
    parents: tuple[dict, dict] = ({}, {})
    actions: tuple[dict, dict] = ({}, {})
    payoff: dict = {}

    def walk(history, last, probability):
        if history.is_terminal():
            u = history.utilities()
            if abs(u[0] + u[1]) > 1e-12:
                raise ValueError(f"not zero-sum at {history!r}: {u}")
            cell = (sequences[0][last[0]], sequences[1][last[1]])
            payoff[cell] = payoff.get(cell, 0.0) + probability * u[0]
            return
        if history.is_chance():
            for outcome, p in history.chance_outcomes():
                walk(history.child(outcome), last, probability * p)
            return
        player, key = history.current_player(), history.infoset_key()
        if parents[player].setdefault(key, last[player]) != last[player]:
            raise ValueError(f"imperfect recall at {key!r}")
        actions[player][key] = tuple(history.actions())
        for action in actions[player][key]:
            sequence = (key, action)
            sequences[player].setdefault(sequence, len(sequences[player]))
            following = list(last)
            following[player] = sequence
            walk(history.child(action), tuple(following), probability)

    walk(game.root(), ((), ()), 1.0)

    def realisation_constraints(player):
        columns = sequences[player]
        matrix = np.zeros((1 + len(actions[player]), len(columns)))
        matrix[0, 0] = 1.0  # the empty sequence is played with probability 1
        for row, (key, labels) in enumerate(actions[player].items(), start=1):
            matrix[row, columns[parents[player][key]]] = -1.0
            for action in labels:
                matrix[row, columns[(key, action)]] = 1.0
        rhs = np.zeros(matrix.shape[0])
        rhs[0] = 1.0
        return matrix, rhs

    A = np.zeros((len(sequences[0]), len(sequences[1])))
    for (row, column), value in payoff.items():
        A[row, column] = value
    return SequenceForm(A, (realisation_constraints(0), realisation_constraints(1)),
                        sequences, parents, actions)


def _maximiser(A, E, e, F, f):
    """max_x min_y x'Ay: the value and the maximiser's realisation plan."""
    from scipy.optimize import linprog

    nx, nv = E.shape[1], F.shape[0]
    cost = np.concatenate([np.zeros(nx), -f])
    result = linprog(
        cost,
        A_ub=np.hstack([-A.T, F.T]), b_ub=np.zeros(F.shape[1]),
        A_eq=np.hstack([E, np.zeros((E.shape[0], nv))]), b_eq=e,
        bounds=[(0, None)] * nx + [(None, None)] * nv,
        method="highs",
    )
    if result.status != 0:
        raise RuntimeError(result.message)
    return -result.fun, result.x[:nx]


def solve(game):
    """``(value for player 0 by player 0's LP, the same by player 1's LP, equilibrium dict)``.

    The equilibrium is ``{infoset key: {action: probability}}`` from the two realisation plans
    (uniform where a plan never reaches the infoset).
    """
    form = sequence_form(game)
    (E, e), (F, f) = form.constraints
    value0, x = _maximiser(form.payoff, E, e, F, f)
    value1, y = _maximiser(-form.payoff.T, F, f, E, e)
    policy = {}
    for player, plan in ((0, x), (1, y)):
        columns = form.sequences[player]
        for key, labels in form.actions[player].items():
            reach = plan[columns[form.parents[player][key]]]
            row = np.array([max(plan[columns[(key, a)]], 0.0) for a in labels])
            if reach <= 1e-12 or row.sum() <= 0:
                row = np.ones(len(labels))
            policy[key] = dict(zip(labels, row / row.sum()))
    return value0, -value1, policy
