"""GraphQL types of a recall answer, and the resolver that fills them."""

from __future__ import annotations

from datetime import datetime
from typing import Any

import strawberry
from strawberry.scalars import JSON

from metisgraph.api.context import Info
from metisgraph.api.recall_service import recall_result
from metisgraph.graph.recall import Hit

__all__ = ["RecallResult", "run_recall"]


@strawberry.type(description="A task an episode belongs to, and how it ended.")
class TaskInfo:
    id: str
    goal: str | None
    status: str | None
    outcome: str | None


@strawberry.type(description="One unit of experience (sanitized: no raw text, no secrets).")
class Episode:
    id: str
    project: str
    task_id: str | None
    step: int | None
    kind: str | None
    title: str | None
    summary: str
    reasoning: str | None
    action_type: str | None
    action_command: str | None
    observation: str | None
    error: str | None
    outcome: str
    tags: list[str]
    source: str | None
    confidence: float | None
    review_status: str | None
    resolution: str | None
    resolved_by: str | None
    created_at: datetime | None


@strawberry.type(description="Why a hit ranked where it did: each channel's score and rank.")
class Why:
    channels: JSON
    ranks: JSON


@strawberry.type
class RecallHit:
    episode: Episode
    score: float
    why: Why
    task: TaskInfo | None


@strawberry.type
class RecallResult:
    hits: list[RecallHit]
    abstained: bool
    reason: str | None
    timings: JSON


def _episode(row: dict[str, Any]) -> Episode:
    created = row.get("created_at")
    return Episode(
        id=row["id"],
        project=row["project"],
        task_id=row.get("task_id"),
        step=row.get("step"),
        kind=row.get("kind"),
        title=row.get("title"),
        summary=row.get("summary") or "",
        reasoning=row.get("reasoning"),
        action_type=row.get("action_type"),
        action_command=row.get("action_command"),
        observation=row.get("observation"),
        error=row.get("error_text"),
        outcome=row.get("outcome") or "unknown",
        tags=list(row.get("tags") or []),
        source=row.get("source"),
        confidence=row.get("confidence"),
        review_status=row.get("review_status"),
        resolution=row.get("resolution"),
        resolved_by=row.get("resolved_by"),
        created_at=created.to_native() if hasattr(created, "to_native") else created,
    )


def _hit(hit: Hit) -> RecallHit:
    task = None
    if hit.task:
        task = TaskInfo(
            id=hit.task["id"],
            goal=hit.task.get("goal"),
            status=hit.task.get("status"),
            outcome=hit.task.get("outcome"),
        )
    return RecallHit(
        episode=_episode(hit.episode),
        score=hit.score,
        why=Why(channels=hit.channels, ranks=hit.ranks),
        task=task,
    )


async def run_recall(info: Info, project: str, query: str, k: int) -> RecallResult:
    services = info.context.ready_services()
    info.context.caller.require(project)
    result = await recall_result(services, project=project, query=query, k=k)
    return RecallResult(
        hits=[_hit(h) for h in result.hits],
        abstained=not result.hits,
        reason=None if result.hits else "no memory in this project matches the question",
        timings=result.timings,
    )
