"""Telling a file's format from its extension and a look at its content."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path

from metisgraph.ingest.adapters.base import FORMATS, UnknownFormatError
from metisgraph.ingest.adapters.harness import is_harness_report
from metisgraph.ingest.adapters.jsonfile import without_trailing_commas

__all__ = ["detect_format", "guess_format"]

LINE_SUFFIXES = {".jsonl", ".ndjson"}
DOCUMENT_SUFFIXES = {".json", ".traj"}
_PEEK_LINES = 20  # a few broken lines at the top should not hide the format
_OPENHANDS_KEYS = {"instance_id", "instruction", "issue", "instance"}
_NATIVE_KEYS = {"record_type", "summary", "goal"}


def detect_format(path: Path) -> str:
    """One of FORMATS for ``path``, or UnknownFormatError saying what was seen."""
    found = guess_format(path)
    if found is None:
        raise UnknownFormatError(
            f"{path}: cannot tell its format from the extension and content; "
            f"pass one of: {', '.join(FORMATS)}"
        )
    return found


def guess_format(path: Path) -> str | None:
    """Like detect_format, but None for a file that is in none of our formats."""
    suffix = path.suffix.lower()
    if suffix in LINE_SUFFIXES:
        return _line_format(path)
    if suffix in DOCUMENT_SUFFIXES:
        found = _document_format(path)
        # Only SWE-agent writes .traj: a cut-off or garbled one is its reader's to refuse,
        # with the JSON error, rather than a file skipped in silence.
        return "swe-agent" if found is None and suffix == ".traj" else found
    return None


def _line_format(path: Path) -> str | None:
    with path.open("rb") as handle:
        for number, raw in enumerate(handle):
            if number >= _PEEK_LINES:
                break
            try:
                value = json.loads(raw)
            except (json.JSONDecodeError, UnicodeDecodeError, RecursionError):
                continue
            found = item_format(value)
            if found is not None:  # a record with a typo at the top must not hide the rest
                return found
    return None


def _document_format(path: Path) -> str | None:
    try:
        value = json.loads(path.read_bytes())
    except (json.JSONDecodeError, UnicodeDecodeError, RecursionError):
        return _lenient_format(path)
    if isinstance(value, list):
        first = next((v for v in value if isinstance(v, Mapping)), None)
        found = item_format(first)
        return found if found in {"native", "corpus"} else None
    if not isinstance(value, Mapping):
        return None
    if isinstance(value.get("trajectory"), list):
        return "swe-agent"
    trajectory_format = value.get("trajectory_format")
    if isinstance(value.get("messages"), list) and (
        str(trajectory_format or "").startswith("mini-swe-agent") or "info" in value
    ):
        return "mini-swe-agent"
    if is_harness_report(value):
        return "harness-report"
    return "native" if item_format(value) == "native" else None


def _lenient_format(path: Path) -> str | None:
    """A harness report published with a trailing comma is still one (read with a warning)."""
    try:
        fixed = without_trailing_commas(path.read_text(encoding="utf-8"))
        value = json.loads(fixed) if fixed is not None else None
    except (json.JSONDecodeError, UnicodeDecodeError, RecursionError, OSError):
        return None
    return "harness-report" if is_harness_report(value) else None


def item_format(value: object) -> str | None:
    """The format one JSON object (a line, or an element of a list) belongs to."""
    if not isinstance(value, Mapping):
        return None
    keys = set(value)
    if "history" in keys and keys & _OPENHANDS_KEYS:
        return "openhands"
    if keys & _NATIVE_KEYS:
        return "native"
    if {"id", "text"} <= keys or {"id", "kind", "title"} <= keys:
        return "corpus"
    return None
