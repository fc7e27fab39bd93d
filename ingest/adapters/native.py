"""Our own records, one JSON object a line (or a JSON list): tasks, episodes, snippets.

Each line is validated by ``validate_record``; ``record_type`` says which model
(default ``episode``). Tasks are yielded before everything else in the file, so a
task always precedes the episodes that point to it.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from metisgraph.ingest.adapters.base import Parsed, Refused, SourceRef, refuse, validate_record
from metisgraph.ingest.adapters.jsonfile import load_json, read_lines

__all__ = ["read_native"]


def read_native(path: Path, project: str | None = None) -> Iterator[Parsed | Refused]:
    """Records from a native JSONL file (or JSON list); ``project`` fills in a missing project."""
    defaults = {"project": project} if project else None
    # Two passes over the file rather than holding it all: tasks, then the rest.
    for ref, value in _items(path):
        if _is_task(value):
            yield _validate(value, ref, defaults)
    for ref, value in _items(path):
        if isinstance(value, Refused):
            yield value
        elif not _is_task(value):
            yield _validate(value, ref, defaults)


def _items(path: Path) -> Iterator[tuple[SourceRef, object]]:
    if path.suffix == ".json":
        loaded = load_json(path)
        if isinstance(loaded, Refused):
            yield loaded.ref, loaded
        elif isinstance(loaded.value, list):
            for index, value in enumerate(loaded.value):
                yield loaded.ref.at(f"[{index}]"), value
        else:
            yield loaded.ref, loaded.value
        return
    for line in read_lines(path):
        if isinstance(line, Refused):
            yield line.ref, line
        else:
            yield line.ref, line.value


def _is_task(value: object) -> bool:
    return isinstance(value, Mapping) and value.get("record_type") == "task"


def _validate(value: object, ref: SourceRef, defaults: dict[str, Any] | None) -> Parsed | Refused:
    if not isinstance(value, Mapping):
        return refuse(ref, value, "", f"expected a JSON object, got {type(value).__name__}")
    return validate_record(value, ref, defaults)
