"""GraphQL for keeping memory: reviewMemory, forget and forgetProject (memory_service.py)."""

from __future__ import annotations

import strawberry

from metisgraph.api.audit import REVIEW_ACTIONS
from metisgraph.api.graphql import memory_service as service
from metisgraph.api.graphql.context import Info
from metisgraph.ingest.sanitize import redact_id

__all__ = ["ForgetResult", "MemoryMutation", "ReviewResult"]


@strawberry.type(description="A reviewer's decision on a memory.")
class ReviewResult:
    id: str
    kind: str = strawberry.field(description="Episode | Snippet")
    status: str


@strawberry.type
class ForgetResult:
    deleted: int


@strawberry.type
class MemoryMutation:
    @strawberry.mutation(
        description="Approve, reject or hold an episode or a snippet.",
        deprecation_reason="Use review(project, memoryId, action, note, correction), which "
        "also corrects",
    )
    async def review_memory(
        self, info: Info, project: str, memory_id: str, status: str, note: str | None = None
    ) -> ReviewResult:
        services = info.context.ready_services()
        info.context.require(info, project)
        reviewer = info.context.caller.name
        done = await service.review(services, project, memory_id, status, note, reviewer)
        await info.context.audit(REVIEW_ACTIONS[done.status], project, target=done.id)
        return ReviewResult(id=done.id, kind=done.kind, status=done.status)

    @strawberry.mutation(
        description="Forget one episode (episodeId) or one task with its episodes (taskId). "
        "An id that names nothing is an error; forgetProject forgets a whole project."
    )
    async def forget(
        self,
        info: Info,
        project: str,
        episode_id: str | None = None,
        task_id: str | None = None,
    ) -> ForgetResult:
        services = info.context.ready_services()
        info.context.require(info, project)
        deleted = await service.forget(services, project, episode_id, task_id)
        target = redact_id(episode_id or task_id or "")  # ids are kept as stored
        await info.context.audit("forget", project, target=target, count=deleted)
        return ForgetResult(deleted=deleted)

    @strawberry.mutation(
        description="Forget a whole project: every memory in it, with its links. `confirm` "
        "must repeat the project's name."
    )
    async def forget_project(self, info: Info, project: str, confirm: str) -> ForgetResult:
        services = info.context.ready_services()
        info.context.require(info, project)
        deleted = await service.forget_project(services, project, confirm)
        await info.context.audit("forget_project", project, count=deleted)
        return ForgetResult(deleted=deleted)
