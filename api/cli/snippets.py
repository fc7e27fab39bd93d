"""`metisgraph snippet …`: code memory analysis from the command line."""

from __future__ import annotations

import dataclasses
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from metisgraph.api.cli.verify import verify

if TYPE_CHECKING:  # each command imports what it uses: `metisgraph --help` stays light
    from metisgraph.ingest.code import ExtractedSnippet, SnippetAnalysis

app = typer.Typer(help="Code memory: analyse and verify snippets.", no_args_is_help=True)
app.command()(verify)

_PENDING = "  (starts pending review)"
FileArgument = Annotated[
    str, typer.Argument(metavar="FILE", help="A file to read, or - for standard input.")
]
JsonOption = Annotated[bool, typer.Option("--json", help="Print JSON instead of text.")]


@app.command()
def analyze(
    file: FileArgument,
    language: Annotated[
        str | None, typer.Option("--language", "-l", help="The language; guessed when absent.")
    ] = None,
    as_json: JsonOption = False,
) -> None:
    """Print the analysis a snippet would get: structure, findings, risk and its template."""
    from metisgraph.ingest.code import analyze_snippet

    code = _read(file)
    try:
        analysis = analyze_snippet(code, language, path=None if file == "-" else file)
    except ValueError as error:
        raise typer.BadParameter(f"{file}: {error}", param_hint="FILE") from error
    if as_json:
        typer.echo(json.dumps(_analysis_json(analysis), indent=2))
    else:
        typer.echo(render_analysis(analysis))


@app.command()
def extract(
    file: FileArgument,
    command: Annotated[
        bool, typer.Option("--command", help="Read the file as one shell action, not free text.")
    ] = False,
    as_json: JsonOption = False,
) -> None:
    """List the snippets found in a message, an observation or a shell action."""
    from metisgraph.ingest.code import extract_command_snippets, extract_snippets, without_secrets

    text = _read(file)
    found = extract_command_snippets(text) if command else extract_snippets(text)
    # The kind is the analysis' (what ingest would store), decided on the code as written.
    kinds = [_kind(s) for s in found]
    # Extracted code is printed as written, but never with a credential in it.
    snippets = [
        dataclasses.replace(s, code=without_secrets(s.code, s.language or "text")) for s in found
    ]
    if as_json:
        documents = [
            dataclasses.asdict(s) | {"kind": k} for s, k in zip(snippets, kinds, strict=True)
        ]
        typer.echo(json.dumps(documents, indent=2))
    else:
        shown = [
            _render_extracted(i, s, k)
            for i, (s, k) in enumerate(zip(snippets, kinds, strict=True), 1)
        ]
        typer.echo("\n\n".join(shown) or "no snippets")


def _kind(snippet: ExtractedSnippet) -> str | None:
    from metisgraph.ingest.code import analyze_snippet

    if not snippet.code.strip():
        return None
    return analyze_snippet(snippet.code, snippet.language, path=snippet.path).kind


def _read(file: str) -> str:
    if file == "-":
        return sys.stdin.read()
    path = Path(file)
    if not path.is_file():
        raise typer.BadParameter(f"{file}: no such file", param_hint="FILE")
    try:
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError as error:
        raise typer.BadParameter(
            f"{file}: not UTF-8 text ({error.reason})", param_hint="FILE"
        ) from error


def _analysis_json(analysis: SnippetAnalysis) -> dict[str, Any]:
    from metisgraph.ingest.code import needs_review

    document = dataclasses.asdict(analysis)
    document["needs_review"] = needs_review(analysis)
    return document


def render_analysis(analysis: SnippetAnalysis) -> str:
    """The analysis as aligned text for a terminal."""
    from metisgraph.ingest.code import needs_review

    lines = [
        f"language    {analysis.language}",
        f"kind        {analysis.kind}",
        f"name        {analysis.name or '-'}",
        f"signature   {analysis.signature or '-'}",
        f"size        {analysis.size} lines",
        f"risk        {analysis.risk}{_PENDING if needs_review(analysis) else ''}",
        f"imports     {', '.join(analysis.imports) or '-'}",
        f"calls       {', '.join(analysis.calls) or '-'}",
        f"requires    {', '.join(r.name + (r.spec or '') for r in analysis.requires) or '-'}",
        f"content key {analysis.content_key}",
    ]
    if analysis.docstring:
        lines.append(f"docstring   {analysis.docstring.splitlines()[0]}")
    lines += _section(
        "parameters",
        [
            f"{p.name}  type={p.type or '-'}  default={p.default or '-'}"
            for p in analysis.parameters
        ],
    )
    lines += _section(
        "findings",
        [f"line {f.line}  {f.severity}  {f.rule}  {f.message}" for f in analysis.findings],
    )
    lines += _section(
        "patch files",
        [
            f"{p.path}  hunks={p.hunks}  +{p.added} -{p.removed}  {', '.join(p.symbols)}"
            for p in analysis.patch_files
        ],
    )
    lines += _section(
        "template parameters",
        [
            f"{{{{{p.name}}}}}  {p.kind}  {p.example if p.example is not None else '(not stored)'}"
            for p in analysis.template_parameters
        ],
    )
    lines += ["", "template", *("    " + line for line in analysis.template.splitlines())]
    return "\n".join(lines)


def _section(title: str, rows: list[str]) -> list[str]:
    return ["", title, *("    " + row for row in rows)] if rows else []


def _render_extracted(number: int, snippet: ExtractedSnippet, kind: str | None) -> str:
    where = f" → {snippet.path}" if snippet.path else ""
    head = f"#{number}  {snippet.origin}  {snippet.language or '?'}  {kind or '?'}{where}"
    return "\n".join([head, *("    " + line for line in snippet.code.splitlines())])
