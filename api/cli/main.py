"""The `metisgraph` command line."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from metisgraph.api.cli import errors as cli_errors
from metisgraph.api.cli import eval as cli_eval
from metisgraph.api.cli import eval_ranker as _eval_ranker  # noqa: F401 - registers `eval ranker`
from metisgraph.api.cli import exports as cli_exports
from metisgraph.api.cli import graph as cli_graph
from metisgraph.api.cli import keys as cli_keys
from metisgraph.api.cli import maintain as cli_maintain
from metisgraph.api.cli import mcp as cli_mcp
from metisgraph.api.cli import review as cli_review
from metisgraph.api.cli import schema as cli_schema
from metisgraph.api.cli import snippets as cli_snippets

if TYPE_CHECKING:  # each command imports what it uses: `metisgraph --help` stays light
    from metisgraph.api.settings import ApiSettings, Settings
    from metisgraph.graph.embedded import EmbeddedNeo4j

__all__ = ["app", "main"]

app = typer.Typer(
    help="metisgraph: long-term memory for software agents, in Neo4j.",
    no_args_is_help=True,
    pretty_exceptions_show_locals=False,
)
neo4j_app = typer.Typer(
    help="The embedded Neo4j (used when NEO4J_URI is unset).", no_args_is_help=True
)
app.add_typer(neo4j_app, name="neo4j")
app.add_typer(cli_schema.app, name="schema")
app.add_typer(cli_errors.app, name="errors")
app.add_typer(cli_eval.app, name="eval")
app.add_typer(cli_snippets.app, name="snippet")
app.add_typer(cli_keys.app, name="keys")
app.command("audit")(cli_keys.audit_command)
app.command("lineage")(cli_graph.lineage_command)
cli_errors.app.command("list")(cli_graph.errors_command)
app.command("analytics")(cli_graph.analytics_command)
app.command("export")(cli_exports.export_command)
app.command("import")(cli_exports.import_command)
app.command()(cli_maintain.maintain)
app.add_typer(cli_review.app, name="review")
app.command("mcp")(cli_mcp.mcp_command)

out = Console()
err = Console(stderr=True, soft_wrap=True)

EXIT_REFUSED = 3
EXIT_NEO4J_AWAY = 4


def _embedded(settings: Settings | None = None) -> EmbeddedNeo4j:
    from metisgraph.api.settings import load_settings
    from metisgraph.graph.embedded import EmbeddedNeo4j

    settings = settings or load_settings()
    return EmbeddedNeo4j(settings.embedded)


@app.command()
def serve(
    host: Annotated[str | None, typer.Option(help="Address to listen on")] = None,
    port: Annotated[int | None, typer.Option(help="Port to listen on")] = None,
    dev: Annotated[bool, typer.Option(help="GraphiQL at /graphql")] = False,
    demo: Annotated[bool, typer.Option(help="Load the demo memory (project 'demo')")] = False,
) -> None:
    """Serve the GraphQL API (starts the embedded Neo4j when NEO4J_URI is unset)."""
    import uvicorn

    from metisgraph.api.http.app import create_app
    from metisgraph.api.logs import configure_logging
    from metisgraph.api.settings import load_settings

    settings = load_settings()
    settings.api.host = host or settings.api.host
    settings.api.port = port or settings.api.port
    settings.api.dev = dev or settings.api.dev
    settings.api.demo = demo or settings.api.demo
    _print_first_question(settings)
    configure_logging(settings.api.log_format, settings.api.log_level)
    uvicorn.run(create_app(settings), **serve_options(settings.api))


def serve_options(api: ApiSettings) -> dict[str, Any]:
    """How uvicorn serves the app: ``metisgraph serve``'s options."""
    return {
        "host": api.host,
        "port": api.port,
        "timeout_keep_alive": api.keep_alive_s,
        "timeout_graceful_shutdown": api.shutdown_grace_s,
        "log_config": None,  # our handler (configure_logging) formats uvicorn's lines too
        "access_log": False,  # http/observed.py writes one line a request, without query strings
    }


def _print_first_question(settings: Settings) -> None:
    base = f"http://{settings.api.host}:{settings.api.port}"
    query = (
        '{"query": "{ recall(project: \\"demo\\", query: \\"the service uses more and more RAM '
        'the longer it runs\\", k: 3) { hits { score episode { id summary outcome } } } }"}'
    )
    err.print(
        f"metisgraph will serve GraphQL at {base}/graphql once {base}/readyz says ready.\n"
        "Ask a first question (the demo memory is loaded with --demo):\n"
        f"  curl -s {base}/graphql -H 'content-type: application/json' -d '{query}'",
        highlight=False,
        markup=False,
        soft_wrap=True,
    )


@neo4j_app.command("start")
def neo4j_start() -> None:
    """Fetch Neo4j's artifacts if needed and start the embedded DBMS."""
    from metisgraph.graph.embedded import EmbeddedNeo4jError

    embedded = _embedded()
    try:
        started = embedded.start()
    except EmbeddedNeo4jError as exc:
        err.print(f"[red]{exc}")
        raise typer.Exit(1) from None
    status = embedded.status()
    verb = "started" if started else "already running"
    out.print(
        f"Neo4j {status.version} {verb} at {status.uri} (pid {status.pid}, data {status.home})"
    )


@neo4j_app.command("stop")
def neo4j_stop() -> None:
    """Stop the embedded DBMS cleanly."""
    stopped = _embedded().stop()
    out.print("stopped" if stopped else "not running")


@neo4j_app.command("status")
def neo4j_status(as_json: Annotated[bool, typer.Option("--json")] = False) -> None:
    """Say whether the embedded DBMS runs, where, and its logs. Exit 1 when it does not."""
    status = _embedded().status()
    data = {
        "running": status.running,
        "pid": status.pid,
        "uri": status.uri,
        "version": status.version,
        "home": str(status.home),
        "log": str(status.log),
    }
    if as_json:
        out.print_json(data=data)
    else:
        for key, value in data.items():
            out.print(f"{key:8} {value}")
    if not status.running:
        raise typer.Exit(1)


@app.command()
def ingest(
    path: Annotated[Path, typer.Argument(exists=True, help="A file or a folder of files")],
    format: Annotated[
        str | None, typer.Option("--format", help="Input format; default: detect")
    ] = None,
    project: Annotated[str | None, typer.Option(help="Project for records that name none")] = None,
    dead_letter: Annotated[
        Path | None, typer.Option("--dead-letter", help="Keep refused records here")
    ] = None,
    quiet: Annotated[bool, typer.Option(help="No progress bar")] = False,
    bulk: Annotated[
        bool,
        typer.Option(
            "--bulk",
            help="Build a new store through import files and neo4j-admin (embedded Neo4j, "
            "empty store only)",
        ),
    ] = False,
    work: Annotated[
        Path | None, typer.Option("--work", help="--bulk: where the import files are written")
    ] = None,
) -> None:
    """Ingest memory records or agent trajectories. Exit code 3 when some were refused, 4
    when Neo4j is unreachable or went away (run it again: nothing is written twice)."""
    from neo4j.exceptions import ServiceUnavailable, SessionExpired

    _check_sources(path, format)
    if dead_letter and not dead_letter.parent.is_dir():
        err.print(f"[red]--dead-letter {dead_letter}: no folder {dead_letter.parent}")
        raise typer.Exit(2)
    try:
        if bulk:
            from metisgraph.api.cli.bulk import bulk_ingest

            counts = asyncio.run(bulk_ingest(path, format, project, dead_letter, work, 1024))
        else:
            counts = asyncio.run(_ingest(path, format, project, dead_letter, quiet))
    except (ServiceUnavailable, SessionExpired) as exc:
        err.print(
            f"[red]Neo4j is unreachable or went away ({type(exc).__name__}).[/] Each batch is "
            "written in one transaction, so nothing is half-stored. Run the same command again "
            "once Neo4j answers: records stored already are left unchanged, the rest written.",
            highlight=False,
        )
        raise typer.Exit(EXIT_NEO4J_AWAY) from None
    _print_counts(counts)
    if dead_letter and counts["refused"]:
        err.print(f"refused records kept in {dead_letter}")
    elif counts["refused"]:
        err.print("pass --dead-letter FILE to keep the refused records with their reasons")
    if counts["refused"]:
        raise typer.Exit(EXIT_REFUSED)


def _check_sources(path: Path, format: str | None) -> None:
    """Exit 2 when nothing can be read; name every file that will be skipped."""
    from metisgraph.ingest.adapters import UnknownFormatError, list_sources

    try:
        sources = list_sources(path, format=format)
    except (UnknownFormatError, FileNotFoundError) as exc:
        err.print(f"[red]{exc}")
        raise typer.Exit(2) from None
    for source in sources:
        if source.format is None:
            err.print(f"skipped {source.path}: not a recognised input format", highlight=False)
    if not any(source.format for source in sources):
        wanted = f" in format {format}" if format else ""
        err.print(f"[red]{path}: nothing to read{wanted}", highlight=False)
        raise typer.Exit(2)


async def _ingest(
    path: Path, format: str | None, project: str | None, dead_letter: Path | None, quiet: bool
) -> dict[str, Any]:
    from metisgraph.api.services import open_services
    from metisgraph.ingest.adapters import read_path
    from metisgraph.ingest.pipeline import DeadLetter

    letters = DeadLetter.open(dead_letter) if dead_letter else None
    try:
        async with open_services() as services:
            items = read_path(path, format=format, project=project)
            with _progress(quiet) as progress:
                task = progress.add_task("ingest", total=None)
                summary = await services.ingestor.ingest(
                    items, dead_letter=letters, on_progress=lambda n: progress.advance(task, n)
                )
    finally:
        if letters:
            letters.close()
    for refused in summary.refusals[:20]:
        err.print(f"[yellow]refused[/] {refused.describe()}", highlight=False)
    if summary.refused > 20:
        err.print(f"… and {summary.refused - 20} more refused")
    if summary.cut:
        err.print(
            f"{summary.cut} episode(s) stored with a text over its limit cut to its head and "
            "tail (the episode's `cut` property names the fields and their full lengths)"
        )
    return summary.as_dict()


def _print_counts(counts: dict[str, Any]) -> None:
    # One row per count: ten columns do not fit a terminal or a CI log of 80 characters.
    table = Table(title="ingest summary")
    table.add_column("records and links")
    table.add_column("count", justify="right")
    for key, value in counts.items():
        table.add_row(key, str(value))
    out.print(table)


def _progress(quiet: bool) -> Progress:
    return Progress(
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=err,
        disable=quiet or not err.is_terminal,
    )


@app.command("recall")
def recall_command(
    text: Annotated[str, typer.Argument(help="The question, error or goal")],
    project: Annotated[str, typer.Option(help="Project to recall from")],
    k: Annotated[int, typer.Option(help="How many episodes")] = 5,
    error: Annotated[str | None, typer.Option(help="Error text or stack trace")] = None,
    preset: Annotated[str, typer.Option(help="Channel weights preset")] = "balanced",
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON")] = False,
) -> None:
    """Recall the episodes that help with a question."""
    from metisgraph.api.graphql.recall_service import recall_for
    from metisgraph.api.services import open_services
    from metisgraph.ingest.question import Question

    async def run() -> dict[str, Any]:
        async with open_services() as services:
            question = Question(project=project, query=text, k=k, error=error, preset=preset)
            return await recall_for(services, question)

    result = asyncio.run(run())
    if as_json:
        sys.stdout.write(json.dumps(result, default=str) + "\n")
        return
    if result["abstained"]:
        out.print(f"[yellow]no answer:[/] {result['reason']}")
    for n, hit in enumerate(result["hits"], start=1):
        episode = hit["episode"]
        channels = ", ".join(sorted(hit["why"]["channels"]))
        out.print(
            f"[bold]{n}. {episode['id']}[/]  score {hit['score']:.3f}  "
            f"outcome {episode['outcome']}  via {channels}"
        )
        out.print(f"   {episode['summary'][:300]}", highlight=False)
        for snippet in hit["snippets"][:3]:
            out.print(
                f"   ↳ {snippet['relation'].lower()} {snippet['kind']} "
                f"{snippet.get('name') or snippet['id']} ({snippet['compatible']})",
                highlight=False,
            )
    for conflict in result["conflicts"]:
        out.print(f"[red]conflict[/] {conflict['a']} vs {conflict['b']}: {conflict['reason']}")


def main() -> None:
    app()
