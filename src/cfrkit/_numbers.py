"""Numeric arguments: a real number as a float, whichever Python or numpy type it came as."""

from __future__ import annotations

import math

import numpy as np

__all__ = ["real_value"]


def real_value(value: object) -> float | None:
    """``value`` as a float if it is a real number (a Python or numpy int or float, not a
    bool), else ``None``.

    An int beyond float64's range comes back as ``inf`` or ``-inf`` rather than raising
    ``OverflowError``, so the caller's range check refuses it with its own message.
    """
    if isinstance(value, (bool, np.bool_)) or not isinstance(
        value, (int, float, np.integer, np.floating)
    ):
        return None
    try:
        return float(value)
    except OverflowError:
        return math.inf if value > 0 else -math.inf
