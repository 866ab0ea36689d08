"""Writing a file so that no reader ever sees half of it, and no crash leaves it empty.

Every file cfrkit writes (checkpoints, compiled games, policies, sweep tables) goes through
:func:`replacing`: the contents go to a new file beside the target, are flushed to disk, and
then take the target's name in one rename. Another process reading the target (a sweep's
workers sharing the compiled-game cache) sees the old file or the whole new one.
"""

from __future__ import annotations

import contextlib
import errno
import os
import uuid
from collections.abc import Iterator
from pathlib import Path

__all__ = ["file_in_the_way", "replacing"]


@contextlib.contextmanager
def replacing(path: str | os.PathLike[str]) -> Iterator[Path]:
    """Yield a new, empty file's path beside ``path``; when the body returns, that file
    replaces ``path``. If the body raises, ``path`` is untouched and the new file removed.

    The new file gets the permissions of any new file under the umask (``tempfile.mkstemp``'s
    would be 0600). An ``OSError`` names ``path``, not the temporary name: a directory in its
    place, a folder that does not exist or cannot be written.
    """
    target = Path(os.fspath(path))
    if target.is_dir():
        raise IsADirectoryError(errno.EISDIR, "is a directory", str(target))
    # the same folder: a rename must not cross file systems
    temporary = target.with_name(f".{target.name}.{uuid.uuid4().hex[:12]}.tmp")
    try:
        os.close(os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666))
    except OSError as exc:
        raise OSError(exc.errno, f"cannot write: {exc.strerror}", str(target)) from exc
    try:
        yield temporary
        descriptor = os.open(temporary, os.O_RDONLY)
        try:
            os.fsync(descriptor)  # on disk before the rename, so a crash leaves no empty file
        finally:
            os.close(descriptor)
        os.replace(temporary, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise


def file_in_the_way(folder: str | os.PathLike[str]) -> Path | None:
    """The nearest existing path at or above ``folder`` if it is a file (so ``folder`` can be
    neither used nor created), else ``None``."""
    folder = Path(os.path.abspath(folder))
    existing = next(p for p in (folder, *folder.parents) if p.exists())  # "/" always does
    return None if existing.is_dir() else existing
