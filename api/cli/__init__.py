"""The `metisgraph` command line: one module a command group, joined in cli/main.py."""

from metisgraph.api.cli.main import app, main

__all__ = ["app", "main"]
