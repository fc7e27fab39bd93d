"""The `metisgraph` command line."""

from __future__ import annotations

import typer

from metisgraph.api import cli_errors, cli_eval, cli_snippets

app = typer.Typer(
    help="metisgraph: long-term memory for software agents, in Neo4j.",
    no_args_is_help=True,
    pretty_exceptions_show_locals=False,
)
app.add_typer(cli_errors.app, name="errors")
app.add_typer(cli_eval.app, name="eval")
app.add_typer(cli_snippets.app, name="snippet")


def main() -> None:
    app()
