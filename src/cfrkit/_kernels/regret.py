"""Regret matching (Hart and Mas-Colell 2000), the strategy rule inside CFR."""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True)
def regret_matching(
    regret: np.ndarray,
    probs: np.ndarray,
    first_slot: np.ndarray,
    num_actions: np.ndarray,
    first_infoset: int,
    end_infoset: int,
) -> None:
    """Set the current strategy of infosets ``[first_infoset, end_infoset)`` from their regrets.

    ``sigma(I, a) = max(R(I, a), 0) / sum_b max(R(I, b), 0)``, or uniform over the actions of
    ``I`` when no regret is positive.

    Writes ``probs[first_slot[I] : first_slot[I] + num_actions[I]]`` in place for each ``I``.
    """
    for infoset in range(first_infoset, end_infoset):
        start = first_slot[infoset]
        end = start + num_actions[infoset]
        total = 0.0
        for slot in range(start, end):
            if regret[slot] > 0.0:
                total += regret[slot]
        if total > 0.0:
            for slot in range(start, end):
                r = regret[slot]
                probs[slot] = r / total if r > 0.0 else 0.0
        else:
            uniform = 1.0 / (end - start)
            for slot in range(start, end):
                probs[slot] = uniform
