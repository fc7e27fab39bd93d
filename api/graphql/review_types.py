"""GraphQL for review: the pending queue (cursor-paged), the four actions, a memory's review."""

from __future__ import annotations

from enum import Enum
from typing import Any

import strawberry

from metisgraph.api.audit import REVIEW_ACTIONS
from metisgraph.api.graphql.context import Info
from metisgraph.api.graphql.review_service import (
    Correction,
    correct,
    decide,
    review_detail,
    review_queue,
)
from metisgraph.ingest import Outcome

__all__ = ["ReviewMutation", "ReviewQuery"]


@strawberry.enum(description="What a reviewer does with a memory")
class ReviewAction(Enum):
    APPROVE = "approve"
    REJECT = "reject"
    HOLD = "hold"
    CORRECT = "correct"


@strawberry.enum(description="Kinds of memory a reviewer sees")
class ReviewKind(Enum):
    EPISODE = "episode"
    SNIPPET = "snippet"


@strawberry.input(description="What a correction changes; fields left out are kept.")
class CorrectionInput:
    title: str | None = None
    summary: str | None = None
    reasoning: str | None = None
    observation: str | None = None
    error: str | None = None
    outcome: Outcome | None = None
    command: str | None = strawberry.field(default=None, description="An episode's action")
    code: str | None = strawberry.field(default=None, description="A snippet's code")
    name: str | None = None
    description: str | None = None


@strawberry.type(description="A memory waiting for a reviewer.")
class PendingMemory:
    kind: str = strawberry.field(description="Episode | Snippet")
    id: str
    title: str | None
    summary: str | None
    command: str | None
    code: str | None
    outcome: str | None
    risk: str | None
    reason: str | None = strawberry.field(description="Why it waits: the rule it tripped")
    recorded: str | None


@strawberry.type
class ReviewQueuePage:
    items: list[PendingMemory]
    total: int = strawberry.field(description="Pending memories of this kind in the project")
    end_cursor: str | None = strawberry.field(description="Pass as `after` for the next page")
    has_next_page: bool


@strawberry.type(description="The version a correction replaced, and who corrected it why.")
class VersionLink:
    id: str
    reason: str | None
    reviewer: str | None
    note: str | None
    at: str | None


@strawberry.type(description="A memory's review: status, reviewer, note, versions.")
class MemoryReview:
    kind: str
    id: str
    status: str
    reviewer: str | None
    note: str | None
    reviewed_at: str | None
    reason: str | None = strawberry.field(description="Why it started pending, if it did")
    corrected_by: str | None = strawberry.field(description="The version that corrected it")
    version_of: VersionLink | None = strawberry.field(description="The version it corrects")


def _review(row: dict[str, Any]) -> MemoryReview:
    link = row.get("version_of")
    return MemoryReview(
        kind=row["kind"],
        id=row["id"],
        status=row["status"],
        reviewer=row.get("reviewer"),
        note=row.get("note"),
        reviewed_at=row.get("reviewed_at"),
        reason=row.get("reason"),
        corrected_by=row.get("corrected_by"),
        version_of=VersionLink(**link) if link else None,
    )


@strawberry.type
class ReviewQuery:
    @strawberry.field(description="Pending memories of a project, oldest id first, by pages.")
    async def review_queue(
        self,
        info: Info,
        project: str,
        kind: ReviewKind | None = None,
        first: int = 20,
        after: str | None = None,
    ) -> ReviewQueuePage:
        services = info.context.ready_services()
        info.context.require(info, project)
        page = await review_queue(services, project, kind.value if kind else None, first, after)
        items = [
            PendingMemory(
                kind=row["kind"],
                id=row["id"],
                title=row.get("title"),
                summary=row.get("summary"),
                command=row.get("command"),
                code=row.get("code"),
                outcome=row.get("outcome"),
                risk=row.get("risk"),
                reason=row.get("reason"),
                recorded=row.get("recorded"),
            )
            for row in page.items
        ]
        return ReviewQueuePage(
            items=items, total=page.total, end_cursor=page.end_cursor, has_next_page=page.has_next
        )

    @strawberry.field(description="A memory's review: who decided, why, and its versions.")
    async def memory_review(self, info: Info, project: str, memory_id: str) -> MemoryReview:
        services = info.context.ready_services()
        info.context.require(info, project)
        return _review(await review_detail(services, project, memory_id))


@strawberry.type
class ReviewMutation:
    @strawberry.mutation(
        description="Approve, reject, hold or correct an episode or a snippet. A correction "
        "is a new version (VERSION_OF the old, with reviewer and note); the old leaves recall."
    )
    async def review(
        self,
        info: Info,
        project: str,
        memory_id: str,
        action: ReviewAction,
        note: str | None = None,
        correction: CorrectionInput | None = None,
    ) -> MemoryReview:
        services = info.context.ready_services()
        info.context.require(info, project)
        reviewer = info.context.caller.name
        if action is ReviewAction.CORRECT:
            values = {k: v for k, v in vars(correction or CorrectionInput()).items()}
            if isinstance(values.get("outcome"), Enum):
                values["outcome"] = values["outcome"].value
            done = await correct(services, project, memory_id, Correction(values), note, reviewer)
            await info.context.audit("correct", project, target=done["previous"])
            return _review(await review_detail(services, project, done["id"]))
        decided = await decide(services, project, memory_id, action.value, note, reviewer)
        await info.context.audit(REVIEW_ACTIONS[decided.status], project, target=decided.id)
        return _review(await review_detail(services, project, memory_id))
