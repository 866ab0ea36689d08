"""The reproduction scripts of part e run in quick mode and write their figures.

The contract every ``examples/*.py`` follows: ``CFRKIT_EXAMPLES_QUICK=1`` (or ``--quick``)
makes a run of a few seconds, ``--out DIR`` says where the PNGs go, exit status 0.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("matplotlib")

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"
SCRIPTS = {
    "result_table_poker.py": {"nashconv.png", "strategy_post.png", "strategy_learner.png",
                              "strategy_cfr.png"},
    "openspiel_report_2020.py": {"exploitability_kuhn.png", "exploitability_leduc.png"},
}


@pytest.mark.parametrize("script", sorted(SCRIPTS))
def test_example_runs_quick_and_writes_figures(script, tmp_path):
    env = dict(os.environ, CFRKIT_EXAMPLES_QUICK="1", MPLBACKEND="Agg")
    src = str(ROOT / "src")
    env["PYTHONPATH"] = src + os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else src
    done = subprocess.run(
        [sys.executable, str(EXAMPLES / script), "--out", str(tmp_path)],
        env=env, capture_output=True, text=True, timeout=120, check=False,
    )
    assert done.returncode == 0, f"{script} failed:\n{done.stdout[-2000:]}\n{done.stderr[-4000:]}"
    written = {p.name for p in tmp_path.glob("*.png")}
    assert SCRIPTS[script] <= written, f"{script} wrote {sorted(written)}"
    for name in SCRIPTS[script]:
        assert (tmp_path / name).stat().st_size > 1000
    assert "quick" in done.stdout
