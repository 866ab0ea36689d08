"""Reading cfrkit's ``.npz`` files: never unpickling, and what a damaged zip archive raises.

:func:`numpy.load` reads an ``.npz`` through :mod:`zipfile`, which reports a damaged archive
in several ways besides ``OSError`` and ``ValueError``, depending on which bytes were hit.
"""

from __future__ import annotations

import json
import lzma
import zipfile
import zlib

import numpy as np

__all__ = ["DAMAGED_ZIP", "load_npz", "other_kind"]

# cfrkit's .npz formats, by the "format" of their metadata: what a file of each kind is
_KINDS = {
    "cfrkit.checkpoint": "a trainer checkpoint (cfrkit.load_trainer reads it)",
    "cfrkit.compiled_game": "a compiled game (cfrkit.load_compiled reads it)",
}

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


def other_kind(data: np.lib.npyio.NpzFile, expected: str) -> str | None:
    """What ``data`` is if its ``metadata`` entry says it is another of cfrkit's formats than
    ``expected`` (``"a compiled game (...)"``), else ``None``: for a message that names the
    file someone passed to the wrong reader. The entry is JSON, as UTF-8 bytes in a uint8
    array (compiled games) or as a string (checkpoints)."""
    try:
        raw = data["metadata"]
        text = raw.tobytes().decode("utf-8") if raw.dtype == np.uint8 else str(raw)
        found = json.loads(text).get("format")
    except Exception:  # no metadata, not JSON, not an object: not one of ours
        return None
    return _KINDS.get(found) if found != expected else None
