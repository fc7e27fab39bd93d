"""Recall: find the episodes that help with a question, from several channels, fused."""

from __future__ import annotations

import re
import time
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

from metisgraph.graph.store import GraphStore

__all__ = ["Hit", "RecallQuery", "RecallResult", "lucene_query", "recall"]

_LUCENE_SPECIAL = re.compile(r'([+\-&|!(){}\[\]^"~*?:\\/])')
_WORD = re.compile(r"[\w.$#@-]+", re.UNICODE)
_RRF_K = 60


def lucene_query(text: str, max_terms: int = 64) -> str:
    """A safe Lucene query from free text: terms escaped, OR-ed (no user syntax gets through)."""
    terms = []
    for word in _WORD.findall(text):
        word = word.strip(".-")
        if len(word) < 2:
            continue
        terms.append(_LUCENE_SPECIAL.sub(r"\\\1", word))
        if len(terms) >= max_terms:
            break
    return " OR ".join(terms)


@dataclass(frozen=True)
class RecallQuery:
    project: str
    text: str
    vector: list[float]
    k: int = 5


@dataclass
class Hit:
    episode: dict[str, Any]
    task: dict[str, Any] | None
    score: float
    channels: dict[str, float] = field(default_factory=dict)  # channel -> raw score
    ranks: dict[str, int] = field(default_factory=dict)  # channel -> 1-based rank


@dataclass
class RecallResult:
    hits: list[Hit]
    timings: dict[str, float]


async def _channel(store: GraphStore, name: str, **params: Any) -> list[dict[str, Any]]:
    return await store.run(name, **params)


async def recall(store: GraphStore, q: RecallQuery, *, vector_filters: bool = True) -> RecallResult:
    """Vector and full-text candidates, fused by reciprocal rank, then fetched in one trip."""
    timings: dict[str, float] = {}
    fetch = max(q.k * 4, 20)
    started = time.perf_counter()
    if vector_filters:
        vec = await _channel(
            store, "vector_episodes", project=q.project, vector=q.vector, limit=fetch
        )
    else:
        vec = await _channel(
            store,
            "vector_episodes_overfetch",
            project=q.project,
            vector=q.vector,
            limit=fetch,
            fetch=fetch * 10,
        )
    timings["vector_ms"] = (time.perf_counter() - started) * 1000
    started = time.perf_counter()
    lucene = lucene_query(q.text)
    text = (
        await _channel(
            store, "fulltext_episodes", project=q.project, text=lucene, limit=fetch, fetch=fetch * 5
        )
        if lucene
        else []
    )
    timings["fulltext_ms"] = (time.perf_counter() - started) * 1000

    fused: dict[tuple[str, str], float] = defaultdict(float)
    channels: dict[tuple[str, str], dict[str, float]] = defaultdict(dict)
    ranks: dict[tuple[str, str], dict[str, int]] = defaultdict(dict)
    for name, rows in (("vector", vec), ("fulltext", text)):
        for rank, row in enumerate(rows, start=1):
            key = (row["project"], row["id"])
            fused[key] += 1.0 / (_RRF_K + rank)
            channels[key][name] = float(row["score"])
            ranks[key][name] = rank
    top = sorted(fused, key=lambda key: fused[key], reverse=True)[: q.k]
    started = time.perf_counter()
    rows = await store.run("episodes_by_id", keys=[{"project": p, "id": i} for p, i in top])
    timings["fetch_ms"] = (time.perf_counter() - started) * 1000
    by_key = {(r["episode"]["project"], r["episode"]["id"]): r for r in rows}
    hits = [
        Hit(by_key[key]["episode"], by_key[key]["task"], fused[key], channels[key], ranks[key])
        for key in top
        if key in by_key
    ]
    return RecallResult(hits=hits, timings=timings)
