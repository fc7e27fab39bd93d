"""GraphQL for failure lineage: lineage(projects, error, since, until, limit, after)."""

from __future__ import annotations

from datetime import datetime

import strawberry

from metisgraph.api.graphql.context import Info, UserError
from metisgraph.api.graphql.error_refs import ErrorName, resolve_error
from metisgraph.api.graphql.graph_types import EnvironmentSummary, PageInfo, Step, TaskSummary
from metisgraph.api.graphql.tenancy import readable_projects, utc
from metisgraph.api.graphql.views import Node, View, derived
from metisgraph.graph import InvalidCursor, NodeRef
from metisgraph.graph.lineage import (
    MAX_PAGE,
    Attempt,
    ErrorSummary,
    Fix,
    Lineage,
    LineageRequest,
    Recurrence,
    RelatedError,
    lineage,
)

__all__ = ["ErrorRef", "LineageQuery", "LineageResult", "lineage_result"]


@strawberry.input(description="An error: exactly one of its global id, key, signature or text.")
class ErrorRef:
    id: strawberry.ID | None = None
    key: str | None = strawberry.field(default=None, description="16 hexadecimal characters")
    signature: str | None = None
    text: str | None = strawberry.field(
        default=None, description="Raw error text or a trace, signed as ingest signs it"
    )


@derived(
    ErrorSummary,
    description="The error in one project, with its sightings in the window.",
    node=Node("Error", key="key", local="key"),
    skip=("first_episode", "last_episode"),
    about={"id": "Global id: error(id), lineage(error: {id})"},
)
class LineageError(View[ErrorSummary]):
    pass


@strawberry.type(description="An episode that hit the error.")
class Sighting:
    episode: Step
    task: TaskSummary | None
    environment: EnvironmentSummary | None
    tools: list[str]


@strawberry.type(
    description="A step that acted on the error (what would be a fix's evidence) without "
    "ending it: it came back, or the step failed. Steps that merely came after are not listed."
)
class TriedAndFailed:
    episode: Step
    environment: EnvironmentSummary | None
    errors: list[str] = strawberry.field(description="Kinds of the errors this step hit")
    tools: list[str]
    why: list[str] = strawberry.field(description="The rule and what the step did: 'rule: why'")


@strawberry.type(description="Code that fixed the error.")
class FixingSnippet:
    id: strawberry.ID
    project: str
    name: str | None
    kind: str | None
    language: str | None
    description: str | None


@strawberry.type(description="A step that dealt with the error, on evidence.")
class ErrorFix:
    episode: Step
    task: TaskSummary | None
    environment: EnvironmentSummary | None
    snippets: list[FixingSnippet]
    via: list[str] = strawberry.field(
        description="RESOLVED: the step, on evidence; FIXES: its code (when it has some)"
    )
    kind: str = strawberry.field(
        description="fixed: it removed the cause; workaround: it got past it without removing it"
    )
    why: list[str] = strawberry.field(
        description="The rule and what the step did ('module: installs pytz for pytz'); rules: "
        "module, frame, path, setting, name, retry, rerun, other-means"
    )
    confidence: float | None = strawberry.field(description="The rule's standing, 0 to 1")


@strawberry.type(description="A package between the fixed run and the failing one.")
class PackageChange:
    name: str
    fixed: str | None = strawberry.field(description="Version when fixed; null: absent")
    failing: str | None = strawberry.field(description="Version when failing; null: absent")
    change: str = strawberry.field(description="added | removed | changed")


@strawberry.type(description="A runtime field that differs (os, os_version, arch, runtime …).")
class FieldChange:
    field: str
    fixed: str | None
    failing: str | None


@strawberry.type(description="How the failing run's environment differs from the fix's.")
class EnvironmentDifference:
    known: bool = strawberry.field(description="Both environments are known")
    same_environment: bool
    packages: list[PackageChange]
    fields: list[FieldChange]


@strawberry.type(
    name="Recurrence",
    description="A sighting after a fix (a regression), beside the latest fix before it.",
)
class RecurrenceView:
    episode: Step
    fix: Step
    same_project: bool
    environment: EnvironmentSummary | None
    fix_environment: EnvironmentSummary | None
    difference: EnvironmentDifference


@strawberry.type(
    name="RelatedError",
    description="An error met in the same tasks; counts of tasks by which came first.",
)
class RelatedErrorView:
    id: strawberry.ID
    project: str
    key: str
    kind: str | None
    signature: str | None
    template: str | None
    tasks: int
    preceded: int = strawberry.field(description="Tasks where it was sighted before this error")
    followed: int = strawberry.field(description="Tasks where it was sighted after")
    together: int = strawberry.field(description="Tasks where both came in one step")


@strawberry.type(description="The first or last sighting: the episode and when.")
class SightingMark:
    id: strawberry.ID = strawberry.field(description="Global id of the episode")
    project: str
    episode_id: str
    at: datetime | None


@strawberry.type
class ProjectLineage:
    project: str
    sightings: int
    tasks: int
    fixes: int
    recurrences: int
    first_seen: datetime | None
    last_seen: datetime | None


@strawberry.type(
    name="Lineage", description="An error's history across the projects asked about, in time order."
)
class LineageResult:
    errors: list[LineageError] = strawberry.field(
        description="The Error nodes that stand for the error, one per project"
    )
    sighting_count: int
    first_sighting: SightingMark | None
    last_sighting: SightingMark | None
    sightings: list[Sighting] = strawberry.field(description="This page, oldest first")
    page_info: PageInfo
    tried_and_failed: list[TriedAndFailed]
    fixes: list[ErrorFix]
    recurrences: list[RecurrenceView]
    recurrence_count: int
    related: list[RelatedErrorView]
    projects: list[ProjectLineage]
    warnings: list[str]


@strawberry.type
class LineageQuery:
    @strawberry.field(
        description="An error's lineage: sightings (paged), what failed, its fixes, "
        "recurrences after a fix with the environment difference, related errors, per-project "
        f"counts. At most {MAX_PAGE} sightings a page."
    )
    async def lineage(
        self,
        info: Info,
        projects: list[str],
        error: ErrorRef,
        since: datetime | None = None,
        until: datetime | None = None,
        limit: int = 100,
        after: str | None = None,
    ) -> LineageResult:
        services = info.context.ready_services()
        caller = info.context.caller
        scope = readable_projects(caller, projects)
        name = ErrorName(error.id, error.key, error.signature, error.text)
        members = await resolve_error(services.store, caller, scope, name)
        try:
            request = LineageRequest(members, utc(since), utc(until), limit, after)
            found = await lineage(services.store, request)
        except InvalidCursor as exc:
            raise UserError(str(exc)) from None
        except ValueError as exc:
            raise UserError(str(exc)) from None
        return lineage_result(found)


def lineage_result(found: Lineage) -> LineageResult:
    first, last = found.first, found.last
    return LineageResult(
        errors=[LineageError.of(e) for e in found.errors],
        sighting_count=found.sighting_count,
        first_sighting=_sighted(first.project, first.first_episode, first.first_seen)
        if first
        else None,
        last_sighting=_sighted(last.project, last.last_episode, last.last_seen) if last else None,
        sightings=[
            Sighting(
                episode=Step.of(s.episode),
                task=TaskSummary.maybe(s.task),
                environment=EnvironmentSummary.maybe(s.environment),
                tools=s.tools,
            )
            for s in found.sightings
        ],
        page_info=PageInfo(end_cursor=found.next_after, has_next_page=found.next_after is not None),
        tried_and_failed=[_attempt(a) for a in found.attempts],
        fixes=[_fix(f) for f in found.fixes],
        recurrences=[_recurrence(r) for r in found.recurrences],
        recurrence_count=found.recurrence_count,
        related=[_related(r) for r in found.related],
        projects=[
            ProjectLineage(
                project=p.project,
                sightings=p.sightings,
                tasks=p.tasks,
                fixes=p.fixes,
                recurrences=p.recurrences,
                first_seen=p.first_seen,
                last_seen=p.last_seen,
            )
            for p in found.projects
        ],
        warnings=found.warnings,
    )


def _sighted(project: str, episode: str | None, at: datetime | None) -> SightingMark | None:
    if episode is None:
        return None
    ref = NodeRef("Episode", project, episode)
    return SightingMark(id=strawberry.ID(ref.id), project=project, episode_id=episode, at=at)


def _attempt(a: Attempt) -> TriedAndFailed:
    return TriedAndFailed(
        episode=Step.of(a.episode),
        environment=EnvironmentSummary.maybe(a.environment),
        errors=a.errors,
        tools=a.tools,
        why=a.why,
    )


def _fix(f: Fix) -> ErrorFix:
    return ErrorFix(
        episode=Step.of(f.episode),
        task=TaskSummary.maybe(f.task),
        environment=EnvironmentSummary.maybe(f.environment),
        snippets=[
            FixingSnippet(
                id=strawberry.ID(NodeRef("Snippet", s.project, s.id).id),
                project=s.project,
                name=s.name,
                kind=s.kind,
                language=s.language,
                description=s.description,
            )
            for s in f.snippets
        ],
        via=f.via,
        kind=f.kind,
        why=f.why,
        confidence=f.confidence,
    )


def _recurrence(r: Recurrence) -> RecurrenceView:
    diff = r.diff
    return RecurrenceView(
        episode=Step.of(r.episode),
        fix=Step.of(r.fix),
        same_project=r.same_project,
        environment=EnvironmentSummary.maybe(r.environment),
        fix_environment=EnvironmentSummary.maybe(r.fix_environment),
        difference=EnvironmentDifference(
            known=diff.known,
            same_environment=diff.same_environment,
            packages=[
                PackageChange(name=p.name, fixed=p.before, failing=p.after, change=p.change)
                for p in diff.packages
            ],
            fields=[
                FieldChange(field=f, fixed=_text(a), failing=_text(b))
                for f, (a, b) in diff.fields.items()
            ],
        ),
    )


def _text(value: object) -> str | None:
    return None if value is None else str(value)


def _related(r: RelatedError) -> RelatedErrorView:
    return RelatedErrorView(
        id=strawberry.ID(NodeRef("Error", r.project, r.key).id),
        project=r.project,
        key=r.key,
        kind=r.kind,
        signature=r.signature,
        template=r.template,
        tasks=r.tasks,
        preceded=r.preceded,
        followed=r.followed,
        together=r.together,
    )
