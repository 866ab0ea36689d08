"""cfrkit installed where nothing can be written: a system-wide, read-only install used by an
account without a home, with ``NUMBA_CACHE_DIR`` unset or pointing somewhere unusable.

numba then has no directory to cache the kernels in, and without cfrkit's fallback
(``cfrkit/_numba_cache.py``) ``import cfrkit`` raised ``RuntimeError: cannot cache function``.
Each test installs a copy of ``src/cfrkit`` (what the wheel holds: the sources and
``py.typed``, byte-compiled as pip does) in a temporary directory and runs a child Python on
it. As root, permission bits bind nobody, so the child runs without the capabilities that
override them (CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH, CAP_FOWNER, dropped from its bounding
set before exec): it stays uid 0, which owns the read-only directories, and the owner's
missing write bit stops it like any user. (Running it as ``nobody`` would not do here: the
interpreter may live under root's 0700 home.) The child checks first that it really cannot
write into the installed package.
"""

from __future__ import annotations

import compileall
import ctypes
import os
import re
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest

SOURCE = Path(__file__).resolve().parents[1] / "src" / "cfrkit"
WARNING = "cfrkit: numba found no writable directory to cache the compiled kernels"

pytestmark = pytest.mark.skipif(os.name != "posix" or not hasattr(os, "geteuid"),
                                reason="read-only directories need POSIX permissions")

# the child: the test's premise (it cannot write into the installed package), cfrkit's import
PREMISE = """\
probe = os.path.join(os.environ["CFRKIT_TEST_SITE"], "cfrkit", "probe")
try:
    open(probe, "w").close()
except PermissionError:
    pass
else:
    os.remove(probe)
    sys.exit("the installed package is writable: this test would prove nothing")
"""
IMPORT = """\
import cfrkit
print(cfrkit.__file__)
"""
RUN = """\
from cfrkit.games import KuhnPoker
t = cfrkit.CFRPlus(KuhnPoker()).iterate(100)
print(cfrkit.nash_conv(KuhnPoker(), t.average_policy()))
"""
# where numba caches each kernel cfrkit has decorated (all of them are, at import)
CACHE_PATHS = """\
from numba.core.dispatcher import Dispatcher
paths = {kernel._cache.cache_path for name, module in list(sys.modules.items())
         if name.startswith("cfrkit.") for kernel in vars(module).values()
         if isinstance(kernel, Dispatcher)}
print(len(paths), *sorted(paths), sep="\\n")
"""


def _drop_privileges() -> None:
    """preexec_fn for root: take the capabilities that ignore permission bits out of the
    bounding set, so that the exec'd child does not get them back."""
    libc = ctypes.CDLL(None, use_errno=True)
    pr_capbset_drop = 24
    for capability in (1, 2, 3):  # CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH, CAP_FOWNER
        if libc.prctl(pr_capbset_drop, capability, 0, 0, 0) != 0:
            raise OSError(ctypes.get_errno(), "prctl(PR_CAPBSET_DROP)")


def _can_drop_privileges() -> bool:
    try:
        status = Path("/proc/self/status").read_text()
    except OSError:
        return False
    effective = int(re.search(r"^CapEff:\s*([0-9a-f]+)", status, re.M).group(1), 16)
    return bool(effective & (1 << 8))  # CAP_SETPCAP: needed to shrink the bounding set


def _make_read_only(root: Path) -> None:
    for path in [root, *root.rglob("*")]:
        path.chmod(stat.S_IMODE(path.lstat().st_mode) & ~0o222)


def _make_writable(root: Path) -> None:
    for path in [root, *root.rglob("*")]:
        path.chmod(stat.S_IMODE(path.lstat().st_mode) | stat.S_IWUSR)


def _listing(root: Path) -> dict[str, tuple[int, int]]:
    return {str(p.relative_to(root)): (p.lstat().st_size, p.lstat().st_mtime_ns)
            for p in root.rglob("*")}


@pytest.fixture
def install(tmp_path):
    """A copy of cfrkit installed in ``tmp_path/site``, byte-compiled and read-only; a locked
    (read-only, empty) directory for the places that must not be creatable; a private TMPDIR.
    Returns a function that runs child code on that install and checks it wrote nothing."""
    if os.geteuid() == 0 and not _can_drop_privileges():
        pytest.skip("running as root without CAP_SETPCAP: the child would ignore permissions")
    site = tmp_path / "site"
    shutil.copytree(SOURCE, site / "cfrkit",
                    ignore=shutil.ignore_patterns("__pycache__", "*.pyc", "*.nbi", "*.nbc"))
    assert compileall.compile_dir(site, quiet=1)
    locked, tmp = tmp_path / "locked", tmp_path / "tmp"
    locked.mkdir()
    tmp.mkdir()
    _make_read_only(site)
    _make_read_only(locked)

    def run(code: str, numba_cache_dir: str | None, *, writable_install: bool = False):
        if writable_install:
            _make_writable(site)
        before = _listing(site), _listing(locked)
        env = {k: v for k, v in os.environ.items()
               if not k.startswith(("NUMBA_", "PYTHON", "CFRKIT_"))}
        env.update(PYTHONPATH=str(site), CFRKIT_TEST_SITE=str(site), TMPDIR=str(tmp),
                   HOME=str(locked / "home"), XDG_CACHE_HOME=str(locked / "xdg-cache"))
        if numba_cache_dir is not None:
            env["NUMBA_CACHE_DIR"] = numba_cache_dir
        script = "import os, sys\n" + ("" if writable_install else PREMISE) + IMPORT + code
        done = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, env=env,
                              capture_output=True, text=True, timeout=300,
                              preexec_fn=_drop_privileges if os.geteuid() == 0 else None)
        assert done.returncode == 0, done.stderr
        lines = done.stdout.splitlines()
        assert lines[0] == str(site / "cfrkit" / "__init__.py")  # the install, not the checkout
        if not writable_install:
            assert _listing(site) == before[0], "the child wrote into the installed package"
        assert _listing(locked) == before[1]
        assert list(tmp.iterdir()) == [], "the temporary cache directory outlived the process"
        return lines[1:], done.stderr

    yield run
    _make_writable(tmp_path)


def _the_warning(stderr: str) -> str:
    """The one warning in ``stderr``, which must be the cache's."""
    warnings = [line for line in stderr.splitlines() if "Warning" in line]
    assert len(warnings) == 1 and WARNING in warnings[0], stderr
    assert stderr.count(WARNING) == 1
    return warnings[0]


def test_a_read_only_install_runs_with_one_warning(install, tmp_path):
    # NUMBA_CACHE_DIR names a directory that cannot be created; HOME and XDG_CACHE_HOME too
    unusable = str(tmp_path / "locked" / "numba-cache")
    out, stderr = install(RUN + CACHE_PATHS, unusable)
    nash_conv = float(out[0])
    assert 0 < nash_conv < 0.01
    warning = _the_warning(stderr)
    assert re.match(r"<string>:\d+: UserWarning: ", warning)  # names the import, not cfrkit
    assert f"NUMBA_CACHE_DIR={unusable!r}" in warning
    temporary = re.search(r"temporary directory (\S+) for", warning).group(1)
    assert Path(temporary).parent == tmp_path / "tmp"
    count, *paths = out[1:]
    assert int(count) == len(paths) > 0
    assert all(p.startswith(temporary + os.sep) for p in paths), paths


@pytest.mark.parametrize("numba_cache_dir", ["unset", "read-only", "a file"])
def test_other_unusable_numba_cache_dirs_warn_once_at_import(install, tmp_path,
                                                              numba_cache_dir):
    path = {"unset": None, "read-only": str(tmp_path / "locked"),
            "a file": str(tmp_path / "site" / "cfrkit" / "py.typed")}[numba_cache_dir]
    _, stderr = install("", path)
    warning = _the_warning(stderr)
    assert ("no NUMBA_CACHE_DIR" in warning) == (path is None)


@pytest.mark.parametrize("where", ["NUMBA_CACHE_DIR", "beside the sources"])
def test_no_warning_where_numba_can_cache(install, tmp_path, where):
    if where == "NUMBA_CACHE_DIR":
        expected = tmp_path / "cache"  # numba makes it
        out, stderr = install(CACHE_PATHS, str(expected))
    else:
        expected = tmp_path / "site" / "cfrkit"
        out, stderr = install(CACHE_PATHS, None, writable_install=True)
    assert stderr == ""
    count, *paths = out
    assert int(count) == len(paths) > 0
    assert all(p.startswith(str(expected) + os.sep) for p in paths), paths
