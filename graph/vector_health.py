"""Vector index health: a probe that must answer, and an online rebuild when it does not.

The probe is a filtered search whose filter matches nothing: the search that Neo4j 2026.08
fails once an index holds deletions (issue 12). A healthy index answers it with no rows.
Recall works round a failing index (graph.channels); rebuilding it restores in-index
filtering.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from neo4j.exceptions import Neo4jError

from metisgraph.graph.counters import COUNTERS
from metisgraph.graph.cypher import Query, query
from metisgraph.graph.indexes import vector_index_statements
from metisgraph.graph.store import GraphStore

__all__ = ["IndexHealth", "RepairFailed", "probe_vector_indexes", "repair_vector_index"]

# Project names start with a letter or digit (ingest.records.ProjectName): none is this.
_NO_PROJECT = "#metisgraph-probe"
_REASON_CHARS = 300


class RepairFailed(RuntimeError):
    """The index could not be rebuilt (it failed to populate, or took too long)."""


@dataclass(frozen=True)
class IndexHealth:
    name: str
    healthy: bool
    error: str | None = None


def _probe_query(name: str, label: str, filtered: bool) -> Query:
    if filtered:
        return query("probe_vector_index_filtered").naming(label=label, index=name)
    return query("probe_vector_index")


async def _probe(store: GraphStore, row: dict[str, Any], filtered: bool) -> IndexHealth:
    name, labels, dims = str(row["name"]), row["labels"], row["dimensions"]
    if row["state"] != "ONLINE":
        return IndexHealth(name, False, f"{row['state']} ({row['percent']}% populated)")
    # properties: the vector property first, then the ones SEARCH ... WHERE may filter on
    with_filter = filtered and "project" in (row["properties"] or [])[1:]
    try:
        await store.run_query(
            _probe_query(name, labels[0], with_filter),
            {"index": name, "vector": [1.0] * dims, "project": _NO_PROJECT},
        )
    except Neo4jError as error:
        return IndexHealth(name, False, f"{error.code}: {(error.message or '')[:_REASON_CHARS]}")
    return IndexHealth(name, True)


async def probe_vector_indexes(
    store: GraphStore, wanted: list[str], *, filtered: bool
) -> dict[str, IndexHealth]:
    """Probe each wanted vector index; a missing one is unhealthy. Failures are counted."""
    rows = await store.run("vector_indexes")
    present = {r["name"]: r for r in rows}
    health: dict[str, IndexHealth] = {}
    for name in wanted:
        row = present.get(name)
        health[name] = (
            await _probe(store, row, filtered) if row else IndexHealth(name, False, "missing")
        )
        if not health[name].healthy:
            COUNTERS.increment("vector_index_probe_failures", index=name)
    return health


async def _population(store: GraphStore, name: str) -> tuple[str, float]:
    rows = await store.run("index_population", index=name)
    if not rows:
        raise RepairFailed(f"index {name} disappeared while it was rebuilt")
    return str(rows[0]["state"]), float(rows[0]["percent"] or 0.0)


async def repair_vector_index(
    store: GraphStore,
    name: str,
    dimensions: int,
    *,
    vector_filters: bool,
    on_progress: Callable[[float], None] | None = None,
    timeout_s: float = 3600.0,
    poll_s: float = 0.5,
) -> None:
    """Drop one of our vector indexes and build it again, reporting the population percent.

    The database stays online meanwhile; recall answers without the index's channel until
    it is back (the channel is dropped and named in the answer's warnings).
    """
    statements = vector_index_statements(dimensions, vector_filters=vector_filters)
    if name not in statements:
        raise ValueError(f"not a vector index of ours: {name!r}; ours: {', '.join(statements)}")
    await store.run("drop_index", index=name)
    await store.run_text(statements[name].text, statements[name].params)
    deadline = time.monotonic() + timeout_s
    while True:
        state, percent = await _population(store, name)
        if on_progress:
            on_progress(percent)
        if state == "ONLINE":
            return
        if state == "FAILED":
            raise RepairFailed(f"index {name} failed to populate (SHOW INDEXES says FAILED)")
        if time.monotonic() > deadline:
            raise RepairFailed(
                f"index {name} still {state} at {percent:.0f}% after {timeout_s:.0f} s"
            )
        await asyncio.sleep(poll_s)
