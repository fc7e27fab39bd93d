"""The GraphQL schema: record memory, recall it."""

from __future__ import annotations

from datetime import datetime
from enum import Enum
from typing import Any

import strawberry
from graphql import GraphQLError
from strawberry.extensions import (
    AddValidationRules,
    MaxAliasesLimiter,
    MaxTokensLimiter,
    ParserCache,
    QueryDepthLimiter,
    ValidationCache,
)
from strawberry.scalars import JSON
from strawberry.tools import merge_types
from strawberry.types import ExecutionContext

from metisgraph.api.analytics_types import AnalyticsQuery
from metisgraph.api.context import Info, UserError
from metisgraph.api.errors import MaskInternalErrors
from metisgraph.api.explore_types import ExploreQuery
from metisgraph.api.lineage_types import LineageQuery
from metisgraph.api.recall_types import RecallQuery
from metisgraph.api.settings import ApiSettings
from metisgraph.api.snippet_service import MAX_NOTE_CHARS
from metisgraph.api.snippet_types import SnippetMutation, SnippetQuery
from metisgraph.api.verification_types import VerificationMutation
from metisgraph.ingest import Outcome as OutcomeEnum
from metisgraph.ingest import SnippetKind as SnippetKindEnum
from metisgraph.ingest import SnippetRelation as SnippetRelationEnum
from metisgraph.ingest import Source as SourceEnum
from metisgraph.ingest import TaskStatus as TaskStatusEnum
from metisgraph.ingest.adapters import Parsed, SourceRef, validate_record
from metisgraph.ingest.sanitize import sanitize

__all__ = ["build_schema"]

# The record enums are the GraphQL enums (registering returns the same classes).
Outcome = OutcomeEnum
Source = SourceEnum
TaskStatus = TaskStatusEnum
SnippetKind = SnippetKindEnum
SnippetRelation = SnippetRelationEnum
for _enum in (Outcome, Source, TaskStatus, SnippetKind, SnippetRelation):
    strawberry.enum(_enum)


@strawberry.input(description="What was done: a command, an API call, an edit.")
class ActionInput:
    type: str = "command"
    command: str | None = None
    parameters: JSON | None = None


@strawberry.input(description="An environment stated by the caller.")
class EnvironmentInput:
    os: str | None = None
    os_version: str | None = None
    arch: str | None = None
    runtime: str | None = None
    runtime_version: str | None = None
    packages: JSON | None = strawberry.field(default=None, description="{name: version}")


@strawberry.input(description="Code recorded with an episode.")
class SnippetInput:
    code: str
    language: str | None = None
    kind: SnippetKind | None = None
    name: str | None = None
    description: str | None = None
    relation: SnippetRelation | None = None
    tests: list[str] | None = None
    examples: list[str] | None = None


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


@strawberry.type
class FieldError:
    field: str
    message: str


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


def _plain(value: Any) -> Any:
    """Strawberry input objects → the plain JSON shape the record models validate."""
    if isinstance(value, Enum):
        return value.value
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if hasattr(value, "__strawberry_definition__"):
        return {
            k: _plain(v) for k, v in vars(value).items() if v is not None and not k.startswith("_")
        }
    return value


async def _record(info: Info, inputs: list[Any], record_type: str, pointer: str) -> BatchResult:
    services = info.context.ready_services()
    info.context.caller.require({i.project for i in inputs})
    items = []
    for n, item in enumerate(inputs):
        raw = {"record_type": record_type, **_plain(item)}
        ref = SourceRef(file="graphql", line=None, pointer=f"{pointer}[{n}]")
        items.append(validate_record(raw, ref))
    summary = await services.ingestor.ingest(items, keep_results=True)
    stored = iter(r for r in summary.results if r.status != "refused")
    results = []
    for item in items:  # results in input order
        if isinstance(item, Parsed):
            done = next(stored)
            results.append(
                RecordResult(id=done.id, status=done.status, errors=[], notes=done.notes)
            )
        else:
            given = item.raw.get("id") if isinstance(item.raw, dict) else None
            results.append(
                RecordResult(
                    id=given if isinstance(given, str) else None,  # the caller's, if any
                    status="refused",
                    errors=[FieldError(field=e.field, message=e.message) for e in item.errors],
                )
            )
    return BatchResult(
        written=sum(r.status == "written" for r in results),
        unchanged=summary.unchanged,
        refused=summary.refused,
        results=results,
    )


@strawberry.type(description="A reviewer's decision on a memory.")
class ReviewResult:
    id: str
    kind: str = strawberry.field(description="Episode | Snippet")
    status: str


@strawberry.type
class ForgetResult:
    deleted: int


REVIEW_STATUSES = ("approved", "rejected", "pending", "unreviewed")


def _forget_target(episode_id: str | None, task_id: str | None) -> tuple[str, str, str]:
    """The named query, the argument and the id that one forget call names; else a UserError.

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
    return ("forget_episode" if argument == "episodeId" else "forget_task"), argument, ident


@strawberry.type
class MemoryMutation:
    @strawberry.mutation(description="Approve, reject or hold an episode or a snippet.")
    async def review_memory(
        self, info: Info, project: str, memory_id: str, status: str, note: str | None = None
    ) -> ReviewResult:
        services = info.context.ready_services()
        info.context.caller.require(project)
        if status not in REVIEW_STATUSES:
            raise UserError(f"status must be one of {', '.join(REVIEW_STATUSES)}, got {status!r}")
        if note is not None and len(note) > MAX_NOTE_CHARS:
            raise UserError(f"note: at most {MAX_NOTE_CHARS} characters, got {len(note)}")
        rows = await services.store.run(
            "review_memory",
            project=project,
            id=memory_id,
            status=status,
            note=sanitize(note).text if note and note.strip() else None,
            reviewer=info.context.caller.name,
        )
        if not rows:
            raise UserError(f"no episode or snippet {memory_id!r} in project {project!r}")
        return ReviewResult(id=rows[0]["id"], kind=rows[0]["kind"], status=rows[0]["status"])

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
        info.context.caller.require(project)
        query, argument, ident = _forget_target(episode_id, task_id)
        rows = await services.store.run(query, project=project, id=ident)
        deleted = sum(int(r["deleted"]) for r in rows)
        if not deleted:
            raise UserError(f"{argument}: no {argument[:-2]} {ident!r} in project {project!r}")
        return ForgetResult(deleted=deleted)

    @strawberry.mutation(
        description="Forget a whole project: every memory in it, with its links. `confirm` "
        "must repeat the project's name."
    )
    async def forget_project(self, info: Info, project: str, confirm: str) -> ForgetResult:
        services = info.context.ready_services()
        info.context.caller.require(project)
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
        return ForgetResult(deleted=deleted)

    @strawberry.mutation(description="Record one episode; validated and sanitized like a file.")
    async def record_episode(self, info: Info, input: EpisodeInput) -> RecordResult:
        return (await _record(info, [input], "episode", "input")).results[0]

    @strawberry.mutation(description="Record many episodes in batches; bad ones are refused.")
    async def record_episodes(self, info: Info, inputs: list[EpisodeInput]) -> BatchResult:
        return await _record(info, inputs, "episode", "inputs")

    @strawberry.mutation(description="Record a task (episodes link to it by taskId).")
    async def record_task(self, info: Info, input: TaskInput) -> RecordResult:
        return (await _record(info, [input], "task", "input")).results[0]


# Each area contributes its own query and mutation fields; the schema merges them.
Query = merge_types(
    "Query", (RecallQuery, SnippetQuery, LineageQuery, ExploreQuery, AnalyticsQuery)
)
Mutation = merge_types("Mutation", (MemoryMutation, SnippetMutation, VerificationMutation))


_DOCUMENTS_CACHED = 256


class _QuietSchema(strawberry.Schema):
    """strawberry logs every GraphQL error with the document line and the error's text, which
    can hold variable values (memory text, secrets). Errors go to the caller only; internal
    ones are logged by ``MaskInternalErrors`` under a reference, without the request."""

    def process_errors(
        self, errors: list[GraphQLError], execution_context: ExecutionContext | None = None
    ) -> None:
        return None


def build_schema(settings: ApiSettings) -> strawberry.Schema:
    # Clients send the same few documents again and again: parsing and validating one took
    # ~9 ms of a recall. strawberry's caches are bounded LRUs shared by the extension
    # instances it builds per request, keyed by the document text (parse) and by the
    # parsed document with the validation rules (validate). The limiters' rule classes are
    # therefore built once: each limiter makes its own class, and a fresh class per
    # request would never hit the cache. A document over the token limit fails to parse
    # and is not cached; a document too deep or with too many aliases is cached with its
    # errors.
    rules = [
        *QueryDepthLimiter(max_depth=settings.max_query_depth).validation_rules,
        *MaxAliasesLimiter(max_alias_count=settings.max_aliases).validation_rules,
    ]
    return _QuietSchema(
        query=Query,
        mutation=Mutation,
        extensions=[
            lambda: AddValidationRules(rules),
            lambda: MaxTokensLimiter(max_token_count=settings.max_query_tokens),
            lambda: ParserCache(maxsize=_DOCUMENTS_CACHED),
            lambda: ValidationCache(maxsize=_DOCUMENTS_CACHED),
            MaskInternalErrors,
        ],
    )
