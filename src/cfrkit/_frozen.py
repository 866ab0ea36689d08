"""Arrays nobody can write to: results and rules handed to users."""

from __future__ import annotations

import numpy as np

__all__ = ["frozen_copy"]


def frozen_copy(values: object, dtype: object = None) -> np.ndarray:
    """A read-only copy of ``values`` over an immutable ``bytes`` object, so that not even
    ``setflags(write=True)`` can open it again (an array owning its memory could be)."""
    array = np.ascontiguousarray(values, dtype=dtype)
    frozen = np.frombuffer(array.tobytes(), dtype=array.dtype)
    # a 1-D one keeps the bytes as its base (Policy.table reads it from there)
    return frozen if array.ndim == 1 else frozen.reshape(array.shape)
