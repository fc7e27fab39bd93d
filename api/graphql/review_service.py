"""Review that people can work: the pending queue, page by page, and the four actions.

approve, reject and hold decide (``reviewMemory`` does the same); correct writes a new
version of the memory through the same ingest pipeline as any record (sanitized, embedded,
linked), links it ``VERSION_OF {reason, reviewer, note}`` to the old one and takes the old
one out of recall (kept, readable). Callers check who may use the project first.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
from dataclasses import dataclass, field
from typing import Any

from metisgraph.api.graphql.context import UserError
from metisgraph.api.graphql.memory_service import Reviewed, review
from metisgraph.api.graphql.snippet_service import MAX_NOTE_CHARS
from metisgraph.api.services import Services
from metisgraph.ingest.adapters import Parsed, SourceRef, validate_record
from metisgraph.ingest.sanitize import sanitize

__all__ = [
    "ACTIONS",
    "Correction",
    "ReviewPage",
    "correct",
    "decide",
    "review_detail",
    "review_queue",
]

ACTIONS = {"approve": "approved", "reject": "rejected", "hold": "pending"}
KINDS = {"episode": "Episode", "snippet": "Snippet"}
MAX_PAGE = 100
# What a reviewer may correct, per kind of memory (the rest is kept from the old version).
EPISODE_FIELDS = ("title", "summary", "reasoning", "observation", "error", "outcome", "command")
SNIPPET_FIELDS = ("code", "description", "name")


@dataclass
class ReviewPage:
    items: list[dict[str, Any]]
    total: int
    end_cursor: str | None
    has_next: bool


@dataclass
class Correction:
    """The fields a reviewer changes; None keeps the old value."""

    values: dict[str, Any] = field(default_factory=dict)


def _cursor(last_id: str) -> str:
    return base64.urlsafe_b64encode(json.dumps(["review", last_id]).encode()).decode()


def _after(cursor: str | None) -> str:
    if not cursor:
        return ""
    try:
        kind, last = json.loads(base64.urlsafe_b64decode(cursor.encode()))
    except (ValueError, binascii.Error, TypeError):
        raise UserError("after: not a cursor this queue gave") from None
    if kind != "review" or not isinstance(last, str):
        raise UserError("after: not a cursor this queue gave")
    return last


def _kind(kind: str | None) -> str | None:
    if kind is None:
        return None
    if kind.lower() not in KINDS:
        raise UserError(f"kind must be one of {', '.join(KINDS)}, got {kind!r}")
    return KINDS[kind.lower()]


def _note(note: str | None) -> str | None:
    if note is not None and len(note) > MAX_NOTE_CHARS:
        raise UserError(f"note: at most {MAX_NOTE_CHARS} characters, got {len(note)}")
    return sanitize(note).text if note and note.strip() else None


async def review_queue(
    services: Services, project: str, kind: str | None, first: int, after: str | None
) -> ReviewPage:
    """Pending memories of a project, in id order, ``first`` at a time after ``after``."""
    if not 1 <= first <= MAX_PAGE:
        raise UserError(f"first must be between 1 and {MAX_PAGE}, got {first}")
    label = _kind(kind)
    rows, counted = (
        await services.store.run(
            "review_queue", project=project, kind=label, after=_after(after), first=first + 1
        ),
        await services.store.run("review_pending_count", project=project, kind=label),
    )
    items = rows[:first]
    end = _cursor(items[-1]["id"]) if items else None
    return ReviewPage(items, int(counted[0]["total"]), end, len(rows) > first)


async def decide(
    services: Services, project: str, memory_id: str, action: str, note: str | None, reviewer: str
) -> Reviewed:
    """approve, reject or hold one episode or snippet."""
    if action not in ACTIONS:
        raise UserError(f"action must be one of {', '.join(ACTIONS)} or correct, got {action!r}")
    return await review(services, project, memory_id, ACTIONS[action], note, reviewer)


def _corrected_id(old: str, values: dict[str, Any]) -> str:
    digest = hashlib.sha256(json.dumps([old, values], sort_keys=True).encode()).hexdigest()
    return f"{old}~{digest[:10]}"


def _episode_record(project: str, old: dict[str, Any], change: dict[str, Any]) -> dict[str, Any]:
    command = change.get("command", old.get("action_command"))
    return {
        "record_type": "episode",
        "project": project,
        "id": _corrected_id(old["id"], change),
        "task_id": old.get("task_id"),
        "step": old.get("step"),
        "kind": old.get("kind"),
        "title": change.get("title", old.get("title")),
        "summary": change.get("summary", old.get("summary")),
        "reasoning": change.get("reasoning", old.get("reasoning")),
        "observation": change.get("observation", old.get("observation")),
        "error": change.get("error", old.get("error_text")),
        "outcome": change.get("outcome", old.get("outcome") or "unknown"),
        "action": {"type": old.get("action_type") or "command", "command": command},
        "tags": list(old.get("tags") or []),
        "source": "reviewer",
    }


def _snippet_record(
    project: str, old: dict[str, Any], change: dict[str, Any], episode_id: str | None
) -> dict[str, Any]:
    return {
        "record_type": "snippet",
        "project": project,
        "episode_id": episode_id,
        "code": change.get("code", old.get("template")),
        "language": old.get("language"),
        "kind": old.get("kind"),
        "name": change.get("name", old.get("name")),
        "description": change.get("description", old.get("description")),
    }


async def correct(
    services: Services,
    project: str,
    memory_id: str,
    correction: Correction,
    note: str | None,
    reviewer: str,
) -> dict[str, Any]:
    """A corrected memory: a new version, VERSION_OF the old with the reviewer and note."""
    rows = await services.store.run("review_memory_source", project=project, id=memory_id)
    if not rows:
        raise UserError(f"no episode or snippet {memory_id!r} in project {project!r}")
    kind, old = rows[0]["kind"], rows[0]["memory"]
    allowed = EPISODE_FIELDS if kind == "Episode" else SNIPPET_FIELDS
    change = {k: v for k, v in correction.values.items() if v is not None}
    wrong = sorted(set(change) - set(allowed))
    if wrong or not change:
        raise UserError(
            f"correction: give at least one of {', '.join(allowed)} for a {kind.lower()}"
            + (f"; not correctable: {', '.join(wrong)}" if wrong else "")
        )
    raw = (
        _episode_record(project, old, change)
        if kind == "Episode"
        else _snippet_record(project, old, change, rows[0]["episode_id"])
    )
    item = validate_record(raw, SourceRef("review", None, f"correct:{memory_id}"))
    if not isinstance(item, Parsed):
        raise UserError("correction: " + "; ".join(f"{e.field}: {e.message}" for e in item.errors))
    summary = await services.ingestor.ingest([item], keep_results=True)
    written = [r for r in summary.results if r.kind == kind.lower() and r.id]
    if not written or written[0].id == memory_id:
        raise UserError("correction: it changes nothing the memory holds")
    linked = await services.store.run(
        "review_link_correction",
        project=project,
        new=written[0].id,
        old=memory_id,
        reason="corrected by a reviewer",
        reviewer=reviewer,
        note=_note(note),
    )
    return {"kind": kind, "id": linked[0]["id"], "previous": linked[0]["previous"]}


async def review_detail(services: Services, project: str, memory_id: str) -> dict[str, Any]:
    rows = await services.store.run("review_detail", project=project, id=memory_id)
    if not rows:
        raise UserError(f"no episode or snippet {memory_id!r} in project {project!r}")
    return rows[0]
