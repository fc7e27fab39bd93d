"""Lineage, errors and analytics over HTTP on the benchmark corpus.

`metisgraph serve` runs in a subprocess against the corpus's Neo4j (the recall corpus of
the same size and seed: one database per size); one request at a time, the client's wall
time is the latency. A lineage is asked for by an error's key and stands for the error's
whole family (`graph.lineage.error_members`), so the sample is chosen by the sightings of
that lineage, not of the one key: the target's lineages (at most 100 sightings, p95 <= 100
ms at 100k episodes) are timed apart from the larger ones, each with the explorer's whole
selection. `errors` for each order, first pages and the pages after them; analytics once
per cap (the default and the whole corpus) — it is a report, not an interactive call.

With ``against`` (another checkout's `metisgraph` executable), that server runs beside this
one on the API port + 100 (the next port is often another helper's) and every lineage is
asked of both, alternating which goes first: a before/after in one run, under the same load.
"""

from __future__ import annotations

import contextlib
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
from metisgraph.graph.lineage import error_members

__all__ = ["LINEAGE_CAP", "LineageFigures", "LineageSample", "bench_lineage", "lineage_sample"]

_WARMUP = 10
LINEAGE_CAP = 100  # the target's lineages: at most this many sightings
_AGAINST_OFFSET = 100  # the other server's port: the API port + 100
_LARGE_TIMED = 10  # larger lineages timed (of the sample's up to 30)
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
class LineageSample:
    """Keys whose lineage (the key's whole family) has at most LINEAGE_CAP sightings, and
    keys whose lineage is larger; each {key, members, sightings}."""

    small: list[dict[str, Any]] = field(default_factory=list)
    large: list[dict[str, Any]] = field(default_factory=list)
    keys_read: int = 0

    def describe(self) -> dict[str, Any]:
        return {
            "keys_read": self.keys_read,
            "small": _counts(self.small),
            "large": _counts(self.large),
        }


@dataclass
class LineageFigures:
    size: int
    lineage: dict[str, Any] = field(default_factory=dict)  # lineages of <= LINEAGE_CAP
    lineage_large: dict[str, Any] = field(default_factory=dict)  # the larger ones, apart
    errors: dict[str, Any] = field(default_factory=dict)
    analytics: list[dict[str, Any]] = field(default_factory=list)
    sample: dict[str, Any] = field(default_factory=dict)
    against: dict[str, Any] = field(default_factory=dict)  # the other server, same requests


def _counts(rows: list[dict[str, Any]]) -> dict[str, Any]:
    sightings = [r["sightings"] for r in rows]
    return {
        "errors": len(rows),
        "lineages": len({r["members_key"] for r in rows}),
        "sightings_median": statistics.median(sightings) if sightings else 0,
        "sightings_max": max(sightings, default=0),
        "members_max": max((r["members"] for r in rows), default=0),
    }


async def lineage_sample(
    store: GraphStore, project: str, count: int, seed: int, large: int = 30, tries: int = 1500
) -> LineageSample:
    """A seeded sample of the corpus's sighted errors: ``count`` whose lineage has at most
    LINEAGE_CAP sightings, and up to ``large`` with more, found as the lineage finds them
    (among the first ``tries`` keys: each costs a family lookup)."""
    keys = [r["key"] for r in await store.run("bench_lineage_sample", project=project)]
    random.Random(seed).shuffle(keys)
    sample = LineageSample()
    for key in keys[:tries]:
        if len(sample.small) >= count and len(sample.large) >= large:
            break
        members = await error_members(store, [project], [key])
        rows = await store.run("bench_lineage_sightings", members=[m.row() for m in members])
        sample.keys_read += 1
        entry = {
            "key": key,
            "members": len(members),
            "members_key": min(f"{m.project}/{m.key}" for m in members),
            "sightings": rows[0]["sightings"],
        }
        group, room = (
            (sample.small, count) if entry["sightings"] <= LINEAGE_CAP else (sample.large, large)
        )
        if len(group) < room:
            group.append(entry)
    return sample


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


def _lineages(
    client: httpx.Client, urls: list[str], project: str, sample: list[dict]
) -> list[dict[str, Any]]:
    """Each lineage of the sample asked of every server (alternating which goes first), after
    a warm-up; one summary per server, in the order of ``urls``."""
    projects = [project]
    for row in sample[:_WARMUP]:
        for url in urls:
            with contextlib.suppress(RuntimeError):  # a failure is counted below, not here
                _post(client, url, LINEAGE, {"projects": projects, "key": row["key"]})
    latencies: list[list[float]] = [[] for _ in urls]
    failed: list[list[dict[str, Any]]] = [[] for _ in urls]
    sightings: list[int] = []
    for turn, row in enumerate(sample[_WARMUP:] if len(sample) > 2 * _WARMUP else sample):
        order = list(range(len(urls)))
        if turn % 2:
            order.reverse()
        counts = set()
        for i in order:
            started = time.perf_counter()
            try:
                ms, data = _timed(
                    client, urls[i], LINEAGE, {"projects": projects, "key": row["key"]}
                )
            except RuntimeError as exc:  # e.g. Neo4j's transaction timeout: counted, not timed
                spent = round((time.perf_counter() - started) * 1000)
                failed[i].append({"key": row["key"], "ms": spent, "error": str(exc)[:200]})
                continue
            latencies[i].append(ms)
            counts.add(data["lineage"]["sightingCount"])
        if len(counts) > 1:
            raise RuntimeError(f"the servers disagree on {row['key']}: {sorted(counts)}")
        if counts:
            sightings.append(counts.pop())
    return [
        {
            **(_summary(times) if times else {"n": 0}),
            "failed": failures,
            "sightings_median": statistics.median(sightings) if sightings else 0,
            "sightings_max": max(sightings, default=0),
        }
        for times, failures in zip(latencies, failed, strict=True)
    ]


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
        started = time.perf_counter()
        try:
            ms, data = _timed(client, url, ANALYTICS, {"projects": [project], "cap": cap})
        except RuntimeError as failed:
            # At 100k the whole corpus passes Neo4j's transaction timeout: the call is
            # reported as failed with its time, and the run goes on to write its figures.
            seconds = round(time.perf_counter() - started, 2)
            out.append({"cap": cap, "seconds": seconds, "failed": str(failed)[:300]})
            continue
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
    sample: LineageSample,
    port: int,
    logs: Path,
    error_rounds: int = 50,
    against: Path | None = None,
) -> LineageFigures:
    logs.mkdir(parents=True, exist_ok=True)
    figures = LineageFigures(size=corpus.size, sample=sample.describe())
    caps = sorted({20_000, corpus.size})
    log = logs / "metisgraph-lineage.log"
    with contextlib.ExitStack() as servers, httpx.Client(timeout=600) as client:
        urls = [servers.enter_context(metisgraph_server(neo4j, port, log))]
        if against is not None:
            other = logs / "metisgraph-lineage-against.log"
            urls.append(
                servers.enter_context(
                    metisgraph_server(neo4j, port + _AGAINST_OFFSET, other, against)
                )
            )
        # The larger lineages took seconds each at 100k: ten of them, no warm-up.
        large = sample.large[:_LARGE_TIMED]
        for name, rows in (("lineage", sample.small), ("lineage_large", large)):
            if not rows:
                continue
            found = _lineages(client, urls, corpus.project, rows)
            setattr(figures, name, found[0])
            if against is not None:
                figures.against[name] = found[1]
        if against is not None:
            figures.against["executable"] = str(against)
        figures.errors = _error_pages(client, urls[0], corpus.project, error_rounds)
        figures.analytics = _analytics(client, urls[0], corpus.project, caps)
    return figures
