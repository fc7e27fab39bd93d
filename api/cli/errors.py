"""`metisgraph errors …`: error signatures from the command line."""

from __future__ import annotations

import dataclasses
import json
import sys
from typing import Annotated

import typer

from metisgraph.ingest.errors import (
    ErrorSignature,
    extract_errors,
    line_signature,
    signature_key,
)

app = typer.Typer(help="Error signatures: find and normalise errors in text.", no_args_is_help=True)


@app.command()
def signature(
    key: Annotated[
        bool, typer.Option("--key", help="Print the 16-character hash instead of the text.")
    ] = False,
) -> None:
    """Read lines on standard input; print one signature per line, in the same order."""
    for line in sys.stdin:
        text = line_signature(line.rstrip("\r\n"))
        sys.stdout.write((signature_key(text) if key else text) + "\n")


@app.command()
def extract(
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object a line.")] = False,
) -> None:
    """Read text on standard input (a log, a trace, an observation); list the errors in it."""
    errors = extract_errors(sys.stdin.read())
    for error in errors:
        sys.stdout.write((_as_json(error) if as_json else _as_text(error)) + "\n")
    if not errors and not as_json:
        sys.stderr.write("no errors found\n")


def _as_json(error: ErrorSignature) -> str:
    return json.dumps(dataclasses.asdict(error), ensure_ascii=False)


def _as_text(error: ErrorSignature) -> str:
    lines = [f"{error.key}  {error.kind}  ({error.category})", f"  template: {error.template}"]
    if len(error.chain) > 1:
        lines.append(f"  chain:    {' -> '.join(error.chain)}")
    if error.frames:
        lines.append(f"  frames:   {', '.join(error.frames)}")
    return "\n".join(lines)
