"""Let cfrkit's ``@njit(cache=True)`` kernels load where numba finds nowhere to cache them.

numba picks a cache directory for each cached function when it is decorated, at import: the
first of ``NUMBA_CACHE_DIR``, the ``__pycache__`` beside the source file and the user-wide
cache directory (``$XDG_CACHE_HOME/numba``, ``~/.cache/numba``) that it can write to. When none
is writable -- a system-wide, read-only install used by an account without a home, say -- the
decorator raises ``RuntimeError: cannot cache function ...: no locator available`` and
``import cfrkit`` fails.

This module adds one more locator after numba's own, for cfrkit's files only: a temporary
directory made on first need (``tempfile.mkdtemp``, private to the user) and removed when the
process exits. numba consults it only when its own locators have all declined, so wherever
numba can cache (the ordinary case) nothing changes and nothing is checked at import beyond
numba's own checks. When it is used, one warning per process says so, since every process
then compiles the kernels again (a few seconds). It must run before the first cfrkit kernel
is decorated: ``cfrkit/__init__.py`` imports it first.

It also stamps each cached kernel with its own file *and every other kernel file*. numba
invalidates a cached function only when its own file changes, but a kernel inlines functions of
other files (``inline="always"``): after an edit of ``queued_pass.py`` alone, ``drivers.py``'s
cached kernels would go on running the old code. Installed packages get fresh files and caches
anyway; this is for a working copy, where a stale kernel would go unnoticed.
"""

from __future__ import annotations

import atexit
import functools
import hashlib
import importlib
import os
import shutil
import sys
import tempfile
import warnings

import numba
from numba.core import config

__all__: list[str] = []

_PACKAGE = os.path.dirname(os.path.abspath(__file__)) + os.sep
_KERNELS = os.path.join(_PACKAGE, "_kernels") + os.sep
_directory: str | None = None


def _temporary_directory() -> str:
    """The process's temporary cache directory, made (and the warning given) on first call."""
    global _directory
    if _directory is None:
        _directory = tempfile.mkdtemp(prefix="cfrkit-numba-cache-")
        atexit.register(_remove, _directory, os.getpid())
        given = config.CACHE_DIR
        tried = f"NUMBA_CACHE_DIR={given!r}" if given else "no NUMBA_CACHE_DIR"
        warnings.warn(
            f"cfrkit: numba found no writable directory to cache the compiled kernels in ({tried}, "
            f"__pycache__ beside the sources in {_PACKAGE.rstrip(os.sep)}, the user cache "
            f"directory); they are cached in the temporary directory {_directory} for this "
            "process only, so every new process compiles them again (a few seconds). Set "
            "NUMBA_CACHE_DIR to a writable directory to keep them between runs.",
            UserWarning,
            stacklevel=_user_stacklevel(),
        )
    return _directory


@functools.lru_cache(maxsize=None)
def _file_digest(path: str, mtime_ns: int, size: int) -> bytes:
    with open(path, "rb") as stream:
        return hashlib.sha256(stream.read()).digest()


def kernel_sources_digest(folder: str = _KERNELS) -> bytes:
    """One SHA-256 over the name and content of every ``.py`` file of ``folder`` (the kernels):
    part of every kernel's cache stamp."""
    digest = hashlib.sha256()
    for name in sorted(os.listdir(folder)):
        if name.endswith(".py"):
            path = os.path.join(folder, name)
            stat = os.stat(path)
            digest.update(name.encode() + b"\0" + _file_digest(path, stat.st_mtime_ns, stat.st_size))
    return digest.digest()


def _remove(directory: str, pid: int) -> None:
    # a forked child inherits the handler: only the process that made the directory removes it
    if os.getpid() == pid:
        shutil.rmtree(directory, ignore_errors=True)


def _user_stacklevel() -> int:
    """The stack level of the first frame outside cfrkit, numba and the import machinery, so
    that the warning names the user's ``import cfrkit`` line."""
    internal = (_PACKAGE, "<frozen importlib",
                *(os.path.dirname(os.path.abspath(m.__file__)) + os.sep
                  for m in (numba, importlib)))
    frame, level = sys._getframe(1), 1  # level 1: the frame that calls warnings.warn
    while frame is not None and frame.f_code.co_filename.startswith(internal):
        frame = frame.f_back
        # warnings.warn skips the import machinery's frames without counting them: so do we
        name = frame.f_code.co_filename if frame is not None else ""
        if not ("importlib" in name and "_bootstrap" in name):
            level += 1
    return level if frame is not None else 1


def _install() -> None:
    try:
        from numba.core.caching import CacheImpl, _CacheLocator, _SourceFileBackedLocatorMixin
    except ImportError:  # numba reorganised: leave its behaviour as it is
        return

    class TemporaryCacheLocator(_SourceFileBackedLocatorMixin, _CacheLocator):
        """numba's last resort for cfrkit's kernels: a per-process temporary directory."""

        def __init__(self, py_func, py_file):
            self._py_file = py_file
            self._lineno = py_func.__code__.co_firstlineno
            self._cache_path = os.path.join(_temporary_directory(),
                                            self.get_suitable_cache_subpath(py_file))

        def get_cache_path(self):
            return self._cache_path

        @classmethod
        def from_function(cls, py_func, py_file):
            if not os.path.abspath(py_file).startswith(_PACKAGE):
                return None  # not cfrkit's: numba's behaviour stays as it is
            try:
                return super().from_function(py_func, py_file)
            except OSError:  # no usable temporary directory either: numba raises its error
                return None

    class KernelSourcesStamp:
        """Put before a locator class: the same place for cfrkit's kernels (any other function
        goes on to numba's own classes), stamped with every kernel file's content too."""

        @classmethod
        def from_function(cls, py_func, py_file):
            if not os.path.abspath(py_file).startswith(_KERNELS):
                return None
            return super().from_function(py_func, py_file)

        def get_source_stamp(self):
            stamp = super().get_source_stamp()
            try:
                return stamp, kernel_sources_digest()
            except OSError:  # the sources cannot be read (a frozen application): numba's own
                return stamp

    locators = CacheImpl._locator_classes
    if any(c.__module__ == __name__ for c in locators):
        return  # installed already
    locators.append(TemporaryCacheLocator)
    stamped = [type(f"KernelSources{c.__name__}", (KernelSourcesStamp, c), {"__module__": __name__})
               for c in locators]
    locators[:0] = stamped


_install()
