"""The Python examples in docs/ run (each page's blocks in order, sharing one namespace) and
print what the ```text block right after them shows, and the examples in the package's
docstrings give the output they show."""

import contextlib
import doctest
import importlib
import io
import pkgutil
import re
from pathlib import Path

import pytest

import cfrkit

DOCS = Path(__file__).resolve().parent.parent / "docs"
PAGES = sorted(p for p in DOCS.glob("*.md") if re.search(r"```python\n", p.read_text()))


#: a python block, and the text block right after it if there is one (the output it shows)
BLOCK = re.compile(r"```python\n(.*?)```(?:\s*\n```text\n(.*?)```)?", re.S)


@pytest.mark.parametrize("page", PAGES, ids=[p.name for p in PAGES])
def test_doc_examples_run(page):
    text = page.read_text()
    blocks = BLOCK.findall(text)
    if any("pyspiel" in code or "open_spiel" in code for code, _ in blocks):
        pytest.importorskip("pyspiel")
    namespace: dict = {}
    for index, (code, shown) in enumerate(blocks):
        printed = io.StringIO()
        with contextlib.redirect_stdout(printed):
            exec(compile(code, f"{page.name} block {index}", "exec"), namespace)
        if shown:
            assert printed.getvalue().strip() == shown.strip(), f"{page.name} block {index}"


MODULES = sorted(
    name for _, name, _ in pkgutil.walk_packages(cfrkit.__path__, "cfrkit.")
    if "_kernels" not in name and name != "cfrkit.__main__"  # importing it runs the CLI
)


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples_hold(name):
    if name == "cfrkit.openspiel":
        pytest.importorskip("pyspiel")
    if name == "cfrkit.plot":
        pytest.importorskip("matplotlib")
        import matplotlib

        matplotlib.use("Agg")  # the examples draw figures; no screen here
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0
