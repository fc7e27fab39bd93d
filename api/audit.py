"""The audit trail: who recorded, reviewed (approve, reject, hold, unreview,
correct), forgot, exported, and who issued or revoked keys.

An entry says who (the caller's name: a key id, ``token#n``, ``anonymous``, ``cli:<user>``),
what, in which project, on which id and how many: never a value of the memory itself.
Entries live outside every project (cypher/keys.cypher), so forgetting a project keeps
the record that it was forgotten. Admins of a project read its entries, newest first.
"""

from __future__ import annotations

import base64
import json
import logging
import uuid
from dataclasses import dataclass
from typing import Any

from neo4j.exceptions import DriverError, Neo4jError

from metisgraph.graph import COUNTERS, GraphStore

__all__ = ["ACTIONS", "REVIEW_ACTIONS", "AuditEntry", "AuditPage", "audit", "audit_page"]

log = logging.getLogger("metisgraph")

# A review decision is kept as what was decided (unreview: reviewMemory back to unreviewed).
REVIEW_ACTIONS = {"approved": "approve", "rejected": "reject", "pending": "hold",
                  "unreviewed": "unreview"}  # fmt: skip
ACTIONS = frozenset(
    {
        "record",
        "record_refused",
        "forget",
        "forget_project",
        "export",
        "key_create",
        "key_revoke",
        "correct",
        "maintain",
    }
    | set(REVIEW_ACTIONS.values())
)
MAX_PAGE = 500


@dataclass(frozen=True)
class AuditEntry:
    at: Any
    actor: str
    action: str
    project: str
    target: str | None
    count: int | None


@dataclass(frozen=True)
class AuditPage:
    entries: list[AuditEntry]
    end_cursor: str | None
    has_next_page: bool


async def audit(
    store: GraphStore,
    actor: str,
    action: str,
    project: str,
    *,
    target: str | None = None,
    count: int | None = None,
) -> None:
    """Keep one entry. The action it records has happened: a failure to keep the entry is
    logged and counted (``audit_write_failures``), not turned into the action's failure."""
    if action not in ACTIONS:
        raise ValueError(f"unknown audit action {action!r}")
    try:
        await store.run(
            "record_audit",
            id=uuid.uuid4().hex,
            actor=actor,
            action=action,
            about=project,
            target=target,
            count=count,
        )
    except (Neo4jError, DriverError) as exc:
        COUNTERS.increment("audit_write_failures", action=action)
        log.error("audit entry not kept (%s, %s): %s", action, actor, type(exc).__name__)


def _cursor(row: dict[str, Any]) -> str:
    at = row["at"].iso_format() if hasattr(row["at"], "iso_format") else str(row["at"])
    return base64.urlsafe_b64encode(json.dumps([at, row["id"]]).encode()).decode()


def _after(cursor: str | None) -> tuple[str | None, str | None]:
    if not cursor:
        return None, None
    try:
        at, entry_id = json.loads(base64.urlsafe_b64decode(cursor.encode()))
    except (ValueError, TypeError):
        raise ValueError("after: not a cursor this list gave") from None
    if not isinstance(at, str) or not isinstance(entry_id, str):
        raise ValueError("after: not a cursor this list gave")
    return at, entry_id


async def audit_page(
    store: GraphStore, project: str, first: int = 50, after: str | None = None
) -> AuditPage:
    """A project's entries, newest first, ``first`` at a time from the ``after`` cursor."""
    if not 1 <= first <= MAX_PAGE:
        raise ValueError(f"first: between 1 and {MAX_PAGE}, got {first}")
    after_at, after_id = _after(after)
    rows = await store.run(
        "audit_page", about=project, after_at=after_at, after_id=after_id, limit=first + 1
    )
    page = rows[:first]
    entries = [
        AuditEntry(r["at"], r["actor"], r["action"], r["about"], r["target"], r["count"])
        for r in page
    ]
    more = len(rows) > first
    return AuditPage(entries, _cursor(page[-1]) if page and more else None, more)
