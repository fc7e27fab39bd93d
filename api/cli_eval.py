"""`metisgraph eval …`: measure signature grouping and recall quality on labelled sets."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from metisgraph.api.eval.signatures import (
    METHODS,
    GroupingReport,
    SignatureSetError,
    evaluate,
    line_groups,
    load_set,
)

# Errors name a file and line: never wrapped, so they can be searched and copied whole.
err = Console(stderr=True, soft_wrap=True)

app = typer.Typer(help="Measure metisgraph on labelled evaluation sets.", no_args_is_help=True)


@app.command()
def signatures(
    directory: Annotated[Path, typer.Argument(help="A signature set: a folder with lines.jsonl.")],
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
    method: Annotated[
        str, typer.Option(help=f"How lines are grouped: {', '.join(METHODS)}.")
    ] = "rules",
    shuffle: Annotated[
        int | None,
        typer.Option(help="Read each system's lines in an order shuffled with this seed."),
    ] = None,
    groups: Annotated[
        Path | None,
        typer.Option(
            help="Also write the group each line gets to this file: JSON lines "
            "{system, line_id, group}, to compare two versions line by line."
        ),
    ] = None,
) -> None:
    """Grouping accuracy of line signatures, per system and on average."""
    if method not in METHODS:
        raise typer.BadParameter(f"choose from {', '.join(METHODS)}", param_hint="--method")
    try:
        lines = load_set(directory)
    except SignatureSetError as error:
        err.print(f"[red]{error}", highlight=False)
        raise typer.Exit(1) from None
    report = evaluate(lines, method, name=directory.name, shuffle_seed=shuffle)
    if groups is not None:
        with groups.open("w", encoding="utf-8") as out:
            for line, group in line_groups(lines, method, shuffle_seed=shuffle):
                row = {"system": line.system, "line_id": line.line_id, "group": group}
                out.write(json.dumps(row, ensure_ascii=False) + "\n")
    if as_json:
        sys.stdout.write(json.dumps(report.as_json()) + "\n")
    else:
        Console().print(_table(report))


def _table(report: GroupingReport) -> Table:
    table = Table(title=f"grouping accuracy — {report.name} ({report.method})")
    for column in ("system", "lines", "true groups", "found groups", "accuracy", "key drift"):
        table.add_column(column, justify="left" if column == "system" else "right")
    for s in report.systems:
        counts = (str(s.lines), str(s.groups), str(s.found_groups))
        table.add_row(s.system, *counts, f"{s.accuracy:.4f}", f"{s.key_drift:.3f}")
    table.add_section()
    lines = sum(s.lines for s in report.systems)
    table.add_row("mean", str(lines), "", "", f"{report.mean:.4f}", f"{report.mean_key_drift:.3f}")
    return table


def _write_rankings(path: Path, rankings: dict[str, list[str]]) -> None:
    """One line per query, in query order: {"id": ..., "ranked": [...]} (diffable runs)."""
    lines = (json.dumps({"id": q, "ranked": ranked}) for q, ranked in rankings.items())
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")


@app.command()
def retrieval(
    directory: Annotated[
        Path, typer.Argument(help="A retrieval set: corpus.jsonl, queries.jsonl.")
    ],
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
    preset: Annotated[str, typer.Option(help="Recall preset (channel weights).")] = "balanced",
    keep: Annotated[bool, typer.Option(help="Keep the ingested namespace afterwards.")] = False,
    namespace: Annotated[
        str | None, typer.Option(help="Project prefix to ingest under (default: a fresh one).")
    ] = None,
    rankings: Annotated[
        Path | None,
        typer.Option(help="Write each query's ranked ids here, one JSON line per query."),
    ] = None,
) -> None:
    """R@1/5/10, MRR@10, nDCG@10 and recall latency, through ingest and recall as shipped."""
    import asyncio

    from metisgraph.api.cli import open_services
    from metisgraph.api.retrieval_eval import RetrievalSetError, check_set, evaluate_retrieval

    try:  # a bad query file is reported before anything is started or ingested
        check_set(directory)
    except (RetrievalSetError, OSError) as error:
        err.print(f"[red]{error}", highlight=False)
        raise typer.Exit(1) from None

    async def run() -> dict[str, object]:
        async with open_services() as services:
            report = await evaluate_retrieval(
                services, directory, preset=preset, keep=keep, namespace=namespace
            )
            if rankings is not None:
                _write_rankings(rankings, report.rankings)
            return report.as_json()

    try:
        result = asyncio.run(run())
    except RetrievalSetError as error:
        err.print(f"[red]{error}", highlight=False)
        raise typer.Exit(1) from None
    failures = result.get("failures")
    if isinstance(failures, list) and failures:
        err.print(
            f"[yellow]{len(failures)} question(s) failed and count as misses:", highlight=False
        )
        for failure in failures[:20]:
            err.print(f"  {failure['id']}: {failure['error']}", highlight=False)
    ingest = result.get("ingest")
    if isinstance(ingest, dict) and ingest.get("refused"):
        err.print(
            f"[yellow]{ingest['refused']} corpus record(s) refused at ingest; "
            "the figures cover the rest (metisgraph ingest --dead-letter shows why)",
            highlight=False,
        )
    if as_json:
        sys.stdout.write(json.dumps({k: v for k, v in result.items() if k != "ingest"}) + "\n")
        return
    table = Table(title=f"retrieval — {directory.name} ({preset})")
    for key in ("n", "recall@1", "recall@5", "recall@10", "mrr@10", "ndcg@10"):
        table.add_column(key, justify="right")
    table.add_column("latency p50 / p95 ms", justify="right")
    latency = result["latency_ms"]
    assert isinstance(latency, dict)
    table.add_row(
        *(str(result[k]) for k in ("n", "recall@1", "recall@5", "recall@10", "mrr@10", "ndcg@10")),
        f"{latency['p50']} / {latency['p95']}",
    )
    Console().print(table)
