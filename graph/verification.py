"""What the verification gate writes: a pass's VERIFIED_IN with its evidence, or a failure
kept as the snippet's last; either is an outcome report about the snippet, and either judges
again where the snippet is stale (graph/staleness.py). The queries live in
cypher/verification.cypher."""

from __future__ import annotations

import json
import uuid
from datetime import UTC, datetime
from typing import Any

from metisgraph.graph.outcomes import recount_steps
from metisgraph.graph.staleness import refresh_staleness
from metisgraph.graph.store import GraphStore

__all__ = ["record_failure", "record_pass"]

Row = dict[str, Any]


def _recount(project: str, snippet_id: str) -> list[tuple[Any, Row]]:
    return [("touch_project", {"projects": [project]}),
            *recount_steps("Snippet", [{"project": project, "id": snippet_id}])]  # fmt: skip


async def record_pass(
    store: GraphStore, project: str, snippet_id: str, environment: Row, evidence: Row
) -> Row | None:
    """Write the environment (an `upsert_environments` row) and the snippet's VERIFIED_IN it,
    with `evidence` {command, exit_code, duration_ms, output_tail}; the snippet's counts after.
    None when the project holds no such snippet (any more)."""
    rows = await store.write_many(
        [
            ("upsert_environments", {"rows": [environment]}),
            ("verification_passed",
             {"project": project, "id": snippet_id, "key": environment["key"],
              "report_key": f"verify:{uuid.uuid4().hex}", **evidence}),
            *_recount(project, snippet_id),
        ]
    )  # fmt: skip
    await refresh_staleness(store, project, snippets=[snippet_id])
    return rows[0] if rows else None


async def record_failure(
    store: GraphStore, project: str, snippet_id: str, environment_key: str | None, evidence: Row
) -> Row | None:
    """Count a failed run against the snippet and keep it as its last failure."""
    kept = {**evidence, "environment": environment_key, "at": datetime.now(UTC).isoformat()}
    rows = await store.write_many(
        [
            ("verification_failed",
             {"project": project, "id": snippet_id, "key": environment_key,
              "evidence": json.dumps(kept), "report_key": f"verify:{uuid.uuid4().hex}"}),
            *_recount(project, snippet_id),
        ]
    )  # fmt: skip
    await refresh_staleness(store, project, snippets=[snippet_id])
    return rows[0] if rows else None
