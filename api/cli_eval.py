"""`metisgraph eval …`: measure signature grouping and recall quality on labelled sets."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from metisgraph.ingest.signature_eval import (
    METHODS,
    GroupingReport,
    SignatureSetError,
    evaluate_dir,
)

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
) -> None:
    """Grouping accuracy of line signatures, per system and on average."""
    if method not in METHODS:
        raise typer.BadParameter(f"choose from {', '.join(METHODS)}", param_hint="--method")
    try:
        report = evaluate_dir(directory, method, shuffle_seed=shuffle)
    except SignatureSetError as error:
        Console(stderr=True).print(f"[red]{error}", highlight=False)
        raise typer.Exit(1) from None
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
