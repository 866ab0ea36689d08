"""Numba kernels: arrays in, arrays out, no Python objects, no allocation per iteration.

Every kernel is ``@njit(cache=True)``, and those called from Python release the GIL
(``nogil=True``): other Python threads keep running while a kernel works. A kernel's docstring
says which buffers it writes in place.
Callers (the thin Python layers) validate arguments before calling: kernels never raise for
user errors.
"""
