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
import tempfile
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

__all__ = ["STALE_SECONDS", "cannot_write_in", "file_in_the_way", "replacing"]


# a temporary file older than this beside a target is a leftover of a writer that was killed
# (SIGKILL, a lost machine) between creating and renaming it: the next write removes it. A live
# writer touches its file as it writes, and renames it seconds after.
STALE_SECONDS = 3600.0


@contextlib.contextmanager
def replacing(path: str | os.PathLike[str]) -> Iterator[Path]:
    """Yield a new, empty file's path beside ``path``; when the body returns, that file
    replaces ``path``. If the body raises, ``path`` is untouched and the new file removed.

    The new file gets the permissions of any new file under the umask (``tempfile.mkstemp``'s
    would be 0600). A symbolic link is followed: the file it points to is replaced, and the
    link stays. An existing target that is not a regular file (``/dev/null``, a named pipe) is
    yielded itself and written in place: it cannot be replaced, and holds no old contents to
    keep. Temporary files of this target left for over :data:`STALE_SECONDS` by a writer that
    was killed are removed once the new file is in place.

    Raises
    ------
    OSError
        Naming ``path``, not the temporary name: a directory in its place, a folder that does
        not exist or cannot be written, a disk that fills up while writing.
    """
    target = Path(os.path.realpath(os.fspath(path)))  # a link's file, not the link
    if target.is_dir():
        raise IsADirectoryError(errno.EISDIR, "is a directory", str(path))
    if target.exists() and not target.is_file():
        with _named(path, target):
            yield target
        return
    # the same folder: a rename must not cross file systems
    temporary = target.with_name(f".{target.name}.{uuid.uuid4().hex[:12]}.tmp")
    with _named(path, temporary):
        os.close(os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666))
    try:
        with _named(path, temporary):
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
    _remove_stale(target)


@contextlib.contextmanager
def _named(path: str | os.PathLike[str], written: Path) -> Iterator[None]:
    """An ``OSError`` about the file being ``written`` (or about no file: a full disk seen by
    a library), re-raised with ``path`` as its file name, the same subclass by its errno. An
    error naming another file, or without an errno, is left as it is."""
    try:
        yield
    except OSError as exc:
        named = exc.filename is None or str(exc.filename) in (str(written), os.fspath(path))
        if exc.errno is None or not named:
            raise
        raise OSError(exc.errno, exc.strerror, os.fspath(path)) from exc


def _remove_stale(target: Path) -> None:
    """Remove this target's temporary files older than :data:`STALE_SECONDS`."""
    prefix, now = f".{target.name}.", time.time()
    with contextlib.suppress(OSError):
        for entry in os.scandir(target.parent):
            name = entry.name
            if not (name.startswith(prefix) and name.endswith(".tmp")
                    and len(name) == len(prefix) + 16):  # 12 hex digits and ".tmp"
                continue
            with contextlib.suppress(OSError):  # gone already, or another writer's to remove
                if now - entry.stat(follow_symlinks=False).st_mtime > STALE_SECONDS:
                    os.unlink(entry.path)


def file_in_the_way(folder: str | os.PathLike[str]) -> Path | None:
    """The nearest existing path at or above ``folder`` if it is a file (so ``folder`` can be
    neither used nor created), else ``None``."""
    folder = Path(os.path.abspath(folder))
    existing = next(p for p in (folder, *folder.parents) if p.exists())  # "/" always does
    return None if existing.is_dir() else existing


def cannot_write_in(folder: str | os.PathLike[str]) -> str | None:
    """Why no file can be made in the existing ``folder`` (the ``strerror``), or ``None`` if
    one can: found by making one, since ``os.access`` says yes to root even where none can be
    made (``/proc``, a read-only mount)."""
    try:
        with tempfile.TemporaryFile(dir=folder):
            pass
    except OSError as exc:
        return exc.strerror or str(exc)
    return None
