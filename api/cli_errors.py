"""`metisgraph errors …`: error signatures from the command line."""

from __future__ import annotations

import typer

app = typer.Typer(help="Error signatures: find and normalise errors in text.", no_args_is_help=True)
