"""`metisgraph schema …`: apply, repair, migrate and re-embed the store; print the formats."""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.console import Console

if TYPE_CHECKING:  # each command imports what it uses: `metisgraph --help` stays light
    from metisgraph.graph import IndexHealth

__all__ = ["app"]

app = typer.Typer(help="The graph schema and the input format.", no_args_is_help=True)

out = Console()
err = Console(stderr=True, soft_wrap=True)


@app.command("apply")
def schema_apply() -> None:
    """Create missing constraints and indexes and wait until they are online."""
    from metisgraph.api.services import open_services

    async def run() -> None:
        async with open_services() as services:
            report = services.schema
            assert report is not None
            out.print(
                f"{report.statements} statements applied; {len(report.indexes)} indexes "
                f"online; vector filters in index: {report.vector_filters}"
            )

    asyncio.run(run())


@app.command("repair")
def schema_repair(
    index: Annotated[
        str | None,
        typer.Option("--index", help="Rebuild this vector index (default: those that fail)"),
    ] = None,
) -> None:
    """Probe the vector indexes; rebuild the failing ones (or --index) online, with progress.

    Exit 1 when a rebuilt index still fails, 2 when --index names none of ours.
    """
    from metisgraph.api.services import open_services
    from metisgraph.graph import RepairFailed, repair_vector_index

    async def run() -> bool:
        async with open_services() as services:
            ours = services.vector_indexes()
            if index is not None and index not in ours:
                err.print(f"[red]--index {index}: not a vector index of ours ({', '.join(ours)})")
                raise typer.Exit(2)
            before = await services.vector_health()
            _print_health(before)
            targets = [index] if index else [n for n, h in before.items() if not h.healthy]
            for name in targets:
                try:
                    await repair_vector_index(
                        services.store,
                        name,
                        services.embedder.dimension,
                        vector_filters=services.vector_filters,
                        on_progress=_population_report(name),
                    )
                except RepairFailed as exc:
                    err.print(f"[red]{exc}")
                    return False
            if not targets:
                out.print("every vector index answers; nothing to rebuild")
                return True
            after = await services.vector_health()
            _print_health(after)
            return all(after[name].healthy for name in targets)

    if not asyncio.run(run()):
        raise typer.Exit(1)


def _print_health(health: dict[str, IndexHealth]) -> None:
    for name, h in health.items():
        state = "[green]answers[/]" if h.healthy else f"[red]fails[/] {h.error}"
        out.print(f"{name:28} {state}", highlight=False)


def _population_report(name: str) -> Callable[[float], None]:
    """A line each time the population percent moves: readable in a terminal and a log."""
    shown: list[float] = []

    def report(percent: float) -> None:
        if not shown or percent != shown[-1]:
            err.print(f"rebuild {name}: {percent:.0f}% populated", highlight=False)
            shown.append(percent)

    return report


@app.command("migrate")
def schema_migrate() -> None:
    """Apply the schema and run the migrations the store has not had yet (each runs once)."""
    from metisgraph.api.services import open_services

    async def run() -> None:
        async with open_services() as services:
            report = services.schema
            assert report is not None and report.migrations is not None
            done = report.migrations
            for version, name, changes in done.applied:
                counts = ", ".join(f"{k} {v}" for k, v in changes.items()) or "no changes"
                out.print(f"migration {version} ({name}): {counts}")
            verb = "migrated" if done.applied else "already at"
            out.print(f"schema version {done.after} ({verb}; was {done.before})")

    asyncio.run(run())


@app.command("reembed")
def schema_reembed() -> None:
    """Embed every stored vector again when the configured model is not the store's.

    Resumable: stopped part way, run it again and it goes on where it stopped. Stop the
    services that use this store first: a process started with the old model would write
    vectors of its own (processes check the model when they start).
    """
    from metisgraph.api.services import prepare_services
    from metisgraph.api.settings import load_settings
    from metisgraph.graph import read_stamp

    settings = load_settings()
    settings.embedding.on_change = "reembed"
    shown: dict[str, int] = {}

    def progress(kind: str, done: int, total: int) -> None:
        percent = 100 * done // total if total else 100
        if shown.get(kind) != percent:
            err.print(f"re-embed {kind}: {done} of {total} ({percent}%)", highlight=False)
            shown[kind] = percent

    async def run() -> None:
        services = prepare_services(settings)
        services.reembed_progress = progress
        settings.api.stop_embedded_on_exit = False
        try:
            await services.warm_up(reads=False)
            stamp = await read_stamp(services.store)
        finally:
            await services.close()
        assert stamp.current is not None
        verb = "re-embedded with" if shown else "already embedded with"
        out.print(f"the store's vectors: {verb} {stamp.current.describe()}")

    asyncio.run(run())


@app.command("export")
def schema_export() -> None:
    """Print the JSON Schema of the input format (tasks, episodes, snippets)."""
    from metisgraph.ingest import input_schema

    sys.stdout.write(json.dumps(input_schema(), indent=2) + "\n")


@app.command("graphql")
def schema_graphql(
    write: Annotated[
        Path | None,
        typer.Option(
            "--write",
            help="Write the SDL to this file (e.g. schema.graphql) instead of printing it; "
            "a breaking change must be listed in schema.breaking beside it",
        ),
    ] = None,
) -> None:
    """Print the GraphQL schema (SDL) portals build against, or --write it to a file."""
    from metisgraph.api.graphql.sdl import BREAKING_FILE, current_sdl, update_schema_file

    if write is None:
        sys.stdout.write(current_sdl())
        return
    update = update_schema_file(write)
    if update.refused:
        err.print(f"[red]{write}: breaking changes not marked deliberate in {BREAKING_FILE}:")
        for change in update.refused:
            err.print(f"  {change}", highlight=False, markup=False)
        err.print(f"Add each line above to {write.with_name(BREAKING_FILE)} to accept it.")
        raise typer.Exit(1)
    verb = "written" if update.changed else "unchanged"
    out.print(f"{write}: {verb} ({len(update.breaking)} accepted breaking changes)")
