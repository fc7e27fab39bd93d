"""`metisgraph lineage` and `metisgraph analytics`: the graph for a person at a terminal."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import sys
from collections.abc import Coroutine
from datetime import datetime
from typing import TYPE_CHECKING, Annotated, Any, TypeVar

import typer
from rich.console import Console
from rich.table import Table

from metisgraph.api.auth import ANONYMOUS
from metisgraph.graph.analytics import DEFAULT_CAP
from metisgraph.graph.explore import ErrorOrder

if TYPE_CHECKING:  # each command imports what it uses: `metisgraph --help` stays light
    from metisgraph.api.graphql.error_refs import ErrorName
    from metisgraph.graph.analytics import Analytics
    from metisgraph.graph.explore import ErrorPage
    from metisgraph.graph.lineage import EnvironmentDiff, Lineage, Sighting, StepView

__all__ = ["analytics_command", "errors_command", "lineage_command"]

T = TypeVar("T")
out = Console()
err = Console(stderr=True, soft_wrap=True)

Projects = Annotated[list[str], typer.Option("--project", help="A project to read; repeatable")]
Since = Annotated[datetime | None, typer.Option(help="Only what happened from then on")]
Until = Annotated[datetime | None, typer.Option(help="Only what happened before then")]
AsJson = Annotated[bool, typer.Option("--json", help="Print JSON")]


def _name(error: str, signature: bool) -> ErrorName:
    """A global id, a key (16 hex), a signature (--signature) or else a raw error text."""
    from metisgraph.api.graphql.error_refs import ErrorName
    from metisgraph.graph import InvalidId, decode_id

    if signature:
        return ErrorName(signature=error)
    try:
        decode_id(error)
        return ErrorName(id=error)
    except InvalidId:
        pass
    stripped = error.strip()
    if len(stripped) == 16 and all(c in "0123456789abcdef" for c in stripped):
        return ErrorName(key=stripped)
    return ErrorName(text=error)


def _answer(work: Coroutine[Any, Any, T]) -> T:
    """Run a command's work; a question it cannot answer exits 2 with the reason."""
    from metisgraph.api.graphql.context import UserError

    try:
        return asyncio.run(work)
    except (UserError, ValueError) as exc:
        err.print(f"[red]{exc}")
        raise typer.Exit(2) from None


def _json(value: Any) -> None:
    sys.stdout.write(json.dumps(dataclasses.asdict(value), default=str, indent=2) + "\n")


def lineage_command(
    error: Annotated[str, typer.Argument(help="Error text, a global id or a 16-hex key")],
    project: Projects,
    since: Since = None,
    until: Until = None,
    limit: Annotated[int, typer.Option(help="Sightings to show (at most 500)")] = 100,
    signature: Annotated[
        bool, typer.Option("--signature", help="ERROR is a stored signature text")
    ] = False,
    as_json: AsJson = False,
) -> None:
    """An error's lineage across projects: sightings, what failed, fixes, regressions."""
    from metisgraph.api.graphql.error_refs import resolve_error
    from metisgraph.api.graphql.tenancy import readable_projects, utc
    from metisgraph.api.services import open_graph
    from metisgraph.graph.lineage import LineageRequest, lineage

    async def run() -> Lineage:
        async with open_graph() as store:
            scope = readable_projects(ANONYMOUS, project, "--project")
            members = await resolve_error(store, ANONYMOUS, scope, _name(error, signature))
            request = LineageRequest(members, utc(since), utc(until), limit)
            return await lineage(store, request)

    found = _answer(run())
    if as_json:
        _json(found)
        return
    _print_lineage(found)


def _when(moment: datetime | StepView | None) -> str:
    """A moment; a step's, marked ~ when the run carried no time of its own for it."""
    if moment is None or isinstance(moment, datetime):
        return moment.strftime("%Y-%m-%d %H:%M") if moment else "-"
    return ("~" if moment.time_estimated else "") + _when(moment.created_at)


def _print_lineage(found: Lineage) -> None:
    from metisgraph.graph.lineage import MAX_PAGE

    if not found.errors:
        out.print(
            "no such error in these projects (a trace's signature holds its own code frames: "
            "give the whole trace, or the key or id that `metisgraph errors list` shows)"
        )
        return
    head, first, last = found.errors[0], found.first, found.last
    out.print(f"[bold]{head.kind}[/]  {head.template or head.signature or ''}", highlight=False)
    out.print(
        f"{found.sighting_count} sightings; first {_when(first.first_seen if first else None)}, "
        f"last {_when(last.last_seen if last else None)}"
    )
    _table(
        "per project",
        ("project", "sightings", "tasks", "fixes", "recurrences", "first", "last"),
        [
            (p.project, p.sightings, p.tasks, p.fixes, p.recurrences, _when(p.first_seen),
             _when(p.last_seen))
            for p in found.projects
        ],
    )  # fmt: skip
    _table(
        "sightings, oldest first",
        ("when", "project", "task", "step", "outcome", "environment", "tools"),
        [_sighting_row(s) for s in found.sightings],
    )
    if found.next_after:
        out.print(f"more sightings than shown: raise --limit (at most {MAX_PAGE})")
    for line in _story_lines(found):
        out.print(line, highlight=False)
    for warning in found.warnings:
        err.print(f"[yellow]{warning}")


def _sighting_row(s: Sighting) -> tuple[str, ...]:
    env = s.environment
    where = " ".join(x for x in (env.os, env.runtime, env.runtime_version) if x) if env else "-"
    task = (s.task.goal or s.task.id)[:60] if s.task else "-"
    step = s.episode
    return (_when(step), step.project, task, str(step.step), step.outcome or "-",
            where, ", ".join(s.tools))  # fmt: skip


def _story_lines(found: Lineage) -> list[str]:
    """What was tried and failed, the fixes, the recurrences and the related errors."""
    lines = []
    for a in found.attempts:
        e = a.episode
        lines.append(
            f"[yellow]attempted[/] {_when(e)} {e.project} step {e.step} "
            f"({'; '.join(a.why)}): {(e.summary or '')[:80]}"
        )
    for f in found.fixes:
        code = f" by {', '.join(s.name or s.id for s in f.snippets)}" if f.snippets else ""
        e = f.episode
        colour = "green" if f.kind == "fixed" else "cyan"
        lines.append(
            f"[{colour}]{f.kind}[/] {_when(e)} {e.project} step {e.step}{code} "
            f"({'; '.join(f.why)}; confidence {f.confidence or 0:.2f}): "
            f"{(e.action_command or e.summary or '')[:80]}"
        )
    for r in found.recurrences:
        lines.append(
            f"[red]recurred[/] {_when(r.episode)} {r.episode.project} after the fix "
            f"of {_when(r.fix)} in {r.fix.project}: {_difference(r.diff)}"
        )
    if found.recurrence_count > len(found.recurrences):
        lines.append(f"… {found.recurrence_count} recurrences in all")
    for rel in found.related[:10]:
        lines.append(
            f"related {rel.kind}: {rel.tasks} task(s); came before it in {rel.preceded}, "
            f"after it in {rel.followed}"
        )
    return lines


def _difference(diff: EnvironmentDiff) -> str:
    if not diff.known:
        return "environment unknown"
    if diff.same_environment:
        return "same environment"
    changes = [f"{p.name} {p.before or '-'} → {p.after or '-'}" for p in diff.packages]
    changes += [f"{name} {a} → {b}" for name, (a, b) in diff.fields.items()]
    return ", ".join(changes) or "no package differs"


def analytics_command(
    project: Projects,
    since: Since = None,
    until: Until = None,
    cap: Annotated[int, typer.Option(help="Most recent episodes measured")] = DEFAULT_CAP,
    as_json: AsJson = False,
) -> None:
    """Clusters of errors, root-cause candidates, hubs, fix paths, over-represented packages."""
    from metisgraph.api.graphql.tenancy import readable_projects, utc
    from metisgraph.api.services import open_graph
    from metisgraph.graph.analytics import analytics

    async def run() -> Analytics:
        async with open_graph() as store:
            scope = readable_projects(ANONYMOUS, project, "--project")
            return await analytics(store, scope, utc(since), utc(until), cap)

    result = _answer(run())
    if as_json:
        _json(result)
        return
    _print_analytics(result)


def _table(title: str, columns: tuple[str, ...], rows: list[tuple[Any, ...]]) -> None:
    table = Table(title=title)
    for column in columns:
        table.add_column(column, overflow="fold")
    for row in rows:
        table.add_row(*(str(v) for v in row))
    out.print(table)


def _print_analytics(a: Analytics) -> None:
    out.print(f"{a.episodes} episodes of {', '.join(a.projects)} (cap {a.cap:,})")
    _table(
        "clusters of related errors",
        ("errors", "tasks", "projects", "cohesion"),
        [
            (
                "; ".join(f"{e.kind} ×{e.sightings}" for e in c.errors[:5]),
                c.tasks,
                ", ".join(c.projects),
                c.cohesion,
            )
            for c in a.clusters[:10]
        ],
    )
    _table(
        "root-cause candidates",
        ("error", "leads", "share", "precedes", "followed by"),
        [
            (
                f"{r.error.kind}: {(r.error.template or '')[:60]}",
                r.leads,
                r.share,
                r.precedes,
                ", ".join(r.followers),
            )
            for r in a.root_causes[:10]
        ],
    )
    _table(
        "hubs",
        ("kind", "name", "betweenness", "errors", "failures", "fixes"),
        [(h.kind, h.name, h.betweenness, h.errors, h.failures, h.fixes) for h in a.hubs[:15]],
    )
    _table(
        "error → fix paths",
        ("error", "fix", "steps", "path"),
        [
            (p.error.kind, p.snippet, p.steps, " → ".join(s.label for s in p.path))
            for p in a.fix_paths[:10]
        ],
    )
    _table(
        "over-represented among failing runs",
        ("package", "version", "failing", "all", "lift"),
        [(x.name, x.version or "any", x.failing, x.total, x.lift) for x in a.over_represented[:15]],
    )
    for warning in a.warnings:
        err.print(f"[yellow]{warning}")


def errors_command(
    project: Projects,
    order: Annotated[
        ErrorOrder, typer.Option("--order", help="COUNT, RECENT or UNRESOLVED")
    ] = ErrorOrder.COUNT,
    since: Since = None,
    until: Until = None,
    first: Annotated[int, typer.Option(help="How many (at most 200)")] = 20,
    as_json: AsJson = False,
) -> None:
    """The errors of projects, most sighted (or most recent, or open) first, with their keys."""
    from metisgraph.api.graphql.tenancy import readable_projects, utc
    from metisgraph.api.services import open_graph
    from metisgraph.graph import NodeRef
    from metisgraph.graph.explore import error_page

    async def run() -> ErrorPage:
        async with open_graph() as store:
            scope = readable_projects(ANONYMOUS, project, "--project")
            return await error_page(
                store, scope, order, since=utc(since), until=utc(until), first=first
            )

    page = _answer(run())
    if as_json:
        rows = [{**dataclasses.asdict(r), "id": NodeRef("Error", r.project, r.key).id}
                for r in page.rows]  # fmt: skip
        sys.stdout.write(json.dumps({"total": page.total, "errors": rows}, default=str) + "\n")
        return
    _table(
        f"{page.total} errors, {order.value.lower()} first",
        ("key", "project", "kind", "template", "sightings", "tasks", "last", "fixes", "open"),
        [
            (r.key, r.project, r.kind, (r.template or "")[:70], r.sightings, r.tasks,
             _when(r.last_seen), r.fixes, "yes" if r.open else "no")
            for r in page.rows
        ],
    )  # fmt: skip
