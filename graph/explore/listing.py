"""Browsing lists: the projects a caller may read, and errors ranked, paged by keyset."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from metisgraph.graph.explore.order import ErrorOrder
from metisgraph.graph.lineage.model import ErrorCounts
from metisgraph.graph.refs import decode_cursor, encode_cursor
from metisgraph.graph.rows import native_time
from metisgraph.graph.store import GraphStore

__all__ = [
    "MAX_ERRORS_PAGE",
    "ErrorPage",
    "ErrorRow",
    "ProjectRow",
    "error_page",
    "page_query",
    "projects",
    "warm_error_pages",
]

MAX_ERRORS_PAGE = 200
MAX_RANK = 2**53  # past any count and any sighting's millisecond (year 287,396)


@dataclass(frozen=True)
class ProjectRow:
    name: str
    created_at: datetime | None
    tasks: int
    episodes: int
    errors: int


async def projects(store: GraphStore, readable: list[str] | None) -> list[ProjectRow]:
    """The projects among ``readable`` (None: all) that hold memory, with counts."""
    rows = await store.run("explore_projects", readable=readable)
    return [
        ProjectRow(r["name"], native_time(r["created_at"]), r["tasks"], r["episodes"], r["errors"])
        for r in rows
    ]


@dataclass(frozen=True)
class ErrorRow(ErrorCounts):
    """An error of one project with its sightings in the window and its fixes."""

    fixes: int
    fixed_at: datetime | None
    open: bool  # never fixed, or sighted after its last fix

    @classmethod
    def of(cls, row: dict[str, Any]) -> ErrorRow:
        return cls(
            **cls.counted(row, row.get("first"), row.get("last")),
            fixes=row["fixes"],
            fixed_at=native_time(row.get("fixed_at")),
            open=bool(row["open"]),
        )


@dataclass(frozen=True)
class ErrorPage:
    rows: list[ErrorRow]
    total: int  # errors that match, over every page
    end_cursor: str | None  # the cursor of the last row shown
    has_next: bool


def page_query(
    projects: list[str],
    order: ErrorOrder,
    *,
    since: datetime | None,
    until: datetime | None,
    first: int,
    after: str | None,
) -> tuple[str, dict[str, Any]]:
    """The named query and parameters of one page (``error_page`` runs it; a benchmark may
    PROFILE it). Without a window the page is read from the counts kept on the Error nodes
    in the order of their indexes and costs its rows, not the projects' errors
    (cypher/explore.cypher explore_errors_by_count, _by_recent); a window counts every
    error's sightings in it (explore_errors)."""
    if not 1 <= first <= MAX_ERRORS_PAGE:
        raise ValueError(f"first: between 1 and {MAX_ERRORS_PAGE}, got {first}")
    keyset = None
    if after is not None:
        rank, project, key = decode_cursor(after, order.value, 3).values
        # a rank the list gives out: sightings, a sighting's epoch millisecond, or -1
        if not isinstance(rank, int) or not -1 <= rank <= MAX_RANK:
            raise ValueError("after: not a cursor of this list")
        keyset = {"rank": rank, "project": str(project), "key": str(key)}
    params: dict[str, Any] = {"projects": sorted(set(projects)), "first": first, "after": keyset}
    if since is not None or until is not None:
        return "explore_errors", {**params, "order": order.value, "since": since, "until": until}
    if order is ErrorOrder.RECENT:
        return "explore_errors_by_recent", params
    return "explore_errors_by_count", {**params, "open_only": order is ErrorOrder.UNRESOLVED}


async def error_page(
    store: GraphStore,
    projects: list[str],
    order: ErrorOrder = ErrorOrder.COUNT,
    *,
    since: datetime | None = None,
    until: datetime | None = None,
    first: int = 50,
    after: str | None = None,
) -> ErrorPage:
    """One page of the errors of ``projects``, ranked by ``order``; ``after``: a cursor."""
    name, params = page_query(projects, order, since=since, until=until, first=first, after=after)
    found = await store.run(name, **params)
    total, page = found[0]["total"], found[0]["page"]
    shown = page[:first]
    cursor = None
    if shown:
        last = shown[-1]
        cursor = encode_cursor(order.value, (last["rank"], last["project"], last["key"]))
    return ErrorPage([ErrorRow.of(r) for r in shown], total, cursor, len(page) > first)


async def warm_error_pages(store: GraphStore, project: str) -> int:
    """A first page and the page after it in each unwindowed order's statement (COUNT's
    serves UNRESOLVED too), asked at start-up: a next page sends its cursor as a map where
    a first page sends null, and Neo4j plans a statement again for each type its parameters
    take (300–400 ms on a fresh 100k server's first next page, docs/benchmarks.md). A
    project without errors is asked from the lowest rank. Returns the pages asked."""
    asked = 0
    for order in (ErrorOrder.COUNT, ErrorOrder.RECENT):
        page = await error_page(store, [project], order, first=1)
        cursor = page.end_cursor or encode_cursor(order.value, (0, project, ""))
        await error_page(store, [project], order, first=1, after=cursor)
        asked += 2
    return asked
