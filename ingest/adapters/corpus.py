"""The neutral corpus format: ``{id, project, kind, title, text, error, code, created_at, tags}``.

Each line becomes one EpisodeRecord stated by a user: the summary is the title and
the text, the code an inline snippet (a patch when it is a diff), the id kept as
given. Kinds that say the thing was fixed (``bug_fix``, ``issue_fix``, ``fixed`` …)
make the outcome a success; any other kind leaves it unknown. Two optional fields
the shared sets do not carry: ``outcome`` (success, failure, partial, unknown: over
the kind's) and ``environment`` (``{os, os_version, arch, runtime, runtime_version,
packages: {name: version}}``, validated as an episode's). Fields we do not know are
kept in ``facts``.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from metisgraph.ingest.adapters.base import (
    FieldError,
    Parsed,
    Refused,
    ShapeError,
    SourceRef,
    refuse,
    validate_record,
)
from metisgraph.ingest.adapters.jsonfile import read_lines
from metisgraph.ingest.adapters.shape import as_object, list_at, text_at
from metisgraph.ingest.adapters.text import looks_like_diff
from metisgraph.ingest.adapters.timestamps import parse_datetime
from metisgraph.ingest.records import (
    EpisodeRecord,
    Outcome,
    SnippetKind,
    SnippetRelation,
    Source,
    TaskRecord,
)

__all__ = ["corpus_episode", "read_corpus"]

KNOWN_FIELDS = {
    "id", "project", "kind", "title", "text", "error", "code", "created_at", "tags", "outcome",
    "environment",
}  # fmt: skip
_FIXED_WORDS = {"fix", "fixed", "fixes", "resolved", "solved", "solution", "hotfix", "bugfix"}


def read_corpus(path: Path, project: str | None = None) -> Iterator[Parsed | Refused]:
    """One episode per corpus line; ``project`` fills in where a line names none.

    Turns of a conversation come as consecutive lines of a conversational kind (``*turn*``,
    ``message``, ``utterance``) with the same project and time; they are chained as one
    session (a task) in file order, so recall can see each turn with its neighbours.
    """
    sessions = _Sessions()
    for line in read_lines(path):
        if isinstance(line, Refused):
            yield line
            continue
        parsed = corpus_episode(line.value, line.ref, project)
        if isinstance(parsed, Parsed):
            yield from sessions.chain(parsed)
        else:
            yield parsed


class _Sessions:
    """Assigns consecutive conversational turns to one session task, in order."""

    def __init__(self) -> None:
        self._key: tuple[str, str] | None = None
        self._task: str | None = None
        self._step = 0

    def chain(self, parsed: Parsed) -> list[Parsed]:
        """The episode in its session; a session's task comes before its first turn."""
        record = parsed.record
        if not isinstance(record, EpisodeRecord) or not _conversational(record.kind):
            self._key = None
            return [parsed]
        when = str(record.created_at or record.facts.get("created_at_text") or "")
        key = (record.project, when)
        out = []
        if key != self._key:
            self._key, self._step = key, 0
            digest = hashlib.sha256(f"{record.project}|{when}|{record.id}".encode()).hexdigest()
            self._task = f"session:{digest[:16]}"
            goal = f"Conversation ({when})" if when else "Conversation"
            task = TaskRecord(project=record.project, id=self._task, goal=goal,
                              started_at=record.created_at)  # fmt: skip
            out.append(Parsed(task, parsed.ref))
        else:
            self._step += 1
        chained = record.model_copy(update={"task_id": self._task, "step": self._step})
        return [*out, Parsed(chained, parsed.ref)]


def _conversational(kind: str | None) -> bool:
    words = set(re.split(r"[^a-z]+", (kind or "").lower()))
    return bool(words & {"turn", "message", "utterance", "dialogue", "dialog", "chat"})


def corpus_episode(item: object, ref: SourceRef, project: str | None = None) -> Parsed | Refused:
    """The EpisodeRecord a corpus item stands for, or why it cannot be one."""
    try:
        raw = _episode(as_object(item, ""), project)
    except ShapeError as exc:
        return refuse(ref, item, exc.field, exc.message)
    parsed = validate_record(raw, ref)
    if isinstance(parsed, Refused):
        return Refused(ref, item, tuple(_corpus_field(e) for e in parsed.errors))
    return parsed


def _corpus_field(error: FieldError) -> FieldError:
    """Name the corpus's own field: the inline snippet is its ``code``."""
    if error.field.startswith("snippets"):
        return FieldError("code", error.message)
    return error


def _episode(item: dict[str, Any], project: str | None) -> dict[str, Any]:
    identifier = item.get("id")
    if not isinstance(identifier, str | int) or isinstance(identifier, bool) or identifier == "":
        raise ShapeError("id", "expected a non-empty string")
    kind = text_at(item, "kind")
    code = text_at(item, "code")
    created_text = item.get("created_at")
    created = parse_datetime(str(created_text)) if created_text not in (None, "") else None
    facts = {key: value for key, value in item.items() if key not in KNOWN_FIELDS}
    if created is None and created_text not in (None, ""):
        facts["created_at_text"] = created_text
    said = (Outcome.success if _says_fixed(kind) else Outcome.unknown).value
    episode = {
        "record_type": "episode",
        "project": item.get("project") or project,
        "id": str(identifier),
        "kind": kind,
        "title": text_at(item, "title"),
        "summary": _summary(item),
        "error": text_at(item, "error"),
        "outcome": text_at(item, "outcome") or said,
        "source": Source.user.value,
        "created_at": created.isoformat() if created else None,
        "tags": list_at(item, "tags"),
        "facts": facts,
        "snippets": [_snippet(code)] if code and code.strip() else [],
    }
    if item.get("environment") is not None:  # validated with the record
        episode["environment"] = item["environment"]
    return episode


def _summary(item: dict[str, Any]) -> str:
    title = (text_at(item, "title") or "").strip()
    text = (text_at(item, "text") or "").strip()
    if not title and not text:
        raise ShapeError("text", "title and text are both empty: nothing to remember")
    return f"{title}\n\n{text}" if title and text else title or text


def _says_fixed(kind: str | None) -> bool:
    words = re.split(r"[^a-z]+", (kind or "").lower())
    return any(word in _FIXED_WORDS for word in words)


def _snippet(code: str) -> dict[str, Any]:
    snippet: dict[str, Any] = {"code": code, "relation": SnippetRelation.generated.value}
    if looks_like_diff(code):
        snippet |= {"kind": SnippetKind.patch.value, "language": "diff"}
    return snippet
