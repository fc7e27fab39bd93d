"""`metisgraph export` and `metisgraph import`: a project's graph out as a file, and back."""

from __future__ import annotations

import asyncio
import re
import sys
from datetime import datetime
from pathlib import Path
from typing import IO, TYPE_CHECKING, Annotated

import typer
from rich.console import Console

if TYPE_CHECKING:  # imported by the commands that use them: `metisgraph --help` stays light
    from metisgraph.graph.exports import ImportSummary

__all__ = ["export_command", "import_command"]

EXIT_REFUSED = 3
err = Console(stderr=True, soft_wrap=True)
_FILE = re.compile(r"[^A-Za-z0-9._-]+")


def export_command(
    project: Annotated[str, typer.Option(help="The project to export")],
    format: Annotated[str, typer.Option("--format", help="json | graphml | csv")] = "json",
    since: Annotated[
        datetime | None, typer.Option(help="Only episodes since then and what they touch")
    ] = None,
    output: Annotated[
        Path | None,
        typer.Option(help="File to write (csv without --table: a folder for both tables)"),
    ] = None,
    table: Annotated[str | None, typer.Option(help="csv: nodes or edges")] = None,
    vectors: Annotated[
        bool, typer.Option(help="json: carry the vectors (an import then needs no model run)")
    ] = True,
) -> None:
    """Export a project's graph: node-link JSON or GraphML (networkx reads both), CSV tables.

    Streams to standard output, or to --output.
    """
    from metisgraph.api.graphql.tenancy import utc
    from metisgraph.graph.exports import CSV_TABLES, FORMATS

    if format not in FORMATS:
        err.print(f"[red]--format: one of {', '.join(FORMATS)}")
        raise typer.Exit(2)
    if format == "csv" and table is None and (output is None or not output.is_dir()):
        err.print("[red]csv: give --table nodes|edges, or --output DIR for both tables")
        raise typer.Exit(2)
    if table is not None and table not in CSV_TABLES:
        err.print("[red]--table: nodes or edges")
        raise typer.Exit(2)
    targets: list[tuple[str | None, Path | None]]
    if format == "csv" and table is None:
        assert output is not None
        stem = _FILE.sub("_", project).strip("_") or "export"
        targets = [(t, output / f"{stem}-{t}.csv") for t in CSV_TABLES]
    else:
        targets = [(table, output)]
    asyncio.run(_export(project, format, utc(since), targets, vectors))


async def _export(
    project: str,
    fmt: str,
    since: datetime | None,
    targets: list[tuple[str | None, Path | None]],
    vectors: bool,
) -> None:
    from metisgraph.api.services import open_graph
    from metisgraph.graph.exports import export_chunks

    async with open_graph() as store:
        model = _model()
        for table, path in targets:
            handle: IO[str] = path.open("w", encoding="utf-8") if path else sys.stdout
            try:
                chunks = export_chunks(
                    store, project, fmt, since=since, table=table, vectors=vectors,
                    model=model,
                )  # fmt: skip
                async for chunk in chunks:
                    handle.write(chunk)
            finally:
                if path:
                    handle.close()
                    err.print(f"written {path}", highlight=False)


def _model() -> str:
    """The embedding model the settings name (not loaded: the store says the dimension)."""
    from metisgraph.api.settings import load_settings

    return load_settings().embedding.model


def import_command(
    path: Annotated[Path, typer.Argument(exists=True, dir_okay=False, help="A JSON export")],
    project: Annotated[
        str | None, typer.Option(help="Import under this project (default: the export's)")
    ] = None,
) -> None:
    """Import a JSON export (metisgraph export --format json) into this store.

    Nodes merge on their keys, so importing twice changes nothing. Exit 3 when some nodes or
    edges were refused (each is printed with its place), 2 when the export cannot be used.
    """
    from metisgraph.graph.exports import ImportRefused, NodeLinkError

    try:
        summary = asyncio.run(_import(path, project))
    except (ImportRefused, NodeLinkError) as exc:
        err.print(f"[red]{path}: {exc}", highlight=False)
        raise typer.Exit(2) from None
    for refused in summary.refused[:20]:
        err.print(f"[yellow]refused[/] {refused}", highlight=False)
    counts = summary.as_dict()
    sys.stdout.write(" ".join(f"{k}={v}" for k, v in counts.items()) + "\n")
    if summary.refused:
        raise typer.Exit(EXIT_REFUSED)


async def _import(path: Path, project: str | None) -> ImportSummary:
    from metisgraph.api.services import open_services
    from metisgraph.graph.exports import import_graph

    async with open_services() as services:
        with path.open(encoding="utf-8") as handle:
            return await import_graph(
                services.store,
                handle,
                project=project,
                model=services.embedder.settings.model,
                dimension=services.embedder.dimension,
            )
