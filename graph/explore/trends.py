"""Trends for the explorer: an error's sightings per week per project, the errors that first
appeared in a window, and those that recur in it (``cypher/trends.cypher``, explore_errors)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import date, datetime

from metisgraph.graph.explore.listing import ErrorRow, error_page
from metisgraph.graph.explore.order import ErrorOrder
from metisgraph.graph.lineage import ErrorKey
from metisgraph.graph.store import GraphStore

__all__ = ["MAX_TOP", "WeekCount", "new_errors", "recurring_errors", "weekly_sightings"]

MAX_TOP = 50


@dataclass(frozen=True)
class WeekCount:
    """Sightings of one project in one ISO week (the week's Monday)."""

    project: str
    week: date
    sightings: int


async def weekly_sightings(
    store: GraphStore,
    members: Iterable[ErrorKey],
    since: datetime | None,
    until: datetime | None,
) -> list[WeekCount]:
    """Sightings of the Error nodes named, per week and project, oldest week first."""
    rows = [m.row() for m in members]
    if not rows:
        return []
    found = await store.run("trend_weeks", members=rows, since=since, until=until)
    return [WeekCount(r["project"], r["week"].to_native(), r["sightings"]) for r in found]


async def new_errors(
    store: GraphStore,
    projects: list[str],
    since: datetime | None,
    until: datetime | None,
    top: int,
) -> list[ErrorRow]:
    """Errors first sighted in the window, newest first (at most ``top``)."""
    _check_top(top)
    found = await store.run(
        "trend_new_errors", projects=sorted(projects), since=since, until=until, top=top
    )
    return [ErrorRow.of(r) for r in found]


async def recurring_errors(
    store: GraphStore,
    projects: list[str],
    since: datetime | None,
    until: datetime | None,
    top: int,
) -> list[ErrorRow]:
    """Errors sighted in more than one task in the window, most sightings first."""
    _check_top(top)
    page = await error_page(store, projects, ErrorOrder.COUNT, since=since, until=until, first=200)
    return [r for r in page.rows if r.tasks > 1][:top]


def _check_top(top: int) -> None:
    if not 1 <= top <= MAX_TOP:
        raise ValueError(f"top: between 1 and {MAX_TOP}, got {top}")
