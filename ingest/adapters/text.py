"""Small text shaping shared by the readers: caps, first lines, tag values."""

from __future__ import annotations

import re

__all__ = ["OBSERVATION_LIMIT", "cap", "cap_head", "first_line", "looks_like_diff", "tag"]

# One step's output can be megabytes (a build log, a dumped file); keep head and tail.
OBSERVATION_LIMIT = 20_000

_DIFF_HUNK = re.compile(r"^@@ -\d+(,\d+)? \+\d+(,\d+)? @@", re.MULTILINE)
_DIFF_FILES = re.compile(r"^--- .+\n\+\+\+ .+$", re.MULTILINE)


def cap(text: str, limit: int = OBSERVATION_LIMIT) -> str:
    """``text`` itself when short; else its head and tail with a marker saying what was cut."""
    if len(text) <= limit:
        return text
    tail = limit // 4
    head = limit - tail
    cut = len(text) - head - tail
    return f"{text[:head]}\n[... {cut} characters cut ...]\n{text[-tail:]}"


def cap_head(text: str, limit: int) -> str:
    """The first ``limit`` characters, with a marker when anything was cut."""
    if len(text) <= limit:
        return text
    return f"{text[:limit].rstrip()}\n[... {len(text) - limit} characters cut ...]"


def first_line(text: str, limit: int = 160) -> str:
    """The first non-blank line, shortened to ``limit`` characters."""
    for line in text.splitlines():
        if line.strip():
            line = line.strip()
            return line if len(line) <= limit else line[: limit - 3].rstrip() + "..."
    return ""


def looks_like_diff(code: str) -> bool:
    """True for unified diffs (git or plain): file headers or hunk headers."""
    head = code.lstrip()
    if head.startswith("diff --git ") or head.startswith("Index: "):
        return True
    return bool(_DIFF_FILES.search(code) and _DIFF_HUNK.search(code))


def tag(key: str, value: object) -> str | None:
    """A ``key:value`` tag, or None when the value is empty; values are kept to one line."""
    text = " ".join(str(value).split()) if value is not None else ""
    return f"{key}:{text[:256]}" if text else None
