"""What every reader yields: a validated record or a refusal naming file, line and field.

``validate_record`` is the one validation path for memory records, used alike by
files, GraphQL and the CLI.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ValidationError

from metisgraph.ingest.adapters.hazards import hazards, printable
from metisgraph.ingest.records import EpisodeRecord, SnippetRecord, TaskRecord, VerdictRecord

__all__ = [
    "FORMATS",
    "FieldError",
    "Parsed",
    "Record",
    "Refused",
    "ShapeError",
    "SourceRef",
    "UnknownFormatError",
    "validate_record",
]

FORMATS = ("native", "corpus", "swe-agent", "mini-swe-agent", "openhands", "harness-report")

Record = TaskRecord | EpisodeRecord | SnippetRecord | VerdictRecord

_MODELS: dict[str, type[BaseModel]] = {
    "task": TaskRecord,
    "episode": EpisodeRecord,
    "snippet": SnippetRecord,
    "verdict": VerdictRecord,
}


@dataclass(frozen=True)
class SourceRef:
    """Where a record came from: the file as given, a 1-based line, a place inside the item."""

    file: str
    line: int | None = None
    pointer: str | None = None

    def at(self, pointer: str) -> SourceRef:
        """The same file and line, pointing somewhere inside the item."""
        return SourceRef(self.file, self.line, pointer)

    def __str__(self) -> str:
        where = self.file if self.line is None else f"{self.file}:{self.line}"
        return where if self.pointer is None else f"{where}: {self.pointer}"


@dataclass(frozen=True)
class FieldError:
    """One thing wrong with one field; ``field`` is a dotted path such as ``tags[2]``."""

    field: str
    message: str


@dataclass(frozen=True)
class Parsed:
    record: Record
    ref: SourceRef


@dataclass(frozen=True)
class Refused:
    """A record that could not be read, kept whole (``raw``) for a dead-letter file."""

    ref: SourceRef
    raw: object
    errors: tuple[FieldError, ...]

    def describe(self) -> str:
        """One line per error: ``file.jsonl:7: field 'summary': must not be blank``."""
        lines = []
        for error in self.errors:
            field = f"field '{error.field}': " if error.field else ""
            lines.append(f"{self.ref}: {field}{error.message}")
        return "\n".join(lines)

    def as_dead_letter(self) -> dict[str, object]:
        """A JSON-able line for a dead-letter file: where, why, and the item itself."""
        return {
            "file": self.ref.file,
            "line": self.ref.line,
            "pointer": self.ref.pointer,
            "errors": [{"field": e.field, "message": e.message} for e in self.errors],
            "raw": self.raw,
        }


class ShapeError(ValueError):
    """An input item does not have the shape its format promises."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"field '{field}': {message}")
        self.field = field
        self.message = message


class UnknownFormatError(ValueError):
    """A file whose format cannot be recognised (or a format name we do not know)."""


def refuse(ref: SourceRef, raw: object, field: str, message: str) -> Refused:
    """A refusal with a single error."""
    return Refused(ref, raw, (FieldError(field, message),))


def validate_record(
    raw: Mapping[str, Any], ref: SourceRef, defaults: Mapping[str, Any] | None = None
) -> Parsed | Refused:
    """Validate one raw record (``record_type`` task/episode/snippet/verdict, default episode)."""
    if not isinstance(raw, Mapping):
        return refuse(ref, raw, "", f"expected a JSON object, got {type(raw).__name__}")
    data = {**(defaults or {}), **raw}
    unsafe = hazards(data)
    if unsafe:  # refused before any model or recursive walk sees the record
        return Refused(ref, raw, tuple(FieldError(field_path(loc), m) for loc, m in unsafe))
    record_type = data.get("record_type", "episode")
    model = _MODELS.get(record_type) if isinstance(record_type, str) else None
    if model is None:
        return refuse(
            ref, raw, "record_type", f"must be one of {sorted(_MODELS)}, got {record_type!r}"
        )
    try:
        record = model.model_validate(data)
    except ValidationError as exc:
        return Refused(ref, raw, tuple(_field_errors(exc)))
    assert isinstance(record, TaskRecord | EpisodeRecord | SnippetRecord | VerdictRecord)
    return Parsed(record, ref)


def _field_errors(exc: ValidationError) -> list[FieldError]:
    return [
        FieldError(field_path(error["loc"]), _message(error))
        for error in exc.errors(include_url=False)
    ]


def _message(error: Any) -> str:
    """pydantic's message, except where it would only quote a regular expression."""
    loc = error["loc"]
    if error["type"] == "string_pattern_mismatch" and loc and "tags" in loc:
        value = str(error.get("input", ""))
        shown = value if len(value) <= 60 else value[:57] + "..."
        return f"expected key:value (e.g. lang:python), got {shown!r}"
    return _plain_message(error["msg"])


def field_path(loc: tuple[int | str, ...]) -> str:
    """('action', 'command') → ``action.command``; ('tags', 2) → ``tags[2]``."""
    path = ""
    for part in loc:
        if isinstance(part, int):
            path += f"[{part}]"
        else:
            path += f".{part}" if path else part
    return printable(path)


def _plain_message(message: str) -> str:
    # pydantic prefixes errors raised in our own validators; the field already says where.
    return message.removeprefix("Value error, ")
