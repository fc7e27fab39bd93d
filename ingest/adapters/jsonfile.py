"""Reading JSON and JSON Lines so that one broken line is a refusal, not the end of the file."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from metisgraph.ingest.adapters.base import Refused, SourceRef, refuse

__all__ = ["JsonLine", "load_json", "read_lines"]


@dataclass(frozen=True)
class JsonLine:
    """One decoded line: its value, its place, and its text (for hashing and dead letters)."""

    value: object
    ref: SourceRef
    text: str


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
