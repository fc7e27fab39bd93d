"""Forgetting that is complete: episodes go, and so does what they left in other memory.

Besides the episodes (and the reports about them), forgetting repairs what was derived
from them: their tasks' step chains, resolutions and fixes; their neighbours' context text
and vectors; the patterns that summarized them (statistics recounted, the centroid read
again, a pattern left with too little support dissolved); the errors they hit (a sample
taken again from an episode that remains, an error no one hit any more removed); the
snippets they ran (their bridge reports gone, statistics recounted, staleness judged
again). Queries: cypher/forget.cypher.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from metisgraph.graph import (
    GraphStore,
    Vector,
    derive_links,
    recount_steps,
    refresh_patterns,
    refresh_staleness,
)
from metisgraph.ingest.errors.signatures import extract_errors
from metisgraph.ingest.pipeline.neighbours import refresh_context

__all__ = ["Forgotten", "forget_episodes"]

Row = dict[str, Any]


@dataclass(frozen=True)
class Forgotten:
    """How many nodes went (episodes and tasks), and what was repaired."""

    deleted: int
    patterns: int = 0  # patterns recounted
    dissolved: int = 0  # of them, dissolved: too little support left
    errors: int = 0  # errors whose sample was taken again, or that went


async def forget_episodes(
    store: GraphStore, project: str, ids: Sequence[str], *, tasks: Sequence[str] = ()
) -> Forgotten:
    """Forget these episodes of `project` (and `tasks`, whose episodes they are) completely."""
    if not ids and not tasks:
        return Forgotten(0)
    ids = list(ids)
    found = await store.run("forget_footprint", project=project, ids=ids) if ids else []
    touched: Row = found[0] if found else {}
    rows = await store.run("forget_episodes", project=project, ids=ids)
    deleted = sum(int(r["deleted"]) for r in rows)
    if tasks:
        gone = await store.run("forget_tasks", project=project, ids=list(tasks))
        deleted += sum(int(r["deleted"]) for r in gone)
    remaining = [
        {"project": project, "id": t}
        for t in sorted(set(touched.get("tasks") or []) - set(tasks))
        if t
    ]
    await _chains(store, remaining)
    patterns = list(touched.get("patterns") or [])
    dissolved = await refresh_patterns(store, project, patterns)
    await _centroids(store, project, patterns)
    errors = list(touched.get("errors") or [])
    await _errors(store, project, errors)
    await _snippets(store, project, list(touched.get("snippets") or []))
    tools = [{"project": project, "name": n} for n in touched.get("tools") or []]
    if tools:  # their statistics without the forgotten episodes
        await store.run("recount_tools", rows=tools)
    return Forgotten(deleted, len(patterns), dissolved, len(errors))


async def _chains(store: GraphStore, tasks: list[Row]) -> None:
    """The steps that remain: chained again, resolutions and fixes derived again, and their
    context (the neighbours' summaries and vectors) computed without the forgotten ones."""
    if not tasks:
        return
    await store.write_many(
        [
            ("link_task_chains", {"tasks": tasks}),
            ("memorize_resolution", {"tasks": tasks}),
            ("clear_lonely_context", {"tasks": tasks}),
        ]
    )
    await derive_links(store, tasks)
    await refresh_context(store, tasks)


async def _centroids(store: GraphStore, project: str, ids: list[str]) -> None:
    """A pattern's vector is its members' centroid: read again without the forgotten ones."""
    if not ids:
        return
    rows = await store.run("pattern_member_vectors", project=project, ids=ids)
    centroids = []
    for row in rows:
        mean = np.asarray(row["vectors"], dtype=np.float32).mean(axis=0)
        mean /= float(np.linalg.norm(mean)) or 1.0
        centroids.append({"id": row["id"], "embedding": Vector(mean.tolist())})
    if centroids:
        await store.run("set_pattern_embedding", project=project, rows=centroids)


async def _errors(store: GraphStore, project: str, keys: list[str]) -> None:
    """Errors no one hits any more go; the others keep a sample from an episode that remains
    (the forgotten one may have given it), or none when the error cannot be found in it."""
    if not keys:
        return
    await store.run("forget_orphan_errors", project=project, keys=keys)
    # the counts the errors pages read, without the forgotten sightings and fixes
    await store.run("recount_errors", rows=[{"project": project, "key": k} for k in keys])
    sources = await store.run("error_sample_sources", project=project, keys=keys)
    samples = []
    for row in sources:
        text = "\n".join(t for t in (row["error_text"], row["observation"]) if t)
        found = next((e for e in extract_errors(text) if e.key == row["key"]), None)
        samples.append({"key": row["key"], "sample": found.sample if found else None})
    if samples:
        await store.run("set_error_samples", project=project, rows=samples)


async def _snippets(store: GraphStore, project: str, ids: list[str]) -> None:
    """Snippets the forgotten episodes ran: recorded and reuse statistics recounted without
    their reports, and where they are stale judged again."""
    if not ids:
        return
    keys = [{"project": project, "id": i} for i in ids]
    await store.write_many(
        [("count_snippet_recordings", {"rows": keys}), *recount_steps("Snippet", keys)]
    )
    await refresh_staleness(store, project, snippets=ids)
