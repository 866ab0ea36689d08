"""Numeric and boolean arguments: an integer as an int, a real number as a float, a bool as a
bool, whichever Python or numpy type it came as."""

from __future__ import annotations

import math

import numpy as np

from ._text import short_repr

__all__ = ["check_bool", "integer_value", "real_value"]


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


def check_bool(name: str, value: object) -> bool:
    """``value`` as a bool if it is one (Python's or numpy's), else a ValueError naming the
    argument: ``1`` or ``"no"`` is not a switch."""
    if not isinstance(value, (bool, np.bool_)):
        raise ValueError(f"{name} must be a bool, got {short_repr(value)}")
    return bool(value)
