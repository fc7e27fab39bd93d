"""Which Error nodes stand for "this error" in the projects asked about.

Lineage, browsing and analytics ask here, and only here, so that grouping errors into
families (errors signed differently that are one problem) changes one function: an error
is its family (graph/families.py) — every Error node of the projects asked about that shares
a family with one of the keys, and the exact keys in every project asked.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable
from dataclasses import dataclass

from metisgraph.graph.families import family_members
from metisgraph.graph.store import GraphStore

__all__ = ["ErrorKey", "error_members"]


@dataclass(frozen=True, order=True)
class ErrorKey:
    """One Error node: its project and key."""

    project: str
    key: str

    def row(self) -> dict[str, str]:
        return {"project": self.project, "key": self.key}


async def error_members(
    store: GraphStore, projects: Iterable[str], keys: Iterable[str]
) -> list[ErrorKey]:
    """The Error nodes of these projects that stand for the errors with these keys."""
    wanted = sorted(set(keys))
    scope = sorted(set(projects))
    if not wanted or not scope:
        return []
    rows, family = await asyncio.gather(
        store.run("lineage_members_by_key", projects=scope, keys=wanted),
        family_members(store, scope, wanted),
    )
    exact = {ErrorKey(r["project"], r["key"]) for r in rows}
    return sorted(exact | {ErrorKey(m.project, m.key) for m in family})
