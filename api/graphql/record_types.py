"""GraphQL for writing memory: recordEpisode(s) and recordTask, validated like ingest files."""

from __future__ import annotations

from datetime import datetime
from typing import Any

import strawberry
from strawberry.scalars import JSON

from metisgraph.api.graphql.common_types import (
    EnvironmentInput,
    FieldError,
    Outcome,
    SnippetInput,
    Source,
    TaskStatus,
    plain,
)
from metisgraph.api.graphql.context import Info, UserError
from metisgraph.ingest import PROJECT_NAME
from metisgraph.ingest.adapters import Parsed, Refused, SourceRef, printable, validate_record

__all__ = [
    "MAX_RECORDS_PER_CALL",
    "BatchResult",
    "EpisodeInput",
    "RecordMutation",
    "RecordResult",
    "TaskInput",
]

# One call is validated on the event loop and written as one ingest: a list of any length
# would hold the server and a key's quota at once. Files of any size go through `ingest`.
MAX_RECORDS_PER_CALL = 1_000


@strawberry.input(description="What was done: a command, an API call, an edit.")
class ActionInput:
    type: str = "command"
    command: str | None = None
    parameters: JSON | None = None


@strawberry.input(description="One unit of experience. Validated like a line of an ingest file.")
class EpisodeInput:
    project: str
    summary: str
    id: str | None = None
    task_id: str | None = None
    step: int | None = None
    kind: str | None = None
    title: str | None = None
    facts: JSON | None = None
    reasoning: str | None = None
    action: ActionInput | None = None
    observation: str | None = None
    error: str | None = None
    outcome: Outcome | None = None
    tags: list[str] | None = None
    source: Source | None = None
    confidence: float | None = None
    created_at: datetime | None = None
    environment: EnvironmentInput | None = None
    tools: list[str] | None = None
    snippets: list[SnippetInput] | None = None
    cites: list[str] | None = strawberry.field(
        default=None,
        description="Ids of the memories the step relied on (the planContext memories it "
        "cited): once the step or its task ends in success, each counts as used — its "
        "decay clock restarts, as with recordOutcome",
    )


@strawberry.input(description="One issue or job being worked on.")
class TaskInput:
    project: str
    goal: str
    id: str | None = None
    constraints: list[str] | None = None
    status: TaskStatus | None = None
    outcome: Outcome | None = None
    started_at: datetime | None = None
    ended_at: datetime | None = None
    tags: list[str] | None = None
    agent: str | None = None


@strawberry.type(description="What happened to one record.")
class RecordResult:
    id: str | None
    status: str = strawberry.field(description="written | unchanged | refused")
    errors: list[FieldError]
    notes: list[str] = strawberry.field(
        default_factory=list,
        description="Stored, but not whole: a text over its limit keeps its head and tail",
    )


@strawberry.type
class BatchResult:
    written: int
    unchanged: int
    refused: int
    results: list[RecordResult]


async def _record(info: Info, inputs: list[Any], record_type: str, pointer: str) -> BatchResult:
    services = info.context.ready_services()
    if len(inputs) > MAX_RECORDS_PER_CALL:
        raise UserError(
            f"{pointer}: at most {MAX_RECORDS_PER_CALL:,} records a call, got {len(inputs):,};"
            " nothing was written: send them in several calls"
        )
    projects = {i.project for i in inputs}
    info.context.require(info, projects)
    items = []
    for n, item in enumerate(inputs):
        raw = {"record_type": record_type, **plain(item)}
        ref = SourceRef(file="graphql", line=None, pointer=f"{pointer}[{n}]")
        items.append(validate_record(raw, ref))
    # The day's quota is charged for what may be written: a record refused by validation
    # costs nothing (it was charged before validation, issue 30).
    await info.context.reserve_records(sum(isinstance(i, Parsed) for i in items))
    summary = await services.ingestor.ingest(items, keep_results=True)
    stored = iter(r for r in summary.results if r.status != "refused")
    # Valid records can still be refused while they are prepared: found by where they are.
    late = {r.ref: r for r in summary.refusals if isinstance(r, Refused)}
    results = []
    for item in items:  # results in input order
        if isinstance(item, Parsed) and item.ref not in late:
            done = next(stored)
            results.append(
                RecordResult(id=done.id, status=done.status, errors=[], notes=done.notes)
            )
        else:
            refusal = late.get(item.ref, item)
            assert isinstance(refusal, Refused)
            given = refusal.raw.get("id") if isinstance(refusal.raw, dict) else None
            results.append(
                RecordResult(
                    id=printable(given) if isinstance(given, str) else None,  # the caller's
                    status="refused",
                    errors=[FieldError(field=e.field, message=e.message) for e in refusal.errors],
                )
            )
    await _audit(info, items, results)
    return BatchResult(
        written=sum(r.status == "written" for r in results),
        unchanged=summary.unchanged,
        refused=summary.refused,
        results=results,
    )


async def _audit(info: Info, items: list[Parsed | Refused], results: list[RecordResult]) -> None:
    """One entry a project: ``record`` with the records kept (written or unchanged), or
    ``record_refused`` with count 0 when every one was refused. A record whose project is
    not a project name (refused for it) is no project's: no entry names it."""
    kept: dict[str, int] = {}
    for item, result in zip(items, results, strict=True):
        project = _project_of(item)
        if project is not None:
            kept[project] = kept.get(project, 0) + (result.status != "refused")
    for project, count in sorted(kept.items()):
        await info.context.audit("record" if count else "record_refused", project, count=count)


def _project_of(item: Parsed | Refused) -> str | None:
    if isinstance(item, Parsed):
        return str(item.record.project)
    project = item.raw.get("project") if isinstance(item.raw, dict) else None
    if isinstance(project, str) and PROJECT_NAME.fullmatch(project):
        return project
    return None


@strawberry.type
class RecordMutation:
    @strawberry.mutation(description="Record one episode; validated and sanitized like a file.")
    async def record_episode(self, info: Info, input: EpisodeInput) -> RecordResult:
        return (await _record(info, [input], "episode", "input")).results[0]

    @strawberry.mutation(
        description=f"Record many episodes (at most {MAX_RECORDS_PER_CALL:,} a call) in "
        "batches; bad ones are refused."
    )
    async def record_episodes(self, info: Info, inputs: list[EpisodeInput]) -> BatchResult:
        return await _record(info, inputs, "episode", "inputs")

    @strawberry.mutation(description="Record a task (episodes link to it by taskId).")
    async def record_task(self, info: Info, input: TaskInput) -> RecordResult:
        return (await _record(info, [input], "task", "input")).results[0]
