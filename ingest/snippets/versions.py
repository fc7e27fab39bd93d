"""Versions of a snippet: which code has the same purpose, and what changed between two of them.

A lineage names the purpose of a piece of code independently of its content: a name a caller
gave it (across the project), a file it writes whole, or a name it defines (within one task,
where `main` or `reproduce.py` mean the same thing from one step to the next). New content
in a known lineage is a new version of its latest node.
"""

from __future__ import annotations

import difflib
import hashlib
import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

__all__ = ["change_summary", "lineage_key"]

_MAX_LISTED = 4


def lineage_key(
    *,
    language: str,
    kind: str,
    given_name: str | None,
    path: str | None,
    whole_file: bool,
    defined_name: str | None,
    files: Sequence[str],
    scope: str | None,
) -> str | None:
    """The identity of purpose of a snippet, or None when nothing names it.

    `scope` is the task (or None for code recorded outside a task, which then shares the
    project's scope). Fragments of a file have no lineage: two edits of one file are two
    changes, not two versions.
    """
    if given_name:
        basis: tuple[Any, ...] = ("named", language, kind, given_name)
    elif path and whole_file:
        basis = ("file", scope, path)
    elif kind == "patch" and files:
        basis = ("patch", scope, tuple(sorted(files)))
    elif defined_name and scope is not None:
        basis = ("defines", scope, language, kind, defined_name)
    else:
        return None
    blob = json.dumps(basis, ensure_ascii=False)
    return hashlib.sha256(blob.encode()).hexdigest()[:24]


def change_summary(old: Mapping[str, Any], new: Mapping[str, Any]) -> str:
    """What changed from one version to the next, in a line: lines, signature, imports, calls."""
    added, removed = _line_changes(str(old.get("template") or ""), str(new.get("template") or ""))
    parts = [f"+{added} -{removed} lines"]
    if (old.get("signature") or None) != (new.get("signature") or None):
        parts.append(f"signature {old.get('signature') or '-'} -> {new.get('signature') or '-'}")
    for field in ("imports", "calls"):
        parts += _set_changes(field, old.get(field) or (), new.get(field) or ())
    return "; ".join(parts)


def _line_changes(old: str, new: str) -> tuple[int, int]:
    added = removed = 0
    for line in difflib.unified_diff(old.splitlines(), new.splitlines(), lineterm="", n=0):
        if line.startswith("+") and not line.startswith("+++"):
            added += 1
        elif line.startswith("-") and not line.startswith("---"):
            removed += 1
    return added, removed


def _set_changes(field: str, old: Iterable[str], new: Iterable[str]) -> list[str]:
    before, after = list(dict.fromkeys(old)), list(dict.fromkeys(new))
    gained = [x for x in after if x not in before]
    lost = [x for x in before if x not in after]
    out = []
    if gained:
        out.append(f"{field} added: {_listed(gained)}")
    if lost:
        out.append(f"{field} removed: {_listed(lost)}")
    return out


def _listed(items: list[str]) -> str:
    more = len(items) - _MAX_LISTED
    return ", ".join(items[:_MAX_LISTED]) + (f" and {more} more" if more > 0 else "")
