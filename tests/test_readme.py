"""The README's Python examples run and print what the README says they print."""

import contextlib
import io
import re
from pathlib import Path

import pytest

README = Path(__file__).resolve().parent.parent / "README.md"
BLOCKS = re.findall(r"```python\n(.*?)```", README.read_text(), re.S)


@pytest.mark.parametrize("index", range(len(BLOCKS)))
def test_readme_example_runs(index):
    if "pyspiel" in BLOCKS[index]:
        pytest.importorskip("pyspiel")
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(BLOCKS[index], f"README.md block {index}", "exec"), {})
    assert out.getvalue()


def test_readme_bluffing_example_reaches_its_equilibrium():
    namespace: dict = {}
    with contextlib.redirect_stdout(io.StringIO()):
        exec(compile(BLOCKS[-1], "README.md", "exec"), namespace)
    policy = namespace["policy"]
    assert policy["coin=tails"]["bet"] == pytest.approx(1 / 3, abs=2e-3)
    assert policy["facing a bet"]["call"] == pytest.approx(2 / 3, abs=2e-3)
    assert policy["coin=heads"]["bet"] == pytest.approx(1.0, abs=2e-3)
