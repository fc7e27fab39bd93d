"""GraphQL for analytics: analytics(projects, since, until, cap)."""

from __future__ import annotations

from datetime import datetime

import strawberry

from metisgraph.api.graphql.context import Info, UserError
from metisgraph.api.graphql.tenancy import readable_projects, utc
from metisgraph.api.graphql.views import View, derived
from metisgraph.graph import NodeRef
from metisgraph.graph.analytics import (
    DEFAULT_CAP,
    MAX_CAP,
    Analytics,
    ErrorStat,
    analytics,
)
from metisgraph.graph.analytics import ErrorCluster as ClusterStat
from metisgraph.graph.analytics import FixPath as FixPathStat
from metisgraph.graph.analytics import Hub as HubStat
from metisgraph.graph.analytics import PackageLift as LiftStat
from metisgraph.graph.analytics import PathStep as PathStepStat
from metisgraph.graph.analytics import RootCause as RootCauseStat

__all__ = ["AnalyticsQuery", "AnalyticsResult"]


def _ids(e: ErrorStat) -> list[strawberry.ID]:
    return [strawberry.ID(NodeRef("Error", p, e.key).id) for p in e.projects]


@derived(
    ErrorStat,
    name="ErrorMeasure",
    description="An error (by key, across the projects measured) and how often met.",
    about={"ids": "Global ids, one per project"},
    computed={"ids": _ids},
    order=("ids", "key", "kind", "signature", "template", "projects", "sightings", "tasks"),
)
class ErrorMeasure(View[ErrorStat]):
    ids: list[strawberry.ID]


@derived(
    ClusterStat,
    name="ErrorCluster",
    description="Errors that keep meeting in the same tasks.",
    about={
        "tasks": "Tasks that hit two or more of them",
        "cohesion": "Share of the members' co-occurrence that stays inside the cluster",
    },
)
class ErrorCluster(View[ClusterStat]):
    pass


@derived(
    RootCauseStat,
    name="RootCause",
    description="An error that comes first in tasks that go on to hit others.",
    about={
        "leads": "Multi-error tasks where it was sighted first",
        "multi_tasks": "Multi-error tasks it is part of",
        "followers": "Kinds it most often precedes",
    },
)
class RootCause(View[RootCauseStat]):
    pass


@derived(
    HubStat,
    name="Hub",
    description="A snippet, tool or package at the crossroads of failures and fixes.",
    rename={"id": "node_id"},
    about={"id": "Global id (snippets)"},
    order=("kind", "name", "id", "projects", "betweenness", "errors", "failures", "fixes"),
)
class Hub(View[HubStat]):
    id: strawberry.ID | None


@derived(PathStepStat, name="PathStep")
class PathStep(View[PathStepStat]):
    id: strawberry.ID


@derived(
    FixPathStat,
    name="FixPath",
    description="The shortest way from an error to code that fixes it.",
    about={"steps": "Episodes on the path, sighting and fix included"},
)
class FixPath(View[FixPathStat]):
    pass


@derived(
    LiftStat,
    name="PackageLift",
    description="A package (or version) more frequent among failing runs.",
    about={"version": "null: any version"},
)
class PackageLift(View[LiftStat]):
    pass


@derived(
    Analytics,
    name="Analytics",
    description="Measures of a bounded subgraph (see README).",
    about={
        "episodes": "Episodes measured",
        "truncated": "More episodes lie in the window than the cap",
    },
)
class AnalyticsResult(View[Analytics]):
    pass


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
        return AnalyticsResult.of(result)
