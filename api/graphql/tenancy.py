"""What a caller may read in the graph: the projects it names, the nodes its ids name.

A project the token cannot read is an error naming it; a global id of a node in such a
project is "not found", exactly like an id of a node that does not exist.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import UTC, datetime

from metisgraph.api.auth import ALL_PROJECTS, Caller
from metisgraph.api.graphql.context import UserError
from metisgraph.api.scopes import Scope
from metisgraph.graph import InvalidId, NodeRef, decode_id

__all__ = ["MAX_PROJECTS", "readable_projects", "readable_ref", "utc", "visible_projects"]

MAX_PROJECTS = 50


def readable_projects(
    caller: Caller, projects: Iterable[str], argument: str = "projects"
) -> list[str]:
    """The projects named, once each; Forbidden names those the caller may not read."""
    named = sorted({p.strip() for p in projects})
    if not named or "" in named:
        raise UserError(f"{argument}: name at least one project, none blank")
    if len(named) > MAX_PROJECTS:
        raise UserError(f"{argument}: at most {MAX_PROJECTS} projects, got {len(named)}")
    caller.require(named, Scope.read)
    return named


def visible_projects(caller: Caller) -> list[str] | None:
    """The projects the caller may read; None: every project."""
    if caller.grants is None or caller.allows(ALL_PROJECTS, Scope.read):
        return None
    return sorted(p for p, held in caller.grants.items() if Scope.read in held)


def readable_ref(caller: Caller, node_id: str, kind: str | None = None) -> NodeRef | None:
    """The node a global id names, or None when the caller may not read its project.

    A string that is no global id of ours is the caller's error; an id of another kind
    than ``kind`` too, once the node is known to be readable.
    """
    try:
        ref = decode_id(node_id)
    except InvalidId as exc:
        raise UserError(f"id: {exc}") from None
    if not caller.may_use(ref.project):
        return None
    if kind is not None and ref.kind != kind:
        raise UserError(f"id: names a {ref.kind}, not a {kind}")
    return ref


def utc(moment: datetime | None) -> datetime | None:
    """A time without a zone is taken as UTC (stored times all carry one)."""
    if moment is None or moment.tzinfo is not None:
        return moment
    return moment.replace(tzinfo=UTC)
