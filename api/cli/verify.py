"""`metisgraph snippet verify`: run a snippet's tests in the sandbox and record the verdict.

Exit codes: 0 passed, 1 failed, 3 refused (nothing ran), 2 bad input.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.console import Console

if TYPE_CHECKING:  # each command imports what it uses: `metisgraph --help` stays light
    from metisgraph.ingest import EnvironmentInput
    from metisgraph.ingest.sandbox import Verification

__all__ = ["verify"]

EXIT = {"passed": 0, "failed": 1, "refused": 3}
err = Console(stderr=True, soft_wrap=True)


def verify(
    snippet_id: Annotated[str, typer.Argument(metavar="ID", help="The snippet's id.")],
    project: Annotated[str, typer.Option(help="The project that holds it.")],
    env: Annotated[
        str | None,
        typer.Option(
            "--env",
            help="The environment to vouch for: JSON or a JSON file (os, os_version, "
            "arch, runtime, runtime_version, packages).",
        ),
    ] = None,
    command: Annotated[
        str | None, typer.Option(help="A check command, run by sh in the work dir.")
    ] = None,
    param: Annotated[
        list[str] | None,
        typer.Option("--param", help="NAME=VALUE for a template placeholder; repeatable."),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """Run a snippet's tests (or --command) in the sandbox: a pass is VERIFIED_IN the
    environment, a failure counts against the snippet. Exit 0 passed, 1 failed, 3 refused."""
    from metisgraph.api.services import open_services
    from metisgraph.ingest.sandbox import SnippetNotFound, verify_snippet

    environment = _environment(env)
    parameters = _parameters(param or [])

    async def run() -> Verification:
        async with open_services() as services:
            return await verify_snippet(
                services.store, services.sandbox, project=project, snippet_id=snippet_id,
                environment=environment, command=command, parameters=parameters,
            )  # fmt: skip

    try:
        verdict = asyncio.run(run())
    except (SnippetNotFound, ValueError) as error:
        err.print(f"[red]{error}", highlight=False, markup=True)
        raise typer.Exit(2) from None
    if as_json:
        sys.stdout.write(json.dumps(_as_json(verdict), default=str) + "\n")
    else:
        typer.echo(render_verification(verdict))
    raise typer.Exit(EXIT[verdict.status])


def _environment(value: str | None) -> EnvironmentInput | None:
    from pydantic import ValidationError

    from metisgraph.ingest import EnvironmentInput

    if value is None:
        return None
    text = value if value.lstrip().startswith("{") else _read(value)
    try:
        return EnvironmentInput.model_validate(json.loads(text))
    except json.JSONDecodeError as error:
        raise typer.BadParameter(f"not JSON: {error}", param_hint="--env") from None
    except ValidationError as error:
        problems = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in error.errors())
        raise typer.BadParameter(problems, param_hint="--env") from None


def _read(path: str) -> str:
    try:
        return Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise typer.BadParameter(f"{path}: {error}", param_hint="--env") from None


def _parameters(pairs: list[str]) -> dict[str, str]:
    values = {}
    for pair in pairs:
        name, sep, value = pair.partition("=")
        if not sep or not name.strip():
            raise typer.BadParameter(f"{pair!r}: expected NAME=VALUE", param_hint="--param")
        values[name.strip()] = value
    return values


def _as_json(verdict: Verification) -> dict[str, Any]:
    document = dataclasses.asdict(verdict)
    document["counts"] = dict(verdict.counts or {})
    return document


def render_verification(verdict: Verification) -> str:
    """The verdict as text for a terminal."""
    lines = [f"{verdict.status}  {verdict.snippet_id}"]
    if verdict.reason:
        lines.append(f"reason       {verdict.reason}")
    if verdict.command:
        lines.append(f"command      {verdict.command}")
    if verdict.duration_ms is not None:
        lines.append(f"exit code    {verdict.exit_code}  after {verdict.duration_ms} ms")
    env = verdict.environment
    if env:
        described = " ".join(
            v for v in (env.os, env.os_version, env.arch, env.runtime, env.runtime_version) if v
        )
        lines.append(f"environment  {described}  ({env.key[:12]})")
    if verdict.counts:
        c = verdict.counts
        lines.append(f"snippet      uses {c['uses']}  successes {c['successes']}  "
                     f"failures {c['failures']}")  # fmt: skip
    if verdict.output_tail:
        lines += ["output", *("    " + line for line in verdict.output_tail.splitlines())]
    return "\n".join(lines)
