"""Short text for error messages: a value shown whole when small, cut when not; another
library's exception by its first line."""

from __future__ import annotations

__all__ = ["counted", "first_line", "short_repr"]


def counted(count: int, noun: str) -> str:
    """``"1 value"``, ``"2 values"``: a count and its noun, in the plural unless it is 1."""
    return f"{count:,} {noun}" if count == 1 else f"{count:,} {noun}s"


def short_repr(obj: object, limit: int = 80) -> str:
    """``repr(obj)``, cut in the middle past ``limit`` characters; a placeholder if it raises.

    The head and the last few characters both survive, so a 400-digit integer still shows its
    size and a long key its end. A user's ``__repr__`` may fail; the message must not.
    """
    try:
        text = repr(obj)
    except Exception as exc:
        return f"<{type(obj).__name__} object; its repr() raised {type(exc).__name__}>"
    if len(text) <= limit:
        return text
    tail = min(8, limit // 4)
    return f"{text[: limit - tail - 3]}...{text[-tail:]}"


def first_line(exc: BaseException) -> str:
    """The first line of ``str(exc)``, or its type's name if that is empty: what is wrong,
    without the lists and traces C++ libraries and Ray append."""
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__
