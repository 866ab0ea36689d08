"""The Python examples in docs/ run (each page's blocks in order, sharing one namespace)."""

import contextlib
import io
import re
from pathlib import Path

import pytest

DOCS = Path(__file__).resolve().parent.parent / "docs"
PAGES = sorted(p for p in DOCS.glob("*.md") if re.search(r"```python\n", p.read_text()))


@pytest.mark.parametrize("page", PAGES, ids=[p.name for p in PAGES])
def test_doc_examples_run(page):
    blocks = re.findall(r"```python\n(.*?)```", page.read_text(), re.S)
    if any("pyspiel" in b or "open_spiel" in b for b in blocks):
        pytest.importorskip("pyspiel")
    namespace: dict = {}
    with contextlib.redirect_stdout(io.StringIO()):
        for index, block in enumerate(blocks):
            exec(compile(block, f"{page.name} block {index}", "exec"), namespace)
