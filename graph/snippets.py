"""Code memory in the graph: what is stored, one snippet in full, the bridge from episodes,
The queries live in cypher/snippets.cypher (reuse feedback: graph/outcomes.py)."""

from __future__ import annotations

from typing import Any

from metisgraph.graph.cypher import Query, query
from metisgraph.graph.store import GraphStore

__all__ = [
    "lineage_heads",
    "snippet_detail",
    "snippet_state",
    "snippets_by_id",
    "snippets_for_episodes",
    "with_episode_snippets",
]

Row = dict[str, Any]


def _with_requires(row: Row) -> Row:
    snippet = dict(row["snippet"])
    snippet["requires"] = list(row.get("requires") or [])
    return snippet


async def snippet_state(
    store: GraphStore, keys: list[Row]
) -> dict[tuple[str, str, str | None], Row]:
    """(project, id, record_key) -> {embedded, known_record, worked} for the snippets already
    stored (worked: it has a success or a verified environment)."""
    if not keys:
        return {}
    rows = await store.run("snippet_state", keys=keys)
    return {(r["project"], r["id"], r["record_key"]): r for r in rows}


async def lineage_heads(store: GraphStore, keys: list[Row]) -> dict[tuple[str, str], Row]:
    """(project, lineage) -> the latest version stored: id, version, template, signature, …"""
    if not keys:
        return {}
    rows = await store.run("snippet_lineage_heads", keys=keys)
    return {(r["project"], r["lineage"]): r["head"] for r in rows}


async def snippets_for_episodes(
    store: GraphStore, keys: list[Row]
) -> dict[tuple[str, str], list[Row]]:
    """(project, episode id) -> the snippets it generated, used or modified, in one query.

    Each snippet dict carries its fields, `relation` and `requires` [{name, spec, specs}];
    best reuse first, at most 20 per episode; rejected snippets are left out. (Recall asks
    for the same within its expansion: `recall_expand` holds `episode_snippets` too.)
    """
    if not keys:
        return {}
    rows = await store.run_query(with_episode_snippets("snippets_for_episodes"), {"keys": keys})
    return {(r["project"], r["episode_id"]): r["snippets"] for r in rows if r["snippets"]}


def with_episode_snippets(name: str, **slots: str) -> Query:
    """A named query with its `{{episode_snippets}}` slot (and any others given) filled."""
    return query(name).filled(episode_snippets=query("episode_snippets").text, **slots)


async def snippets_by_id(store: GraphStore, project: str, ids: list[str]) -> dict[str, Row]:
    """id -> snippet with `requires`, for the recallable ones among `ids`."""
    if not ids:
        return {}
    rows = await store.run("snippets_by_id", project=project, ids=ids)
    return {row["snippet"]["id"]: _with_requires(row) for row in rows}


async def snippet_detail(store: GraphStore, project: str, snippet_id: str) -> Row | None:
    """One snippet with its versions, requirements, episodes, environments and touched files."""
    rows = await store.run("snippet_detail", project=project, id=snippet_id)
    if not rows:
        return None
    row = rows[0]
    detail = _with_requires(row)
    for key in ("versions", "episodes", "environments", "touched"):
        detail[key] = list(row.get(key) or [])
    return detail
