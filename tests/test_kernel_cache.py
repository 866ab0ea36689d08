"""numba's cache of cfrkit's kernels: a kernel is stamped with every kernel file.

numba invalidates a cached function only when its own file changes, but a kernel inlines or
calls functions of other kernel files: after an edit of ``queued_pass.py`` alone, the cached
``drivers.run_pruned`` ran the old code (``cfrkit/_numba_cache.py``).
"""

from __future__ import annotations

import shutil
from pathlib import Path

from numba.core.caching import CacheImpl

import cfrkit
from cfrkit import _numba_cache
from cfrkit._kernels import drivers

KERNELS = Path(cfrkit.__file__).parent / "_kernels"


def test_a_kernel_is_stamped_with_every_kernel_file():
    stamp = drivers.run_pruned._cache._cache_file._source_stamp  # numba's record, as it checks it
    assert stamp[1] == _numba_cache.kernel_sources_digest()


def test_the_digest_follows_any_kernel_file(tmp_path):
    copy = tmp_path / "_kernels"
    shutil.copytree(KERNELS, copy, ignore=shutil.ignore_patterns("__pycache__"))
    digest = _numba_cache.kernel_sources_digest
    assert digest(str(copy)) == digest()
    edited = copy / "queued_pass.py"
    edited.write_text(edited.read_text() + "\n# an edit that changes nothing numba stamps\n")
    assert digest(str(copy)) != digest()


def test_other_functions_keep_numbas_locators(tmp_path):
    def f():
        return 1

    ours = [c for c in CacheImpl._locator_classes if c.__module__ == _numba_cache.__name__]
    assert ours  # installed: the stamped ones first, the temporary directory's last
    for cls in ours:
        assert cls.from_function(f, str(tmp_path / "elsewhere.py")) is None
