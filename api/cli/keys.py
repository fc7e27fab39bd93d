"""`metisgraph keys …` and `metisgraph audit`: scoped API keys and the audit trail.

Whoever can run these can reach Neo4j, so they are the operator's: no token is asked.
A key's token is printed once, when it is made; the store keeps only its digest.
"""

from __future__ import annotations

import asyncio
import getpass
import json
from typing import TYPE_CHECKING, Annotated, Any

import typer

if TYPE_CHECKING:  # each command imports what it uses: `metisgraph --help` stays light
    from metisgraph.api.keys import KeyInfo

__all__ = ["app", "audit_command"]

app = typer.Typer(
    help="Scoped API keys (read, write, review, admin per project).", no_args_is_help=True
)

JsonOption = Annotated[bool, typer.Option("--json", help="Print JSON instead of text.")]


def _actor() -> str:
    return f"cli:{getpass.getuser()}"


def _plain(info: KeyInfo) -> dict[str, Any]:
    def when(value: Any) -> str | None:
        if value is None:
            return None
        return str(value.iso_format() if hasattr(value, "iso_format") else value)

    return {
        "key_id": info.key_id,
        "note": info.note,
        "projects": info.projects,
        "scopes": info.scopes,
        "per_second": info.limits.per_second,
        "per_minute": info.limits.per_minute,
        "records_per_day": info.limits.records_per_day,
        "created_at": when(info.created_at),
        "created_by": info.created_by,
        "revoked_at": when(info.revoked_at),
    }


@app.command()
def create(
    project: Annotated[
        list[str], typer.Option("--project", "-p", help="A project the key reaches ('*': all)")
    ],
    scope: Annotated[
        list[str], typer.Option("--scope", "-s", help="read, write, review or admin (repeat)")
    ],
    note: Annotated[str | None, typer.Option(help="Who or what the key is for")] = None,
    per_second: Annotated[float | None, typer.Option(help="Requests a second (0: none)")] = None,
    per_minute: Annotated[float | None, typer.Option(help="Requests a minute (0: none)")] = None,
    records_per_day: Annotated[int | None, typer.Option(help="Records a day (0: none)")] = None,
    as_json: JsonOption = False,
) -> None:
    """Make a key; its token is printed once (keep it: only its digest is stored)."""
    from metisgraph.api.audit import audit
    from metisgraph.api.auth import Limits
    from metisgraph.api.keys import create_key
    from metisgraph.api.services import open_services

    limits = Limits(per_second, per_minute, records_per_day)

    async def run() -> Any:
        async with open_services() as services:
            issued = await create_key(
                services.store, project, scope, note=note, limits=limits, actor=_actor()
            )
            for name in issued.info.projects:
                await audit(services.store, _actor(), "key_create", name, target=issued.info.key_id)
            return issued

    try:
        issued = asyncio.run(run())
    except ValueError as error:
        raise typer.BadParameter(str(error)) from None
    if as_json:
        typer.echo(json.dumps({"token": issued.token, **_plain(issued.info)}, indent=2))
        return
    typer.echo(issued.token)
    scopes, projects = ", ".join(issued.info.scopes), ", ".join(issued.info.projects)
    typer.echo(f"key {issued.info.key_id}: {scopes} on {projects}", err=True)


@app.command("list")
def list_command(
    project: Annotated[str | None, typer.Option("--project", "-p", help="Keys reaching it")] = None,
    as_json: JsonOption = False,
) -> None:
    """List keys (never their tokens), revoked ones too."""
    from metisgraph.api.keys import list_keys
    from metisgraph.api.services import open_services

    async def run() -> list[KeyInfo]:
        async with open_services() as services:
            return await list_keys(services.store, project)

    keys = [_plain(k) for k in asyncio.run(run())]
    if as_json:
        typer.echo(json.dumps(keys, indent=2))
        return
    for key in keys:
        state = f"revoked {key['revoked_at']}" if key["revoked_at"] else "live"
        typer.echo(
            f"{key['key_id']}  {','.join(key['scopes']):<24} {','.join(key['projects']):<30} "
            f"{state}  {key['note'] or ''}"
        )


@app.command()
def revoke(key_id: Annotated[str, typer.Argument(help="The key id `keys list` shows")]) -> None:
    """Revoke a key: every server refuses it within 5 seconds."""
    from metisgraph.api.audit import audit
    from metisgraph.api.keys import revoke_key
    from metisgraph.api.services import open_services

    async def run() -> list[str]:
        async with open_services() as services:
            projects = await revoke_key(services.store, key_id, actor=_actor())
            for name in projects:
                await audit(services.store, _actor(), "key_revoke", name, target=key_id)
            return projects

    try:
        asyncio.run(run())
    except KeyError:
        typer.echo(f"no live key {key_id!r}", err=True)
        raise typer.Exit(1) from None
    typer.echo(f"revoked {key_id}")


def audit_command(
    project: Annotated[str, typer.Option("--project", "-p", help="Whose trail")],
    first: Annotated[int, typer.Option(help="Entries, newest first")] = 50,
    after: Annotated[str | None, typer.Option(help="The cursor a page ended with")] = None,
    as_json: JsonOption = False,
) -> None:
    """Who recorded, reviewed, forgot, exported in a project, and who issued its keys."""
    from metisgraph.api.audit import audit_page
    from metisgraph.api.services import open_services

    async def run() -> Any:
        async with open_services() as services:
            return await audit_page(services.store, project, first, after)

    try:
        page = asyncio.run(run())
    except ValueError as error:
        raise typer.BadParameter(str(error)) from None
    rows = [
        {
            "at": e.at.iso_format() if hasattr(e.at, "iso_format") else str(e.at),
            "actor": e.actor,
            "action": e.action,
            "project": e.project,
            "target": e.target,
            "count": e.count,
        }
        for e in page.entries
    ]
    if as_json:
        typer.echo(json.dumps({"entries": rows, "end_cursor": page.end_cursor}, indent=2))
        return
    for row in rows:
        extra = " ".join(f"{k}={row[k]}" for k in ("target", "count") if row[k] is not None)
        typer.echo(f"{row['at']}  {row['actor']:<28} {row['action']:<15} {extra}")
    if page.end_cursor:
        typer.echo(f"more: --after {page.end_cursor}", err=True)
