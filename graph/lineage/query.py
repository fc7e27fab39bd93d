"""An error's lineage: six reads side by side, whatever the number of sightings."""

from __future__ import annotations

import asyncio
from collections import defaultdict
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from metisgraph.graph.lineage.environments import EnvironmentDiff, environment_diff
from metisgraph.graph.lineage.members import ErrorKey
from metisgraph.graph.lineage.model import (
    Attempt,
    EnvironmentView,
    ErrorSummary,
    Fix,
    Lineage,
    ProjectCount,
    Recurrence,
    RelatedError,
    Sighting,
    SnippetView,
    StepView,
    TaskView,
)
from metisgraph.graph.refs import decode_cursor, encode_cursor
from metisgraph.graph.rows import iso_time
from metisgraph.graph.store import GraphStore

__all__ = ["MAX_PAGE", "LineageRequest", "lineage"]

MAX_PAGE = 500  # sightings a page may hold, whatever the caller asks
_SIDE_LIMIT = 200  # attempts, fixes, recurrences and related errors returned at most
_ORDER = "lineage"


@dataclass(frozen=True)
class LineageRequest:
    members: list[ErrorKey]
    since: datetime | None = None
    until: datetime | None = None
    limit: int = 100
    after: str | None = None  # a cursor given out by an earlier page

    def __post_init__(self) -> None:
        if not 1 <= self.limit <= MAX_PAGE:
            raise ValueError(f"limit: between 1 and {MAX_PAGE}, got {self.limit}")
        if self.since and self.until and self.since >= self.until:
            raise ValueError("since: must be before until")


def _after(token: str | None) -> dict[str, Any] | None:
    if token is None:
        return None
    at, project, ident = decode_cursor(token, _ORDER, 3).values
    return {"at": str(at), "project": str(project), "id": str(ident)}


async def lineage(store: GraphStore, request: LineageRequest) -> Lineage:
    """The lineage of the error whose members (Error nodes, one per project) are given."""
    members = [m.row() for m in request.members]
    window = {"members": members, "since": request.since, "until": request.until}
    after = _after(request.after)
    keys = sorted({m.key for m in request.members})
    summary, sightings, attempts, fixes, regressions, related = await asyncio.gather(
        _rows(store, "lineage_summary", **window),
        _rows(store, "lineage_sightings", **window, after=after, limit=request.limit + 1),
        _rows(store, "lineage_attempts", **window, limit=_SIDE_LIMIT),
        _rows(store, "lineage_fixes", members=members, limit=_SIDE_LIMIT),
        store.run("lineage_regressions", **window, limit=_SIDE_LIMIT),
        _rows(store, "lineage_related", **window, keys=keys, limit=_SIDE_LIMIT),
    )
    # No fix: the query has no row. Otherwise one: the total, a page and its environments.
    found: dict[str, Any] = regressions[0] if regressions else {}
    recurrences: list[dict[str, Any]] = found.get("rows", [])
    page = sightings[: request.limit]
    next_after = None
    if len(sightings) > request.limit:
        last = page[-1]["episode"]
        next_after = encode_cursor(
            _ORDER, (iso_time(last["created_at"]), last["project"], last["id"])
        )
    errors = [ErrorSummary.of(r) for r in summary]
    fix_list = [_fix(r) for r in fixes]
    recurrence_list = _recurrences(recurrences, found.get("environments", []))
    result = Lineage(
        errors=errors,
        sightings=[_sighting(r) for r in page],
        next_after=next_after,
        attempts=[_attempt(r) for r in attempts],
        fixes=fix_list,
        recurrences=recurrence_list,
        recurrence_count=found.get("total", 0),
        related=[_related(r) for r in related],
        projects=_per_project(errors, fix_list, recurrence_list),
    )
    for name, rows in (("attempts", attempts), ("fixes", fixes), ("related", related)):
        if len(rows) >= _SIDE_LIMIT:
            result.warnings.append(f"{name}: the first {_SIDE_LIMIT} only")
    if result.recurrence_count > len(recurrence_list):
        result.warnings.append(
            f"recurrences: the first {len(recurrence_list)} of {result.recurrence_count}"
        )
    return result


async def _rows(store: GraphStore, name: str, **params: Any) -> list[dict[str, Any]]:
    """The rows of a lineage query, which returns them as one record's list."""
    found = await store.run(name, **params)
    return list(found[0]["rows"]) if found else []


def _sighting(row: dict[str, Any]) -> Sighting:
    step = StepView.of(row["episode"])
    return Sighting(
        episode=step,
        task=TaskView.of(step.project, row.get("task")),
        environment=EnvironmentView.of(step.project, row.get("environment")),
        tools=list(row.get("tools") or []),
    )


def _attempt(row: dict[str, Any]) -> Attempt:
    step = StepView.of(row["episode"])
    return Attempt(
        episode=step,
        environment=EnvironmentView.of(step.project, row.get("environment")),
        errors=list(row.get("errors") or []),
        tools=list(row.get("tools") or []),
        why=list(row.get("why") or []),
    )


def _fix(row: dict[str, Any]) -> Fix:
    step = StepView.of(row["episode"])
    snippets = [
        SnippetView(
            s["project"],
            s["id"],
            s.get("name"),
            s.get("kind"),
            s.get("language"),
            s.get("description"),
        )
        for s in row.get("snippets") or []
    ]
    return Fix(
        episode=step,
        task=TaskView.of(step.project, row.get("task")),
        environment=EnvironmentView.of(step.project, row.get("environment")),
        snippets=snippets,
        via=sorted(row.get("vias") or []),
        kind=row.get("kind") or "fixed",
        why=list(row.get("why") or []),
        confidence=row.get("confidence"),
    )


def _recurrences(
    rows: list[dict[str, Any]], environments: list[dict[str, Any]]
) -> list[Recurrence]:
    """The page's recurrences; each row names its two environments, sent once each."""
    by_key = {(v["project"], v["key"]): v for v in environments}
    diffs: dict[tuple[Any, ...], EnvironmentDiff] = {}
    out = []
    for row in rows:
        step, fix = StepView.of(row["episode"]), StepView.of(row["fix"])
        failing = by_key.get((step.project, row.get("environment")))
        fixed = by_key.get((fix.project, row.get("fix_environment")))
        pair = (fix.project, row.get("fix_environment"), step.project, row.get("environment"))
        if pair not in diffs:
            diffs[pair] = environment_diff(fixed, failing)
        out.append(
            Recurrence(
                episode=step,
                fix=fix,
                environment=EnvironmentView.of(step.project, failing),
                fix_environment=EnvironmentView.of(fix.project, fixed),
                diff=diffs[pair],
            )
        )
    return out


def _related(row: dict[str, Any]) -> RelatedError:
    return RelatedError(
        project=row["project"],
        key=row["key"],
        kind=row.get("kind"),
        signature=row.get("signature"),
        template=row.get("template"),
        tasks=row["tasks"],
        preceded=row["preceded"],
        followed=row["followed"],
        together=row["together"],
    )


def _per_project(
    errors: list[ErrorSummary], fixes: list[Fix], recurrences: list[Recurrence]
) -> list[ProjectCount]:
    by_project: dict[str, list[ErrorSummary]] = defaultdict(list)
    for e in errors:
        by_project[e.project].append(e)
    fixed: dict[str, int] = defaultdict(int)
    for f in fixes:
        fixed[f.episode.project] += f.kind == "fixed"  # a workaround removed no cause
    recurred: dict[str, int] = defaultdict(int)
    for r in recurrences:
        recurred[r.episode.project] += 1
    return [
        ProjectCount(
            project=project,
            sightings=sum(e.sightings for e in members),
            tasks=sum(e.tasks for e in members),
            fixes=fixed[project],
            recurrences=recurred[project],
            first_seen=min((e.first_seen for e in members if e.first_seen), default=None),
            last_seen=max((e.last_seen for e in members if e.last_seen), default=None),
        )
        for project, members in sorted(by_project.items())
    ]
