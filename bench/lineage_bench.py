"""Lineage, errors and analytics over HTTP on the benchmark corpus.

`metisgraph serve` runs in a subprocess against the corpus's Neo4j (the recall corpus of
the same size and seed: one database per size); one request at a time, the client's wall
time is the latency. Lineages are asked for a sample of the corpus's errors with at most
100 sightings (the target: p95 <= 100 ms at 100k episodes), each with the explorer's whole
selection; `errors` for each order, first pages and the pages after them; analytics once
per cap (the default and the whole corpus) — it is a report, not an interactive call.
"""

from __future__ import annotations

import random
import statistics
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from bench.corpus import Corpus
from bench.database import BenchNeo4j
from bench.recall_bench import metisgraph_server, percentile
from metisgraph.graph import GraphStore

__all__ = ["LineageFigures", "bench_lineage", "lineage_sample"]

_WARMUP = 10
LINEAGE = """
query Lineage($projects: [String!]!, $key: String!) {
  lineage(projects: $projects, error: {key: $key}, limit: 100) {
    errors { id project kind template sightings tasks firstSeen lastSeen }
    sightingCount firstSighting { id at } lastSighting { id at }
    sightings { episode { id episodeId createdAt outcome summary command taskId }
                task { id goal status } environment { id os runtime runtimeVersion } tools }
    pageInfo { endCursor hasNextPage }
    triedAndFailed { episode { id summary outcome } errors tools }
    fixes { episode { id createdAt } via snippets { id name kind } }
    recurrences { episode { id createdAt } fix { id createdAt } sameProject
                  difference { known packages { name fixed failing change } } }
    recurrenceCount
    related { id kind tasks preceded followed together }
    projects { project sightings tasks fixes recurrences }
    warnings
  }
}"""
ERRORS = """
query Errors($projects: [String!]!, $order: ErrorOrder!, $after: String) {
  errors(projects: $projects, orderBy: $order, first: 50, after: $after) {
    totalCount items { id kind template sightings tasks lastSeen fixes open }
    pageInfo { endCursor hasNextPage }
  }
}"""
ANALYTICS = """
query Analytics($projects: [String!]!, $cap: Int!) {
  analytics(projects: $projects, cap: $cap) {
    episodes truncated warnings
    clusters { errors { key kind sightings } tasks cohesion }
    rootCauses { error { key kind } leads share precedes }
    hubs { kind name betweenness errors failures fixes }
    fixPaths { error { key } snippet steps path { kind label } }
    overRepresented { name version failing total lift }
  }
}"""


@dataclass
class LineageFigures:
    size: int
    lineage: dict[str, Any] = field(default_factory=dict)
    errors: dict[str, Any] = field(default_factory=dict)
    analytics: list[dict[str, Any]] = field(default_factory=list)
    sample: dict[str, Any] = field(default_factory=dict)


async def lineage_sample(store: GraphStore, project: str, count: int, seed: int) -> list[dict]:
    """Errors of the corpus with 1 to 100 sightings (a seeded sample), with their counts."""
    rows = await store.run("bench_lineage_sample", project=project)
    random.Random(seed).shuffle(rows)
    return rows[:count]


def _post(client: httpx.Client, url: str, query: str, variables: dict[str, Any]) -> Any:
    body = client.post(url, json={"query": query, "variables": variables}).json()
    if body.get("errors"):
        raise RuntimeError(f"query failed: {body['errors']}")
    return body["data"]


def _timed(
    client: httpx.Client, url: str, query: str, variables: dict[str, Any]
) -> tuple[float, Any]:
    started = time.perf_counter()
    data = _post(client, url, query, variables)
    return (time.perf_counter() - started) * 1000, data


def _summary(latencies: list[float]) -> dict[str, Any]:
    return {
        "n": len(latencies),
        "p50_ms": round(statistics.median(latencies), 2),
        "p95_ms": round(percentile(latencies, 0.95), 2),
        "max_ms": round(max(latencies), 2),
    }


def _lineages(client: httpx.Client, url: str, project: str, sample: list[dict]) -> dict[str, Any]:
    projects = [project]
    for row in sample[:_WARMUP]:
        _post(client, url, LINEAGE, {"projects": projects, "key": row["key"]})
    latencies, sightings = [], []
    for row in sample[_WARMUP:]:
        ms, data = _timed(client, url, LINEAGE, {"projects": projects, "key": row["key"]})
        latencies.append(ms)
        sightings.append(data["lineage"]["sightingCount"])
    return {
        **_summary(latencies),
        "sightings_median": statistics.median(sightings),
        "sightings_max": max(sightings),
    }


def _error_pages(client: httpx.Client, url: str, project: str, rounds: int) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for order in ("COUNT", "RECENT", "UNRESOLVED"):
        variables: dict[str, Any] = {"projects": [project], "order": order, "after": None}
        _post(client, url, ERRORS, variables)  # warm
        first, after = [], []
        total = 0
        for _ in range(rounds):
            ms, data = _timed(client, url, ERRORS, {**variables, "after": None})
            first.append(ms)
            page = data["errors"]
            total = page["totalCount"]
            cursor = page["pageInfo"]["endCursor"]
            if page["pageInfo"]["hasNextPage"]:
                after.append(_timed(client, url, ERRORS, {**variables, "after": cursor})[0])
        out[order] = {"first_page": _summary(first), "total": total}
        if after:
            out[order]["next_page"] = _summary(after)
    return out


def _analytics(client: httpx.Client, url: str, project: str, caps: list[int]) -> list[dict]:
    out = []
    for cap in caps:
        ms, data = _timed(client, url, ANALYTICS, {"projects": [project], "cap": cap})
        result = data["analytics"]
        out.append(
            {
                "cap": cap,
                "seconds": round(ms / 1000, 2),
                "episodes": result["episodes"],
                "truncated": result["truncated"],
                "clusters": len(result["clusters"]),
                "warnings": result["warnings"],
            }
        )
    return out


def bench_lineage(
    neo4j: BenchNeo4j,
    corpus: Corpus,
    sample: list[dict],
    port: int,
    logs: Path,
    error_rounds: int = 50,
) -> LineageFigures:
    logs.mkdir(parents=True, exist_ok=True)
    figures = LineageFigures(size=corpus.size)
    counts = [row["sightings"] for row in sample]
    figures.sample = {
        "errors": len(sample),
        "sightings_median": statistics.median(counts) if counts else 0,
        "sightings_max": max(counts, default=0),
    }
    caps = sorted({20_000, corpus.size})
    log = logs / "metisgraph-lineage.log"
    with metisgraph_server(neo4j, port, log) as url, httpx.Client(timeout=600) as client:
        figures.lineage = _lineages(client, url, corpus.project, sample)
        figures.errors = _error_pages(client, url, corpus.project, error_rounds)
        figures.analytics = _analytics(client, url, corpus.project, caps)
    return figures
