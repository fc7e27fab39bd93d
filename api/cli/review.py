"""`metisgraph review …`: work the review queue from the command line."""

from __future__ import annotations

import asyncio
import getpass
import json
import sys
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.console import Console
from rich.table import Table

if TYPE_CHECKING:  # each command imports what it uses: `metisgraph --help` stays light
    from metisgraph.api.services import Services

app = typer.Typer(help="Review: pending memories, and approve / reject / hold / correct.")
err = Console(stderr=True, soft_wrap=True)

Project = Annotated[str, typer.Option("--project", "-p", help="The project.")]
MemoryId = Annotated[str, typer.Argument(metavar="ID", help="An episode or snippet id.")]
Note = Annotated[str | None, typer.Option(help="Why: kept with the decision.")]
Reviewer = Annotated[
    str | None, typer.Option(help="Who decides (default: the user running the command).")
]
JsonOption = Annotated[bool, typer.Option("--json", help="Print JSON.")]


def _run(work: Callable[[Services], Awaitable[Any]]) -> Any:
    from metisgraph.api.graphql.context import UserError
    from metisgraph.api.services import open_services

    async def run() -> Any:
        async with open_services() as services:
            return await work(services)

    try:
        return asyncio.run(run())
    except UserError as error:
        err.print(f"[red]{error}", highlight=False)
        raise typer.Exit(2) from None


@app.command("list")
def list_pending(
    project: Project,
    kind: Annotated[str | None, typer.Option(help="episode or snippet")] = None,
    first: Annotated[int, typer.Option(help="How many.")] = 20,
    after: Annotated[str | None, typer.Option(help="The cursor a previous page gave.")] = None,
    as_json: JsonOption = False,
) -> None:
    """Pending memories, oldest id first; the next page's cursor at the end."""
    from metisgraph.api.graphql.review_service import review_queue

    page = _run(lambda s: review_queue(s, project, kind, first, after))
    if as_json:
        data = {"items": page.items, "total": page.total, "end_cursor": page.end_cursor,
                "has_next": page.has_next}  # fmt: skip
        sys.stdout.write(json.dumps(data, default=str) + "\n")
        return
    table = Table(title=f"pending review — {project} ({page.total})")
    for column in ("kind", "id", "title", "reason"):
        table.add_column(column)
    for item in page.items:
        table.add_row(item["kind"], item["id"], (item.get("title") or "")[:80], item.get("reason"))
    Console().print(table)
    if page.has_next:
        err.print(f"next page: --after {page.end_cursor}", highlight=False)


async def _audit(services: Services, action: str, project: str, target: str) -> None:
    """Kept in the audit trail as the operator running the command (cli:<user>)."""
    from metisgraph.api.audit import audit

    await audit(services.store, f"cli:{getpass.getuser()}", action, project, target=target)


def _decide(action: str) -> Callable[..., None]:
    def command(project: Project, memory_id: MemoryId, note: Note = None,
                reviewer: Reviewer = None) -> None:  # fmt: skip
        from metisgraph.api.graphql.review_service import decide

        who = reviewer or getpass.getuser()

        async def work(services: Services) -> Any:
            row = await decide(services, project, memory_id, action, note, who)
            await _audit(services, action, project, row.id)
            return row

        row = _run(work)
        Console().print(f"{row.kind} {row.id}: {row.status}", highlight=False)

    command.__doc__ = f"{action.capitalize()} an episode or a snippet."
    return command


for _action in ("approve", "reject", "hold"):
    app.command(_action)(_decide(_action))


@app.command()
def correct(
    project: Project,
    memory_id: MemoryId,
    set_: Annotated[
        list[str],
        typer.Option("--set", help="FIELD=VALUE to change (summary, outcome, command, code …)"),
    ],
    note: Note = None,
    reviewer: Reviewer = None,
) -> None:
    """Correct a memory: a new version, VERSION_OF the old; the old leaves recall."""
    from metisgraph.api.graphql.review_service import Correction
    from metisgraph.api.graphql.review_service import correct as run_correct

    values: dict[str, Any] = {}
    for item in set_:
        name, sep, value = item.partition("=")
        if not sep:
            raise typer.BadParameter(f"expected FIELD=VALUE, got {item!r}", param_hint="--set")
        values[name.strip()] = value
    who = reviewer or getpass.getuser()

    async def work(services: Services) -> Any:
        done = await run_correct(services, project, memory_id, Correction(values), note, who)
        await _audit(services, "correct", project, done["previous"])
        return done

    done = _run(work)
    Console().print(f"{done['kind']} {done['id']} corrects {done['previous']}", highlight=False)
