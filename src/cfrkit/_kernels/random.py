"""A small seeded generator for the kernels: xoshiro256** (Blackman and Vigna 2018).

Its whole state is a ``uint64[4]`` array owned by the trainer, so two trainers never share a
stream and the same seed gives bit-identical runs (numba's global ``np.random`` state would be
shared by every caller in the process).
"""

from __future__ import annotations

import numpy as np
from numba import njit

_MASK = (1 << 64) - 1


def seed_state(seed: int) -> np.ndarray:
    """Expand ``seed`` into a xoshiro256** state with splitmix64, as the authors recommend."""
    x = seed & _MASK
    state = np.empty(4, dtype=np.uint64)
    for i in range(4):
        x = (x + 0x9E3779B97F4A7C15) & _MASK
        z = x
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK
        state[i] = z ^ (z >> 31)
    return state


@njit(cache=True, inline="always")
def _rotl(x, k):
    return (x << np.uint64(k)) | (x >> np.uint64(64 - k))


@njit(cache=True, nogil=True, _nrt=False)
def next_uint64(state: np.ndarray) -> np.uint64:
    """The next 64 random bits; advances ``state`` in place."""
    s0, s1, s2, s3 = state[0], state[1], state[2], state[3]
    result = _rotl(s1 * np.uint64(5), 7) * np.uint64(9)
    t = s1 << np.uint64(17)
    s2 ^= s0
    s3 ^= s1
    s1 ^= s2
    s0 ^= s3
    s2 ^= t
    s3 = _rotl(s3, 45)
    state[0], state[1], state[2], state[3] = s0, s1, s2, s3
    return result


@njit(cache=True, nogil=True, _nrt=False)
def next_double(state: np.ndarray) -> float:
    """A uniform double in ``[0, 1)`` from the top 53 bits; advances ``state`` in place."""
    return float(next_uint64(state) >> np.uint64(11)) * (1.0 / 9007199254740992.0)


# xoshiro256**'s jump polynomial: applying it advances a state by 2**128 draws
_JUMP = np.array(
    [0x180EC6D33CFD0ABA, 0xD5A61266F0C9392C, 0xA9582618E03FC9AA, 0x39ABDC4529B1661C],
    dtype=np.uint64,
)


@njit(cache=True, nogil=True, _nrt=False)
def _jump_into(state: np.ndarray, out: np.ndarray, polynomial: np.ndarray) -> None:
    """``out`` = ``state`` advanced by ``2**128`` draws (the authors' ``jump``); ``state`` is
    consumed. The transitions are :func:`next_uint64`'s, their outputs unused."""
    for i in range(4):
        out[i] = 0
    for word in polynomial:
        for bit in range(64):
            if (word >> np.uint64(bit)) & np.uint64(1):
                for i in range(4):
                    out[i] ^= state[i]
            next_uint64(state)


def jump(state: np.ndarray) -> np.ndarray:
    """``state`` advanced by ``2**128`` draws: a new state whose stream does not meet the old
    one's for ``2**128`` draws."""
    out = np.empty(4, dtype=np.uint64)
    _jump_into(np.array(state, dtype=np.uint64), out, _JUMP)
    return out


def stream_states(seed: int, streams: int) -> np.ndarray:
    """``uint64[streams, 4]``: row 0 is ``seed``'s state (:func:`seed_state`), row ``j`` is row
    ``j - 1`` jumped by ``2**128`` draws -- non-overlapping streams for parallel samples."""
    states = np.empty((streams, 4), dtype=np.uint64)
    if streams:
        states[0] = seed_state(seed)
    for j in range(1, streams):
        states[j] = jump(states[j - 1])
    return states
