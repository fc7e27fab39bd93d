"""`metisgraph snippet …`: code memory analysis from the command line."""

from __future__ import annotations

import typer

app = typer.Typer(help="Code memory: analyse snippets.", no_args_is_help=True)
