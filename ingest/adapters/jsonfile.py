"""Reading JSON and JSON Lines so that one broken line is a refusal, not the end of the file."""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

from metisgraph.ingest.adapters.base import Refused, ShapeError, SourceRef, refuse

__all__ = [
    "JsonLine",
    "load_json",
    "load_json_leniently",
    "parse_or_refuse",
    "read_lines",
    "without_trailing_commas",
]

log = logging.getLogger("metisgraph.ingest")

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


def without_trailing_commas(text: str) -> str | None:
    """``text`` without the commas that stand right before a ``]`` or ``}`` (outside
    strings), or None when it has none. Some published reports carry one."""
    out: list[str] = []
    pending: int | None = None  # index in `out` of a comma not yet followed by a value
    found = False
    in_string = escaped = False
    for char in text:
        if in_string:
            out.append(char)
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
            continue
        if char in "]}" and pending is not None:
            out[pending] = ""
            found = True
        if char == ",":
            pending = len(out)
        elif not char.isspace():
            pending = None
        if char == '"':
            in_string = True
        out.append(char)
    return "".join(out) if found else None


def load_json_leniently(path: Path) -> JsonLine | Refused:
    """``load_json``, but a document whose only fault is a trailing comma is read, with one
    warning naming the file, rather than refused with every record in it."""
    loaded = load_json(path)
    if not isinstance(loaded, Refused) or not isinstance(loaded.raw, str):
        return loaded
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return loaded
    fixed = without_trailing_commas(text)
    if fixed is None:
        return loaded
    try:
        value = json.loads(fixed)
    except (json.JSONDecodeError, RecursionError):
        return loaded
    log.warning("%s: a trailing comma before a closing bracket; read without it", path)
    return JsonLine(value, loaded.ref, text)
