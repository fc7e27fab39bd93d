"""What the graph claims about each error a task hit: where it was seen, what fixed it.

The evaluation of lineage (`metisgraph eval lineage`) compares these claims with labelled
runs; one read whatever the number of tasks.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from metisgraph.graph.store import GraphStore

__all__ = ["Claim", "ErrorClaims", "task_claims"]


@dataclass(frozen=True)
class Claim:
    """A step claimed to have fixed (or worked round) an error, and on what grounds."""

    episode: str
    via: str  # the link it comes from
    why: str | None = None
    confidence: float | None = None


@dataclass(frozen=True)
class ErrorClaims:
    """One error of one task: the steps that hit it and the claims about it."""

    project: str
    task: str
    task_status: str | None
    task_outcome: str | None
    key: str
    kind: str | None
    sample: str | None
    seen: frozenset[str]  # episode ids
    fixes: tuple[Claim, ...]
    workarounds: tuple[Claim, ...]
    attempts: tuple[Claim, ...] = ()  # steps that acted on it without ending it


async def task_claims(store: GraphStore, tasks: Iterable[tuple[str, str]]) -> list[ErrorClaims]:
    """The errors the tasks (project, id) hit, each with its claims."""
    keys = [{"project": p, "id": i} for p, i in sorted(set(tasks))]
    found = await store.run("lineage_task_claims", tasks=keys)
    rows: list[dict[str, Any]] = list(found[0]["rows"]) if found else []
    return [_claims(r) for r in rows]


def _claim(row: dict[str, Any]) -> Claim:
    confidence = row.get("confidence")
    return Claim(
        episode=row["episode"],
        via=row["via"],
        why=row.get("why"),
        confidence=float(confidence) if confidence is not None else None,
    )


def _claims(row: dict[str, Any]) -> ErrorClaims:
    return ErrorClaims(
        project=row["project"],
        task=row["task"],
        task_status=row.get("status"),
        task_outcome=row.get("outcome"),
        key=row["key"],
        kind=row.get("kind"),
        sample=row.get("sample"),
        seen=frozenset(row.get("seen") or ()),
        fixes=tuple(_claim(c) for c in row.get("fixes") or () if c.get("episode")),
        workarounds=tuple(_claim(c) for c in row.get("workarounds") or () if c.get("episode")),
        attempts=tuple(_claim(c) for c in row.get("attempts") or () if c.get("episode")),
    )
