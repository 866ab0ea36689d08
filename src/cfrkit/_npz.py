"""Reading cfrkit's ``.npz`` files: never unpickling, and what a damaged zip archive raises.

:func:`numpy.load` reads an ``.npz`` through :mod:`zipfile`, which reports a damaged archive
in several ways besides ``OSError`` and ``ValueError``, depending on which bytes were hit.
"""

from __future__ import annotations

import lzma
import zipfile
import zlib

import numpy as np

__all__ = ["DAMAGED_ZIP", "load_npz"]

#: A bad header, directory or CRC (``BadZipFile``), a member cut short (``EOFError``), a zip
#: version or compression method flipped to one zipfile lacks (``NotImplementedError``), a member
#: flagged as encrypted (``RuntimeError``), a stored member flagged as compressed whose bytes
#: do not decompress (``zlib.error``, ``lzma.LZMAError``; bz2 raises ``OSError``).
DAMAGED_ZIP: tuple[type[Exception], ...] = (
    zipfile.BadZipFile, EOFError, NotImplementedError, RuntimeError, zlib.error, lzma.LZMAError,
)


def load_npz(name: str) -> np.lib.npyio.NpzFile | np.ndarray:
    """``np.load(name, allow_pickle=False)`` of a zip archive (an ``.npz``) or an ``.npy``.

    Any other file is a ``ValueError`` saying it is not an ``.npz``: numpy would take it for a
    pickle and suggest loading it "unsafely". Damaged archives raise as listed in
    :data:`DAMAGED_ZIP`, a missing file ``FileNotFoundError``. The file is closed when the
    archive is, or at once if it cannot be read (``np.load`` of a path leaves it open when the
    zip directory is damaged).
    """
    stream = open(name, "rb")
    try:
        magic = stream.read(6)
        if not magic.startswith((b"PK", b"\x93NUMPY")):
            raise ValueError("not an .npz file")
        stream.seek(0)
        if magic.startswith(b"PK"):
            return np.lib.npyio.NpzFile(stream, own_fid=True, allow_pickle=False)
        with stream:
            return np.load(stream, allow_pickle=False)
    except BaseException:
        stream.close()
        raise
