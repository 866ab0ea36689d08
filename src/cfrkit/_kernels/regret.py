"""Regret matching (Hart and Mas-Colell 2000), the strategy rule inside CFR."""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True, _nrt=False, inline="always")
def match_infoset(regret: np.ndarray, probs: np.ndarray, start: int, end: int) -> None:
    """Regret matching for one infoset whose actions occupy slots ``[start, end)``.

    ``sigma(I, a) = max(R(I, a), 0) / sum_b max(R(I, b), 0)``, or uniform over the actions of
    ``I`` when no regret is positive. Writes ``probs[start:end]`` in place.
    """
    # branch-free positive parts: whether a regret is positive is unpredictable
    total = 0.0
    for slot in range(start, end):
        total += max(regret[slot], 0.0)
    if total > 0.0:
        scale = 1.0 / total  # one division per infoset
        for slot in range(start, end):
            probs[slot] = max(regret[slot], 0.0) * scale
    else:
        uniform = 1.0 / (end - start)
        for slot in range(start, end):
            probs[slot] = uniform


@njit(cache=True, _nrt=False)
def regret_matching(
    regret: np.ndarray,
    probs: np.ndarray,
    first_slot: np.ndarray,
    num_actions: np.ndarray,
    locked: np.ndarray,
    first_infoset: int,
    end_infoset: int,
) -> None:
    """:func:`match_infoset` for the infosets ``[first_infoset, end_infoset)`` not ``locked``.

    Locked infosets keep their (fixed) strategy. Writes ``probs`` in place.
    """
    for infoset in range(first_infoset, end_infoset):
        if not locked[infoset]:
            start = first_slot[infoset]
            match_infoset(regret, probs, start, start + num_actions[infoset])
