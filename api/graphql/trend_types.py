"""GraphQL trends for portals: how an error (and its family) is sighted week by week in each
project, and which errors recur in a window or appear in it for the first time."""

from __future__ import annotations

from datetime import datetime

import strawberry

from metisgraph.api.graphql.context import Info, UserError
from metisgraph.api.graphql.error_refs import ErrorName, resolve_error
from metisgraph.api.graphql.graph_types import ErrorItem
from metisgraph.api.graphql.lineage_types import ErrorRef
from metisgraph.api.graphql.tenancy import readable_projects, utc
from metisgraph.api.graphql.views import View, derived
from metisgraph.graph import NodeRef
from metisgraph.graph.explore import (
    MAX_TOP,
    new_errors,
    recurring_errors,
    weekly_sightings,
)
from metisgraph.graph.explore import WeekCount as WeekRow

__all__ = ["TrendQuery"]


@derived(
    WeekRow,
    name="WeekCount",
    description="Sightings of one project in one ISO week.",
    about={"week": "The week's Monday (weeks start 00:00 UTC)"},
)
class WeekCount(View[WeekRow]):
    pass


@strawberry.type(description="An error's weeks, and the errors that recur or are new.")
class Trends:
    errors: list[strawberry.ID] = strawberry.field(
        description="The Error nodes counted in weeks: the error named and its family"
    )
    weeks: list[WeekCount] = strawberry.field(
        description="Weeks with sightings, oldest first (weeks without any are left out)"
    )
    recurring: list[ErrorItem] = strawberry.field(
        description="Errors sighted in more than one task in the window, most sightings first"
    )
    newly_appearing: list[ErrorItem] = strawberry.field(
        description="Errors whose first sighting ever falls in the window, newest first"
    )


@strawberry.type
class TrendQuery:
    @strawberry.field(
        description="Sightings per week per project of an error (with its family), and the "
        f"projects' recurring and newly appearing errors in the window (top ≤ {MAX_TOP})."
    )
    async def trends(
        self,
        info: Info,
        projects: list[str],
        error: ErrorRef | None = None,
        since: datetime | None = None,
        until: datetime | None = None,
        top: int = 10,
    ) -> Trends:
        services = info.context.ready_services()
        caller = info.context.caller
        scope = readable_projects(caller, projects)
        start, end = utc(since), utc(until)
        if start and end and start >= end:
            raise UserError("since: must be before until")
        members = []
        if error is not None:
            name = ErrorName(error.id, error.key, error.signature, error.text)
            members = await resolve_error(services.store, caller, scope, name)
        try:
            weeks = await weekly_sightings(services.store, members, start, end)
            recurring = await recurring_errors(services.store, scope, start, end, top)
            new = await new_errors(services.store, scope, start, end, top)
        except ValueError as exc:
            raise UserError(str(exc)) from None
        return Trends(
            errors=[strawberry.ID(NodeRef("Error", m.project, m.key).id) for m in members],
            weeks=[WeekCount.of(w) for w in weeks],
            recurring=[ErrorItem.of(r) for r in recurring],
            newly_appearing=[ErrorItem.of(r) for r in new],
        )
