"""Keeping memory healthy on request: a reviewer's decision, and forgetting an episode, a task
or a whole project, with their links.

The GraphQL resolvers call these after checking the caller; a request that cannot be acted
on raises UserError naming the argument. A reviewer's note is sanitized like memory.
"""

from __future__ import annotations

from dataclasses import dataclass

from metisgraph.api.graphql.context import UserError
from metisgraph.api.graphql.snippet_service import MAX_NOTE_CHARS
from metisgraph.api.services import Services
from metisgraph.ingest.pipeline import forget_episodes
from metisgraph.ingest.sanitize import redact_id, sanitize

__all__ = ["REVIEW_STATUSES", "Reviewed", "forget", "forget_project", "review"]

REVIEW_STATUSES = ("approved", "rejected", "pending", "unreviewed")


@dataclass(frozen=True)
class Reviewed:
    id: str
    kind: str  # Episode | Snippet
    status: str


async def review(
    services: Services,
    project: str,
    memory_id: str,
    status: str,
    note: str | None,
    reviewer: str,
) -> Reviewed:
    """Approve, reject or hold an episode or a snippet; rejected memory is never recalled."""
    if status not in REVIEW_STATUSES:
        raise UserError(f"status must be one of {', '.join(REVIEW_STATUSES)}, got {status!r}")
    if note is not None and len(note) > MAX_NOTE_CHARS:
        raise UserError(f"note: at most {MAX_NOTE_CHARS} characters, got {len(note)}")
    rows = await services.store.run(
        "review_memory",
        project=project,
        id=redact_id(memory_id),
        status=status,
        note=sanitize(note).text if note and note.strip() else None,
        reviewer=reviewer,
    )
    if not rows:
        raise UserError(f"no episode or snippet {memory_id!r} in project {project!r}")
    return Reviewed(id=rows[0]["id"], kind=rows[0]["kind"], status=rows[0]["status"])


def _forget_target(episode_id: str | None, task_id: str | None) -> tuple[str, str]:
    """The argument and the id that one forget call names; else a UserError.

    An empty id must never widen what is deleted: it is refused, like a missing one.
    """
    given = {"episodeId": episode_id, "taskId": task_id}
    for argument, value in given.items():
        if value is not None and not value.strip():
            raise UserError(f"{argument}: must not be empty")
    named = [(argument, value) for argument, value in given.items() if value is not None]
    if len(named) != 1:
        raise UserError(
            "give episodeId or taskId (one, not both); to forget a whole project use "
            "forgetProject(project, confirm) with the project's name as confirmation"
        )
    argument, ident = named[0]
    # Ids are stored as redact_id makes them: the id a caller recorded finds its memory.
    return argument, redact_id(ident)


async def forget(
    services: Services, project: str, episode_id: str | None, task_id: str | None
) -> int:
    """Forget one episode, or one task with its episodes, and what was derived from them
    (ingest/pipeline/forgetting.py); how many nodes went."""
    argument, ident = _forget_target(episode_id, task_id)
    if argument == "episodeId":
        done = await forget_episodes(services.store, project, [ident])
    else:
        rows = await services.store.run("task_episode_ids", project=project, id=ident)
        ids = list(rows[0]["ids"]) if rows else []
        done = await forget_episodes(services.store, project, ids, tasks=[ident] if rows else [])
    if not done.deleted:
        raise UserError(f"{argument}: no {argument[:-2]} {ident!r} in project {project!r}")
    return done.deleted


async def forget_project(services: Services, project: str, confirm: str) -> int:
    """Forget every memory of a project; `confirm` must repeat its name. How many nodes went."""
    if not project.strip():
        raise UserError("project: must not be blank")
    if confirm != project:
        raise UserError(
            f"confirm: must repeat the project's name exactly ({project!r}) to forget "
            "the whole project; nothing was deleted"
        )
    rows = await services.store.run("forget_project", project=project)
    deleted = sum(int(r["deleted"]) for r in rows)
    if not deleted:
        raise UserError(f"project: nothing stored in project {project!r}")
    return deleted
