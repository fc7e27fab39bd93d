"""Error families in the graph: read the candidates, record merges, resolve a family.

Which keys belong together is decided in ``ingest`` (``ingest.errors.families``); this
module only reads and writes (``cypher/families.cypher``). ``family_members`` is what
lineage calls: every Error node of the families of some error keys, in the projects given.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from metisgraph.graph.rows import native_time
from metisgraph.graph.store import GraphStore

__all__ = [
    "MAX_FAMILY_MEMBERS",
    "FamilyMember",
    "bucket_errors",
    "family_members",
    "merge_families",
    "set_family_shapes",
]

MAX_FAMILY_MEMBERS = 1000  # a hard cap on one answer
_SETS_PER_TRANSACTION = 500


@dataclass(frozen=True)
class FamilyMember:
    """One Error node of a family, in the project it was stored in."""

    project: str
    key: str
    family: str  # the family id: the key of its first member
    kind: str
    signature: str
    template: str
    first_seen: datetime | None
    last_seen: datetime | None
    family_template: str  # what the members share, <*> where they differ
    matched: bool  # its key was one of those asked for


async def family_members(
    store: GraphStore,
    projects: Sequence[str],
    keys: Sequence[str],
    *,
    limit: int = MAX_FAMILY_MEMBERS,
) -> list[FamilyMember]:
    """Every Error node of the families of ``keys`` in ``projects``, oldest first.

    A family is taken in each project where one of the keys is stored; the keys of those
    families are then looked up in every project again, so a sibling met only in another
    of the projects is found. Reads nothing outside ``projects``. At most ``limit`` nodes
    (capped at ``MAX_FAMILY_MEMBERS``).
    """
    if not projects or not keys:
        return []
    limit = max(1, min(limit, MAX_FAMILY_MEMBERS))
    rows = await store.run(
        "error_family_members", projects=list(projects), keys=list(keys), limit=limit
    )
    return [
        FamilyMember(
            **{
                **row,
                "first_seen": native_time(row["first_seen"]),
                "last_seen": native_time(row["last_seen"]),
            }
        )
        for row in rows
    ]


async def bucket_errors(
    store: GraphStore, buckets: Sequence[tuple[str, str]]
) -> list[dict[str, Any]]:
    """Every error of the (project, bucket) pairs, oldest first within each bucket."""
    if not buckets:
        return []
    rows = [{"project": p, "bucket": b} for p, b in sorted(set(buckets))]
    return await store.run("error_family_buckets", buckets=rows)


async def merge_families(store: GraphStore, sets: Sequence[tuple[str, Sequence[str]]]) -> int:
    """Make each (project, keys) one family with whatever families its keys have now.

    Sets must be disjoint. Returns the number of Error nodes whose families were written.
    """
    written = 0
    for start in range(0, len(sets), _SETS_PER_TRANSACTION):
        page = sets[start : start + _SETS_PER_TRANSACTION]
        projects = sorted({project for project, _ in page})
        rows = [{"project": project, "keys": list(keys)} for project, keys in page]
        result = await store.write_many(
            [
                ("lock_error_families", {"projects": projects}),
                ("merge_error_families", {"sets": rows}),
            ]
        )
        written += sum(int(r["members"]) for r in result)
    return written


async def set_family_shapes(store: GraphStore, rows: Sequence[dict[str, Any]]) -> None:
    """Give stored errors their bucket and tokens: {project, key, family_bucket, family_tokens}."""
    for start in range(0, len(rows), _SETS_PER_TRANSACTION):
        await store.run(
            "set_error_family_shapes", rows=list(rows[start : start + _SETS_PER_TRANSACTION])
        )
