"""A mkdocs hook for the docs build: every public name of ``cfrkit`` has an API reference entry.

The top-level API (``cfrkit.__all__``) is documented object by object, in ``::: cfrkit.NAME``
blocks on the pages under ``docs/reference/``, so a name added to ``__all__`` would otherwise
be missing from the reference without anyone noticing. This hook reads ``__all__`` from the
source (statically: nothing is imported) and logs a warning -- which fails
``mkdocs build --strict`` -- for each name no reference page documents. Submodules documented
whole (``::: cfrkit.games``) need no check: their members are rendered from the module.
"""

from __future__ import annotations

import ast
import logging
import re
from pathlib import Path
from typing import Any

log = logging.getLogger("mkdocs.hooks.api_coverage")

_BLOCK = re.compile(r"^:::\s+(\S+)", re.M)


def _public_names(init: Path) -> list[str]:
    for node in ast.parse(init.read_text()).body:
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets
        ):
            return list(ast.literal_eval(node.value))
    return []


def on_pre_build(config: Any, **kwargs: Any) -> None:
    root = Path(config.config_file_path).parent
    reference = Path(config.docs_dir) / "reference"
    documented = {
        name for page in reference.glob("*.md") for name in _BLOCK.findall(page.read_text())
    }
    init = root / "src" / "cfrkit" / "__init__.py"
    missing = [n for n in _public_names(init) if f"cfrkit.{n}" not in documented]
    for name in missing:
        log.warning(
            "cfrkit.%s is in cfrkit.__all__ but no page under docs/reference/ documents it: "
            "add a '::: cfrkit.%s' block to the page it belongs on",
            name, name,
        )
