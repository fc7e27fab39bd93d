"""`metisgraph maintain`: consolidate memory — duplicates, patterns, dead snippets."""

from __future__ import annotations

import asyncio
import json
import sys
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

__all__ = ["maintain"]


def maintain(
    project: Annotated[
        list[str] | None,
        typer.Option("--project", "-p", help="A project to maintain (repeatable); default: all."),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="One JSON object a project.")] = False,
) -> None:
    """Merge duplicate episodes, group lessons into patterns, retire dead snippets.

    Incremental: only episodes new or changed since the last run are compared; a second run
    changes nothing. Thresholds: METISGRAPH_MAINTAIN_* (see the README).
    """
    from metisgraph.api.graphql.maintain_service import maintain as run_maintain
    from metisgraph.api.services import open_services

    async def run() -> list[dict[str, object]]:
        async with open_services() as services:
            reports = await run_maintain(services, project or None)
            return [r.as_dict() for r in reports]

    reports = asyncio.run(run())
    if as_json:
        for report in reports:
            sys.stdout.write(json.dumps(report) + "\n")
        return
    table = Table(title="maintain")
    columns = ("project", "episodes", "dirty", "compared", "duplicates", "patterns")
    for name in (*columns, "dissolved", "retired", "seconds"):
        table.add_column(name, justify="left" if name == "project" else "right")
    for report in reports:
        seconds = report["seconds"]
        total = seconds.get("total", 0.0) if isinstance(seconds, dict) else 0.0
        table.add_row(*(str(report[c]) for c in (*columns, "dissolved", "retired")), f"{total:.2f}")
    if not reports:
        Console(stderr=True).print("nothing to maintain")
    Console().print(table)
