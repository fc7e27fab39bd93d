"""GraphQL for failure lineage: lineage(projects, error, since, until, limit, after)."""

from __future__ import annotations

from datetime import datetime

import strawberry

from metisgraph.api.graphql.context import Info, UserError
from metisgraph.api.graphql.error_refs import ErrorName, resolve_error
from metisgraph.api.graphql.graph_types import PageInfo
from metisgraph.api.graphql.tenancy import readable_projects, utc
from metisgraph.api.graphql.views import Node, View, derived
from metisgraph.graph import InvalidCursor, NodeRef
from metisgraph.graph.lineage import (
    MAX_PAGE,
    Attempt,
    EnvironmentDiff,
    ErrorSummary,
    Fix,
    Lineage,
    LineageRequest,
    ProjectCount,
    Recurrence,
    RelatedError,
    SnippetView,
    lineage,
)
from metisgraph.graph.lineage import PackageChange as PackageRow
from metisgraph.graph.lineage import Sighting as SightingRow

__all__ = ["ErrorRef", "LineageQuery", "LineageResult"]


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


@derived(SightingRow, name="Sighting", description="An episode that hit the error.")
class Sighting(View[SightingRow]):
    pass


@derived(
    Attempt,
    name="TriedAndFailed",
    description="A step that acted on the error (what would be a fix's evidence) without "
    "ending it: it came back, or the step failed. Steps that merely came after are not listed.",
    about={
        "errors": "Kinds of the errors this step hit",
        "why": "The rule and what the step did: 'rule: why'",
    },
)
class TriedAndFailed(View[Attempt]):
    pass


@derived(
    SnippetView,
    name="FixingSnippet",
    description="Code that fixed the error.",
    node=Node("Snippet", key="id"),
)
class FixingSnippet(View[SnippetView]):
    pass


@derived(
    Fix,
    name="ErrorFix",
    description="A step that dealt with the error, on evidence.",
    about={
        "via": "RESOLVED: the step, on evidence; FIXES: its code (when it has some)",
        "kind": "fixed: it removed the cause; workaround: it got past it without removing it",
        "why": "The rule and what the step did ('module: installs pytz for pytz'); rules: "
        "module, frame, path, setting, name, retry, rerun, other-means",
        "confidence": "The rule's standing, 0 to 1",
    },
)
class ErrorFix(View[Fix]):
    pass


@derived(
    PackageRow,
    name="PackageChange",
    description="A package between the fixed run and the failing one.",
    rename={"fixed": "before", "failing": "after"},
    about={
        "fixed": "Version when fixed; null: absent",
        "failing": "Version when failing; null: absent",
        "change": "added | removed | changed",
    },
)
class PackageChange(View[PackageRow]):
    change: str


@strawberry.type(description="A runtime field that differs (os, os_version, arch, runtime …).")
class FieldChange:
    field: str
    fixed: str | None
    failing: str | None


def _field_changes(diff: EnvironmentDiff) -> list[FieldChange]:
    return [
        FieldChange(field=f, fixed=_text(a), failing=_text(b)) for f, (a, b) in diff.fields.items()
    ]


def _text(value: object) -> str | None:
    return None if value is None else str(value)


@derived(
    EnvironmentDiff,
    name="EnvironmentDifference",
    description="How the failing run's environment differs from the fix's.",
    about={"known": "Both environments are known"},
    computed={"fields": _field_changes},
)
class EnvironmentDifference(View[EnvironmentDiff]):
    fields: list[FieldChange]


@derived(
    Recurrence,
    name="Recurrence",
    description="A sighting after a fix (a regression), beside the latest fix before it.",
    rename={"difference": "diff"},
    order=("episode", "fix", "same_project", "environment", "fix_environment", "difference"),
)
class RecurrenceView(View[Recurrence]):
    same_project: bool


@derived(
    RelatedError,
    name="RelatedError",
    description="An error met in the same tasks; counts of tasks by which came first.",
    node=Node("Error", key="key", local="key"),
    about={
        "preceded": "Tasks where it was sighted before this error",
        "followed": "Tasks where it was sighted after",
        "together": "Tasks where both came in one step",
    },
)
class RelatedErrorView(View[RelatedError]):
    pass


@strawberry.type(description="The first or last sighting: the episode and when.")
class SightingMark:
    id: strawberry.ID = strawberry.field(description="Global id of the episode")
    project: str
    episode_id: str
    at: datetime | None


def _first(found: Lineage) -> SightingMark | None:
    e = found.first
    return _sighted(e.project, e.first_episode, e.first_seen) if e else None


def _last(found: Lineage) -> SightingMark | None:
    e = found.last
    return _sighted(e.project, e.last_episode, e.last_seen) if e else None


def _sighted(project: str, episode: str | None, at: datetime | None) -> SightingMark | None:
    if episode is None:
        return None
    ref = NodeRef("Episode", project, episode)
    return SightingMark(id=strawberry.ID(ref.id), project=project, episode_id=episode, at=at)


def _page(found: Lineage) -> PageInfo:
    return PageInfo(end_cursor=found.next_after, has_next_page=found.next_after is not None)


@derived(ProjectCount, name="ProjectLineage")
class ProjectLineage(View[ProjectCount]):
    pass


@derived(
    Lineage,
    name="Lineage",
    description="An error's history across the projects asked about, in time order.",
    rename={"tried_and_failed": "attempts"},
    skip=("next_after",),
    about={
        "errors": "The Error nodes that stand for the error, one per project",
        "sightings": "This page, oldest first",
    },
    computed={"first_sighting": _first, "last_sighting": _last, "page_info": _page},
    order=(
        "errors",
        "sighting_count",
        "first_sighting",
        "last_sighting",
        "sightings",
        "page_info",
        "tried_and_failed",
        "fixes",
        "recurrences",
        "recurrence_count",
        "related",
        "projects",
        "warnings",
    ),
)
class LineageResult(View[Lineage]):
    sighting_count: int
    first_sighting: SightingMark | None
    last_sighting: SightingMark | None
    page_info: PageInfo


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
        return LineageResult.of(found)
