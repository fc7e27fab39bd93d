"""Identifier parts for full-text search: words inside code become findable words."""

from __future__ import annotations

import re

from metisgraph.ingest.errors.frames import jvm_library, python_frame
from metisgraph.ingest.errors.tracebacks import JVM_FRAME, PYTHON_FRAME

__all__ = ["identifier_keywords", "tag_value", "without_library_frames", "words"]

_IDENTIFIER = re.compile(r"[A-Za-z_$][\w$]*(?:[.:/][A-Za-z_$][\w$]*)+|[A-Za-z_$][\w$]*")
_CAMEL = re.compile(r"[A-Z]+(?=[A-Z][a-z0-9])|[A-Z]?[a-z0-9]+|[A-Z]+")
_SEPARATORS = re.compile(r"[._:/$]+")


def _parts(token: str) -> list[str]:
    out: list[str] = []
    for piece in _SEPARATORS.split(token):
        words = _CAMEL.findall(piece)
        if len(words) > 1 or piece != token:
            out.append(piece)
        out.extend(w.lower() for w in words if len(words) > 1)
    return out


def identifier_keywords(text: str, limit: int = 4000) -> str:
    """Split dotted and camelCase identifiers into their parts (deduplicated, in order).

    ``org.jfree.data.TimeSeries.createCopy`` gives ``org jfree data TimeSeries time series
    createCopy create copy``; Lucene's standard analyser keeps the dotted name as one token,
    so without these parts a question about "TimeSeries" would not find it.
    """
    seen: set[str] = set()
    out: list[str] = []
    size = 0
    for match in _IDENTIFIER.finditer(text):
        token = match.group(0)
        if len(token) < 4 or (token.islower() and "." not in token and "_" not in token):
            continue
        for part in _parts(token):
            key = part.lower()
            if len(key) < 2 or key in seen:
                continue
            seen.add(key)
            out.append(part)
            size += len(part) + 1
            if size >= limit:
                return " ".join(out)
    return " ".join(out)


_WORDS = re.compile(r"[\w.+#-]+")


def tag_value(tag: str) -> str:
    """The value part of a ``key:value`` tag, lower-cased: what a question would name."""
    return tag.partition(":")[2].strip().lower()


def words(text: str, limit: int = 200) -> list[str]:
    """Lower-cased words of a question, to meet tag values (``speaker:caroline`` <- Caroline)."""
    out: dict[str, None] = {}
    for match in _WORDS.finditer(text.lower()):
        word = match.group(0).strip(".-")
        if len(word) >= 2:
            out.setdefault(word)
        if len(out) >= limit:
            break
    return list(out)


def without_library_frames(text: str) -> str:
    """The text without the stack frames of runtime and library code.

    A pasted trace is mostly frames of the test runner, the reflection machinery and the
    standard library: the same words in every trace. For a word search they crowd out the
    frames of the project's own code (which say where it failed) within the question's
    term budget.
    """
    out: list[str] = []
    skip_below: int | None = None  # the indent of a dropped Python frame: its source line goes
    for line in text.splitlines():
        indent = len(line) - len(line.lstrip())
        if skip_below is not None:
            source = indent > skip_below and bool(line.strip())
            skip_below = None
            if source:
                continue
        jvm = JVM_FRAME.match(line)
        if jvm and jvm_library(jvm["method"]):
            continue
        python = PYTHON_FRAME.match(line)
        if python and not python_frame(python["path"], python["func"] or "").own:
            skip_below = indent
            continue
        out.append(line)
    return "\n".join(out)
