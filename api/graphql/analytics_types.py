"""GraphQL for analytics: analytics(projects, since, until, cap)."""

from __future__ import annotations

from datetime import datetime

import strawberry

from metisgraph.api.graphql.context import Info, UserError
from metisgraph.api.graphql.tenancy import readable_projects, utc
from metisgraph.graph import NodeRef
from metisgraph.graph.analytics import DEFAULT_CAP, MAX_CAP, Analytics, ErrorStat, analytics

__all__ = ["AnalyticsQuery", "AnalyticsResult", "analytics_result"]


@strawberry.type(description="An error (by key, across the projects measured) and how often met.")
class ErrorMeasure:
    ids: list[strawberry.ID] = strawberry.field(description="Global ids, one per project")
    key: str
    kind: str | None
    signature: str | None
    template: str | None
    projects: list[str]
    sightings: int
    tasks: int


@strawberry.type(description="Errors that keep meeting in the same tasks.")
class ErrorCluster:
    errors: list[ErrorMeasure]
    tasks: int = strawberry.field(description="Tasks that hit two or more of them")
    projects: list[str]
    cohesion: float = strawberry.field(
        description="Share of the members' co-occurrence that stays inside the cluster"
    )


@strawberry.type(description="An error that comes first in tasks that go on to hit others.")
class RootCause:
    error: ErrorMeasure
    leads: int = strawberry.field(description="Multi-error tasks where it was sighted first")
    multi_tasks: int = strawberry.field(description="Multi-error tasks it is part of")
    share: float
    precedes: int
    preceded_by: int
    followers: list[str] = strawberry.field(description="Kinds it most often precedes")


@strawberry.type(description="A snippet, tool or package at the crossroads of failures and fixes.")
class Hub:
    kind: str
    name: str
    id: strawberry.ID | None = strawberry.field(description="Global id (snippets)")
    projects: list[str]
    betweenness: float
    errors: int
    failures: int
    fixes: int


@strawberry.type
class PathStep:
    kind: str
    id: strawberry.ID
    label: str


@strawberry.type(description="The shortest way from an error to code that fixes it.")
class FixPath:
    error: ErrorMeasure
    snippet: str
    steps: int = strawberry.field(description="Episodes on the path, sighting and fix included")
    path: list[PathStep]


@strawberry.type(description="A package (or version) more frequent among failing runs.")
class PackageLift:
    name: str
    version: str | None = strawberry.field(description="null: any version")
    failing: int
    total: int
    lift: float


@strawberry.type(name="Analytics", description="Measures of a bounded subgraph (see README).")
class AnalyticsResult:
    projects: list[str]
    since: datetime | None
    until: datetime | None
    episodes: int = strawberry.field(description="Episodes measured")
    cap: int
    truncated: bool = strawberry.field(description="More episodes lie in the window than the cap")
    clusters: list[ErrorCluster]
    root_causes: list[RootCause]
    hubs: list[Hub]
    fix_paths: list[FixPath]
    over_represented: list[PackageLift]
    warnings: list[str]


@strawberry.type
class AnalyticsQuery:
    @strawberry.field(
        description="Clusters of related errors, root-cause candidates, hubs, error → fix paths "
        f"and over-represented packages, on the cap (default {DEFAULT_CAP:,}, at most "
        f"{MAX_CAP:,}) most recent episodes of the projects in the window."
    )
    async def analytics(
        self,
        info: Info,
        projects: list[str],
        since: datetime | None = None,
        until: datetime | None = None,
        cap: int = DEFAULT_CAP,
    ) -> AnalyticsResult:
        services = info.context.ready_services()
        scope = readable_projects(info.context.caller, projects)
        try:
            result = await analytics(services.store, scope, utc(since), utc(until), cap)
        except ValueError as exc:
            raise UserError(str(exc)) from None
        return analytics_result(result)


def _measure(e: ErrorStat) -> ErrorMeasure:
    return ErrorMeasure(
        ids=[strawberry.ID(NodeRef("Error", p, e.key).id) for p in e.projects],
        key=e.key,
        kind=e.kind,
        signature=e.signature,
        template=e.template,
        projects=list(e.projects),
        sightings=e.sightings,
        tasks=e.tasks,
    )


def analytics_result(a: Analytics) -> AnalyticsResult:
    return AnalyticsResult(
        projects=a.projects,
        since=a.since,
        until=a.until,
        episodes=a.episodes,
        cap=a.cap,
        truncated=a.truncated,
        clusters=[
            ErrorCluster(
                errors=[_measure(e) for e in c.errors],
                tasks=c.tasks,
                projects=c.projects,
                cohesion=c.cohesion,
            )
            for c in a.clusters
        ],
        root_causes=[
            RootCause(
                error=_measure(r.error),
                leads=r.leads,
                multi_tasks=r.multi_tasks,
                share=r.share,
                precedes=r.precedes,
                preceded_by=r.preceded_by,
                followers=r.followers,
            )
            for r in a.root_causes
        ],
        hubs=[
            Hub(
                kind=h.kind,
                name=h.name,
                id=strawberry.ID(h.node_id) if h.node_id else None,
                projects=h.projects,
                betweenness=h.betweenness,
                errors=h.errors,
                failures=h.failures,
                fixes=h.fixes,
            )
            for h in a.hubs
        ],
        fix_paths=[
            FixPath(
                error=_measure(p.error),
                snippet=p.snippet,
                steps=p.steps,
                path=[PathStep(kind=s.kind, id=strawberry.ID(s.id), label=s.label) for s in p.path],
            )
            for p in a.fix_paths
        ],
        over_represented=[
            PackageLift(
                name=x.name, version=x.version, failing=x.failing, total=x.total, lift=x.lift
            )
            for x in a.over_represented
        ],
        warnings=a.warnings,
    )
