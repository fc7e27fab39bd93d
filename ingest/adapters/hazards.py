"""What no record may hold in any field: text that is not Unicode, nesting without end.

A lone surrogate (a JSON ``\\ud800`` escape without its pair) is a Python string but not
text: hashing, storing or printing it fails far from where it came in. Values nested
hundreds deep (``facts``, ``action.parameters``) exhaust the stack of every recursive
walk after validation (redaction, sanitizing, JSON encoding). Both are refused here,
with the field's path, before any model or walk sees the record. This walk is itself
iterative, so no input can exhaust its stack.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

__all__ = ["MAX_DEPTH", "Loc", "hazards", "printable"]

MAX_DEPTH = 64  # objects and lists inside each other; real facts stay under ten
_MAX_REPORTED = 10
_SURROGATE = re.compile("[\ud800-\udfff]")


def printable(text: str) -> str:
    """``text`` with each lone surrogate written as its escape (``\\ud800``): safe to print."""
    return _SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


Loc = tuple[str | int, ...]


def hazards(raw: Mapping[str, Any]) -> list[tuple[Loc, str]]:
    """(where, message) for each lone surrogate and each value nested too deep.

    Where is a location as pydantic gives one (``('facts', 'k', 2)``); a value nested too
    deep is reported at the field that holds it.
    """
    found: list[tuple[Loc, str]] = []
    stack: list[tuple[object, Loc]] = [(raw, ())]
    while stack and len(found) < _MAX_REPORTED:
        value, path = stack.pop()
        if isinstance(value, str):
            _check_text(value, path, found)
        elif isinstance(value, Mapping | list | tuple):
            if len(path) > MAX_DEPTH:
                found.append((path[:2], _too_deep()))
                continue
            stack.extend(reversed(list(_children(value, path, found))))
    return found


def _children(
    value: Mapping[Any, Any] | list[Any] | tuple[Any, ...], path: Loc, found: list[tuple[Loc, str]]
) -> list[tuple[object, Loc]]:
    if not isinstance(value, Mapping):
        return [(item, (*path, n)) for n, item in enumerate(value)]
    children: list[tuple[object, Loc]] = []
    for key, item in value.items():
        name = str(key)
        _check_text(name, (*path, name), found, what="the key")
        children.append((item, (*path, name)))
    return children


def _check_text(text: str, path: Loc, found: list[tuple[Loc, str]], what: str = "text") -> None:
    match = _SURROGATE.search(text)
    if match is not None:
        code = f"U+{ord(match.group()):04X}"
        found.append(
            (
                path,
                f"{what} holds a lone surrogate ({code} at character {match.start()}): "
                "not valid Unicode",
            )
        )


def _too_deep() -> str:
    return f"nested more than {MAX_DEPTH} levels deep (objects and lists inside each other)"
