"""Every script in examples/ runs in its quick mode and writes its figures.

Scripts are found, not listed: every ``examples/*.py`` whose name does not start with ``_``
(helpers) is run in a subprocess with ``CFRKIT_EXAMPLES_QUICK=1`` and ``--out`` pointing at a
fresh directory, and must exit with status 0 having written at least one non-empty PNG there.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SCRIPTS = sorted(p for p in (ROOT / "examples").glob("*.py") if not p.name.startswith("_"))


def test_examples_are_found():
    assert SCRIPTS, "no scripts in examples/"


@pytest.mark.parametrize("script", SCRIPTS, ids=[p.name for p in SCRIPTS])
def test_example_runs_quick_and_writes_figures(script, tmp_path):
    pytest.importorskip("matplotlib")
    out = tmp_path / "out"
    env = dict(os.environ, CFRKIT_EXAMPLES_QUICK="1", MPLBACKEND="Agg", CFRKIT_QUIET="1")
    src = str(ROOT / "src")  # run against this checkout, installed or not
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [src, env.get("PYTHONPATH")]))
    result = subprocess.run(
        [sys.executable, str(script), "--out", str(out)],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600,
    )
    assert result.returncode == 0, (
        f"{script.name} exited with {result.returncode}\n--- stdout (tail)\n"
        f"{result.stdout[-3000:]}\n--- stderr (tail)\n{result.stderr[-3000:]}"
    )
    log = out / "output.txt"  # what the script printed, beside its figures
    assert log.is_file() and result.stdout.strip() and result.stdout in log.read_text()
    figures = sorted(out.rglob("*.png"))
    assert figures, f"{script.name} wrote no PNG into --out {out}"
    empty = [f.name for f in figures if f.stat().st_size == 0]
    assert not empty, f"{script.name} wrote empty figures: {empty}"
