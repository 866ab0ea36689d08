"""The numeric limits cfrkit enforces, in one place, with the arithmetic that sets them.

Every quantity the kernels accumulate is a float64, which overflows past about 1.8e308 and
counts integers exactly only up to 2^53. Inputs that would take a run past either are refused
up front, with a message naming the limit, instead of turning into inf or NaN mid-run.
"""

from __future__ import annotations

__all__ = ["MAX_ABS_UTILITY", "MAX_ITERATIONS"]

MAX_ITERATIONS = 2**53
"""The most iterations a trainer runs in all. Iteration numbers ``t`` enter the regret rules'
weights as float64, which hold every integer exactly up to 2^53."""

MAX_ABS_UTILITY = 1e200
"""The largest terminal utility, in absolute value, a game may have. A pass's counterfactual
values are bounded by the largest |utility|, an instantaneous regret by twice that, and a
cumulative regret by about ``MAX_ITERATIONS**2`` times that (linear weighting, the fastest
growing rule): 1e200 * 4 * 2^106 is about 3e232, which leaves a factor of more than 1e75 below
float64's overflow for sampling weights and sums over players."""
