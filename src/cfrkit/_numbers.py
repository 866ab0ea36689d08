"""Numeric arguments: an integer as an int, a real number as a float, whichever Python or numpy
type it came as."""

from __future__ import annotations

import math

import numpy as np

__all__ = ["integer_value", "real_value"]


def integer_value(value: object) -> int | None:
    """``value`` as an int if it is an integer (a Python or numpy int, not a bool), else
    ``None``: a float, even a whole one, is not an integer argument."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        return None
    return int(value)


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
