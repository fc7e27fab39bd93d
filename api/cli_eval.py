"""`metisgraph eval …`: measure signature grouping and recall quality on labelled sets."""

from __future__ import annotations

import typer

app = typer.Typer(help="Measure metisgraph on labelled evaluation sets.", no_args_is_help=True)
