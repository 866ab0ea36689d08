"""A griffe extension for the docs build: Sphinx cross-reference roles in cfrkit's docstrings.

The docstrings write references the Sphinx way (:class:`Trainer`, :meth:`~cfrkit.Policy.from_dict`,
:func:`cfrkit.compile_game`). mkdocstrings renders Markdown, where a role would show up
literally (":class:" followed by code). This extension rewrites each role, before the
docstring is parsed, into an *optional* mkdocs-autorefs link around the code text:

* the target is resolved the way Sphinx does -- a dotted ``cfrkit...`` path as written, any
  other name in the scope of the documented object (its members, then its parents', then the
  names its module imports) -- and becomes a link when the site documents it;
* a target the site does not document (a private helper, a builtin such as ``ValueError``, an
  object not written yet) stays plain code, without a warning;
* the text shown is Sphinx's: the last component for ``~a.b.c``, ``()`` after functions and
  methods, ``title`` for ``title <target>``.

It also drops the reStructuredText literal-block marker the way Sphinx shows it ("follow::" ends
in one colon; the indented block after it is a code block in Markdown too).

Only the docs build uses this file (mkdocs.yml, ``plugins.mkdocstrings...extensions``); the
docstrings in src/ are unchanged.
"""

from __future__ import annotations

import html
import re
from typing import Any

import griffe

_ROLE = re.compile(
    r":(?:py:)?(?P<role>class|func|meth|attr|mod|data|exc|obj|const):`(?P<body>[^`]+)`"
)
_EXPLICIT = re.compile(r"^(?P<title>.+?)\s*<(?P<target>[^<>]+)>$")
_CALLABLE_ROLES = {"func", "meth"}
_LITERAL_AFTER_WORD = re.compile(r"(?<=\S)::[ \t]*$", re.M)  # "follow::" -> "follow:"
_LITERAL_ALONE = re.compile(r"[ \t]+::[ \t]*$|^[ \t]*::[ \t]*$", re.M)  # "x ::", "::" -> dropped


def _resolve(obj: griffe.Object, target: str) -> str | None:
    """The full path ``target`` names in ``obj``'s scope, or ``None``."""
    if target.startswith("."):  # relative module paths: too rare here to resolve
        return None
    if target == "cfrkit" or target.startswith("cfrkit."):
        return target
    first, _, rest = target.partition(".")
    try:
        path = obj.resolve(first)
    except (griffe.NameResolutionError, griffe.AliasResolutionError, KeyError):
        return None
    if not path.startswith("cfrkit"):
        return None
    path = f"{path}.{rest}" if rest else path
    try:  # where the object is defined: the path the site registers besides the public one
        return obj.modules_collection[path].canonical_path
    except Exception:  # noqa: BLE001 -- any lookup failure leaves the path as resolved
        return path


def _rewrite(obj: griffe.Object, text: str) -> str:
    def replace(match: re.Match[str]) -> str:
        role, body = match["role"], match["body"].strip()
        explicit = _EXPLICIT.match(body)
        if explicit:
            title, target = explicit["title"], explicit["target"].strip()
        else:
            target = body.lstrip("~!")
            title = target.rsplit(".", 1)[-1] if body.startswith("~") else target
            if role in _CALLABLE_ROLES:
                title += "()"
        code = f"<code>{html.escape(title)}</code>"
        path = None if body.startswith("!") else _resolve(obj, target.lstrip("~!"))
        if path is None:
            return code
        return f'<autoref identifier="{html.escape(path)}" optional>{code}</autoref>'

    text = _ROLE.sub(replace, text)
    return _LITERAL_ALONE.sub("", _LITERAL_AFTER_WORD.sub(":", text))


def _objects(obj: griffe.Object):
    yield obj
    for member in obj.members.values():
        if member.is_alias:
            continue
        yield from _objects(member)


class SphinxRoles(griffe.Extension):
    """Rewrite Sphinx roles in the docstrings of the ``cfrkit`` package (see the module doc)."""

    def on_package(self, *, pkg: griffe.Module, **kwargs: Any) -> None:
        if pkg.name != "cfrkit":
            return
        for obj in _objects(pkg):
            if obj.docstring is not None and ":" in obj.docstring.value:
                obj.docstring.value = _rewrite(obj, obj.docstring.value)
