"""Numba kernels: arrays in, arrays out, no Python objects, no allocation per iteration.

Every kernel is ``@njit(cache=True)``; its docstring says which buffers it writes in place.
Callers (the thin Python layers) validate arguments before calling: kernels never raise for
user errors.
"""
