"""Error families kept up to date: after new errors are stored, and for a whole store.

A new error may found a family, join one, or bring two together. Its bucket (the errors
of the same kind, own frames and length in its project) is read back after the write, the
families are found again over the whole bucket (``FamilyIndex``: the same whatever the
order errors came in), and only the merges that change something are written. Two
processes that store errors of one bucket at once each read after their own write, so the
later one sees both; merges are written under the project's lock and only ever join
families, so nothing one of them wrote is undone by the other.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from typing import Any

from metisgraph.graph import GraphStore, bucket_errors, merge_families, set_family_shapes
from metisgraph.ingest.errors.families import (
    FAMILY_SETTINGS,
    FamilyIndex,
    FamilySettings,
    FamilyShape,
)

__all__ = ["assign_all_families", "assign_families", "family_sets"]

_PAGE = 500
_BUCKETS_PER_READ = 200


def family_sets(
    rows: Iterable[dict[str, Any]], settings: FamilySettings = FAMILY_SETTINGS
) -> list[tuple[str, list[str]]]:
    """The (project, keys) that must become one family, from a bucket read back.

    ``rows`` are errors oldest first ({project, bucket, key, kind, frames, tokens, family}).
    Errors already in one family stay together; a family that needs no change is left out.
    """
    by_bucket: dict[tuple[str, str], list[dict[str, Any]]] = defaultdict(list)
    for row in rows:
        by_bucket[row["project"], row["bucket"]].append(row)
    sets: list[tuple[str, list[str]]] = []
    for (project, _), members in by_bucket.items():
        index = FamilyIndex(settings)
        founder: dict[str, str] = {}  # a stored family -> its first member read
        for row in members:
            index.add(
                row["key"],
                FamilyShape(row["kind"], tuple(row["frames"] or ()), tuple(row["tokens"] or ())),
            )
            if row["family"] is not None:
                index.join(founder.setdefault(row["family"], row["key"]), row["key"])
        stored = {row["key"]: row["family"] for row in members}
        for keys in index.families():
            families = {stored[k] for k in keys}
            if None in families or len(families) > 1:
                sets.append((project, keys))
    return sets


async def assign_families(
    store: GraphStore,
    buckets: Iterable[tuple[str, str]],
    settings: FamilySettings = FAMILY_SETTINGS,
) -> int:
    """Find the families of the (project, bucket) pairs again and write what changed.

    Returns the number of errors whose family was written.
    """
    pairs = sorted(set(buckets))
    written = 0
    for start in range(0, len(pairs), _BUCKETS_PER_READ):
        rows = await bucket_errors(store, pairs[start : start + _BUCKETS_PER_READ])
        written += await merge_families(store, family_sets(rows, settings))
    return written


async def _shapes(
    store: GraphStore, project: str | None
) -> tuple[list[dict[str, Any]], set[tuple[str, str]], int]:
    """Errors whose bucket or tokens are missing or stale, every bucket, and the count."""
    stale: list[dict[str, Any]] = []
    buckets: set[tuple[str, str]] = set()
    seen = 0
    after = ("", "")
    while page := await store.run(
        "error_page", project=project, after_project=after[0], after_key=after[1], limit=_PAGE
    ):
        for row in page:
            shape = FamilyShape.of(row["kind"], row["template"] or "", row["frames"] or ())
            buckets.add((row["project"], shape.bucket))
            if row["family_bucket"] != shape.bucket or row["family_tokens"] != list(shape.tokens):
                stale.append(
                    {
                        "project": row["project"],
                        "key": row["key"],
                        "family_bucket": shape.bucket,
                        "family_tokens": list(shape.tokens),
                    }
                )
        seen += len(page)
        after = (page[-1]["project"], page[-1]["key"])
    return stale, buckets, seen


async def assign_all_families(store: GraphStore, project: str | None = None) -> dict[str, int]:
    """Give every stored error (of ``project``, or all) its bucket and family.

    Safe to run again: a second run finds nothing to change.
    """
    stale, buckets, seen = await _shapes(store, project)
    await set_family_shapes(store, stale)
    written = await assign_families(store, buckets)
    return {"errors": seen, "shaped": len(stale), "placed": written}
