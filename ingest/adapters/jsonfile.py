"""Reading JSON and JSON Lines so that one broken line is a refusal, not the end of the file."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

from metisgraph.ingest.adapters.base import Refused, ShapeError, SourceRef, refuse

__all__ = ["JsonLine", "load_json", "parse_or_refuse", "read_lines"]

T = TypeVar("T")
# What a parser may raise on input it does not expect (a list where an id belongs, a number
# out of range, nesting too deep): a refusal of that item, never the end of the run.
_MALFORMED = (ValueError, TypeError, OverflowError, RecursionError, KeyError, IndexError)


@dataclass(frozen=True)
class JsonLine:
    """One decoded line: its value, its place, and its text (for hashing and dead letters)."""

    value: object
    ref: SourceRef
    text: str


def parse_or_refuse(
    parse: Callable[[JsonLine, Path], T], line: JsonLine, path: Path
) -> T | Refused:
    """``parse(line, path)``, or the refusal of the line: its ShapeError's field, or the error."""
    try:
        return parse(line, path)
    except ShapeError as exc:
        return refuse(line.ref, line.value, exc.field, exc.message)
    except _MALFORMED as exc:
        reason = f"malformed input ({type(exc).__name__}: {str(exc)[:200]})"
        return refuse(line.ref, line.value, "", reason)


def read_lines(path: Path) -> Iterator[JsonLine | Refused]:
    """Every non-blank line of a JSON Lines file, decoded, or refused with the reason."""
    with path.open("rb") as handle:
        for number, raw in enumerate(handle, start=1):
            ref = SourceRef(str(path), number)
            try:
                text = raw.decode("utf-8").strip()
            except UnicodeDecodeError as exc:
                yield refuse(ref, raw.decode("utf-8", "replace"), "", f"not UTF-8: {exc}")
                continue
            if not text:
                continue
            try:
                value = json.loads(text)
            except json.JSONDecodeError as exc:
                yield refuse(ref, text, "", f"invalid JSON: {exc}")
                continue
            except RecursionError:
                yield refuse(ref, text[:10_000], "", "invalid JSON: nested too deeply")
                continue
            yield JsonLine(value, ref, text)


def load_json(path: Path) -> JsonLine | Refused:
    """A whole-file JSON document, or a refusal naming the file."""
    ref = SourceRef(str(path))
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        return refuse(ref, None, "", f"not UTF-8: {exc}")
    try:
        return JsonLine(json.loads(text), ref, text)
    except RecursionError:
        return refuse(ref, text[:10_000], "", "invalid JSON: nested too deeply")
    except json.JSONDecodeError as exc:
        # Keep the text for the dead-letter file, but not megabytes of it.
        return refuse(ref, text[:10_000], "", f"invalid JSON: {exc}")
