"""GraphQL view of what fixed the errors a recalled step hit: the fixing steps by the
lineage's fix links (``graph.Hit.fixed_by``), grouped by action, fixes before workarounds."""

from __future__ import annotations

from typing import Any

import strawberry
from strawberry.scalars import JSON

__all__ = ["HitFix", "hit_fix"]


@strawberry.type(
    description="A step that fixed (or worked round) an error the hit ran into, and how often "
    "that same action did so across runs"
)
class HitFix:
    kind: str = strawberry.field(
        description="fixed | workaround | resolved (a link from before the evidence rules: the "
        "step that resolved its task)"
    )
    action: str = strawberry.field(description="The fixing step's command (or its summary)")
    runs: int = strawberry.field(description="Runs (tasks) in which this action did it")
    links: int = strawberry.field(description="Fix links behind it (errors it ended)")
    confidence: float | None = strawberry.field(description="The best link's confidence")
    episode: str = strawberry.field(description="The fixing step (the most confident one)")
    summary: str | None
    parameters: JSON | None = strawberry.field(description="The fixing step's action parameters")
    why: str | None = strawberry.field(description="The evidence the link was claimed on")
    error: str | None = strawberry.field(description="The error it fixed (template or key)")


def hit_fix(row: dict[str, Any]) -> HitFix:
    confidence = row.get("confidence")
    return HitFix(
        kind=str(row.get("kind") or "resolved"),
        action=str(row.get("action") or ""),
        runs=int(row.get("runs") or 0),
        links=int(row.get("links") or 0),
        confidence=float(confidence) if confidence is not None else None,
        episode=str(row.get("episode") or ""),
        summary=row.get("summary"),
        parameters=row.get("parameters"),
        why=row.get("why"),
        error=row.get("error"),
    )
