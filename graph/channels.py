"""Recall's candidate channels: one named query each, run concurrently."""

from __future__ import annotations

import asyncio
import re
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from metisgraph.graph.cypher import query
from metisgraph.graph.fusion import Candidate, ranked
from metisgraph.graph.recall_settings import RecallSettings
from metisgraph.graph.store import GraphStore

__all__ = [
    "ALL_OUTCOMES",
    "RECALLABLE_REVIEW",
    "EnvironmentQuery",
    "RecallFilters",
    "RecallRequest",
    "gather_channels",
    "lucene_query",
    "lucene_terms",
]

ALL_OUTCOMES = ("success", "failure", "partial", "unknown")
RECALLABLE_REVIEW = ("unreviewed", "pending", "approved")
_EARLIEST = datetime(1, 1, 1, tzinfo=UTC)
_LATEST = datetime(9999, 12, 31, tzinfo=UTC)
_VECTOR_INDEXES = {
    "vector": "episode_embedding",
    "title": "episode_title_embedding",
    "context": "episode_context_embedding",
}
_TEXT_INDEXES = {"fulltext": "episode_text", "context_text": "episode_context"}
_INDEX_NAME = re.compile(r"^[a-z][a-z0-9_]{0,62}$")
_LUCENE_SPECIAL = re.compile(r'([+\-&|!(){}\[\]^"~*?:\\/])')
_WORD = re.compile(r"[\w.$#@-]+", re.UNICODE)


@dataclass(frozen=True)
class RecallFilters:
    outcomes: tuple[str, ...] = ALL_OUTCOMES
    review: tuple[str, ...] = RECALLABLE_REVIEW
    since: datetime = _EARLIEST
    until: datetime = _LATEST
    min_confidence: float = 0.0
    kinds: tuple[str, ...] | None = None

    def params(self) -> dict[str, Any]:
        return {
            "outcomes": list(self.outcomes),
            "review": [r for r in self.review if r != "rejected"],  # rejected never returns
            "since": self.since,
            "until": self.until,
            "min_confidence": self.min_confidence,
            "kinds": list(self.kinds or ()),
        }


@dataclass(frozen=True)
class EnvironmentQuery:
    os: str | None = None
    runtime: str | None = None
    runtime_version: str | None = None
    packages: tuple[tuple[str, str], ...] = ()

    def params(self) -> dict[str, Any]:
        return {
            "os": self.os.lower() if self.os else None,
            "runtime": self.runtime.lower() if self.runtime else None,
            "runtime_version": self.runtime_version,
            "packages": [list(p) for p in self.packages],
        }


@dataclass(frozen=True)
class RecallRequest:
    """A question, ready for the graph: sanitized text, vectors and extracted links."""

    projects: tuple[str, ...]
    text: str
    vector: list[float]
    scopes: tuple[str, ...]  # the projects' full-text scope tokens
    k: int = 5
    title_vector: list[float] | None = None
    error_keys: tuple[str, ...] = ()
    error_vector: list[float] | None = None
    symbols: tuple[str, ...] = ()
    symbol_weights: tuple[float, ...] = ()  # parallel to symbols; 1.0 each when empty
    tags: tuple[str, ...] = ()
    words: tuple[str, ...] = ()
    tools: tuple[str, ...] = ()
    environment: EnvironmentQuery | None = None
    filters: RecallFilters = field(default_factory=RecallFilters)
    exclude: frozenset[str] = frozenset()
    settings: RecallSettings = field(default_factory=RecallSettings)


def lucene_terms(text: str, max_terms: int = 64) -> str:
    """Free text as safe Lucene terms: escaped, OR-ed; no user syntax gets through."""
    terms: list[str] = []
    # Lower case: the analysers fold case anyway, and AND / OR / NOT would be operators.
    for word in _WORD.findall(text.lower()):
        word = word.strip(".-")
        if len(word) >= 2:
            terms.append(_LUCENE_SPECIAL.sub(r"\\\1", word))
        if len(terms) >= max_terms:
            break
    return " OR ".join(terms)


def lucene_query(text: str, scopes: tuple[str, ...], max_terms: int = 64) -> str | None:
    """``lucene_terms`` restricted to the projects' scope tokens, inside the index."""
    terms = lucene_terms(text, max_terms)
    if not terms:
        return None
    return f"+scope:({' OR '.join(scopes)}) +({terms})"


def _text(name: str, index: str | None, kinds: bool) -> str:
    if index is not None and not _INDEX_NAME.match(index):
        raise ValueError(f"not an index name: {index!r}")
    text = query(name).text.replace("{{kinds}}", "AND e.kind IN $kinds" if kinds else "")
    return text.replace("{{index}}", index or "")


async def _run(
    store: GraphStore, name: str, index: str | None, req: RecallRequest, params: dict[str, Any]
) -> list[dict[str, Any]]:
    text = _text(name, index, req.filters.kinds is not None)
    full = {"projects": list(req.projects), **req.filters.params(), **params}
    return await store.run_text(text, full, read=True)


async def _vector(
    store: GraphStore,
    req: RecallRequest,
    channel: str,
    vector: list[float],
    limit: int,
    in_index: bool,
) -> list[dict[str, Any]]:
    index = _VECTOR_INDEXES[channel]
    if in_index:
        return await _run(store, "vector_episodes", index, req, {"vector": vector, "limit": limit})
    fetch = limit * 10
    for _ in range(4):  # widen until the filters leave enough, so nothing is lost
        rows = await _run(
            store,
            "vector_episodes_overfetch",
            index,
            req,
            {"vector": vector, "limit": limit, "fetch": fetch},
        )
        if len(rows) >= limit:
            break
        fetch *= 4
    return rows


def _weighted_symbols(req: RecallRequest) -> list[dict[str, Any]]:
    weights = req.symbol_weights or (1.0,) * len(req.symbols)
    return [{"name": n, "weight": w} for n, w in zip(req.symbols, weights, strict=True)]


def _plan(req: RecallRequest, limit: int, in_index: bool) -> dict[str, Any]:
    """Which channels run, each as a coroutine factory (channels with nothing to ask are off)."""
    weights = req.settings.weights
    plan: dict[str, Any] = {}
    vectors = {"vector": req.vector, "title": req.title_vector or req.vector, "context": req.vector}
    for channel, vector in vectors.items():
        if weights.of(channel):
            plan[channel] = (_vector, channel, vector, limit, in_index)
    lucene = lucene_query(req.text, req.scopes)
    for channel, index in _TEXT_INDEXES.items():
        if weights.of(channel) and lucene:
            plan[channel] = (
                _run,
                "fulltext_episodes",
                index,
                {"text": lucene, "limit": limit, "fetch": limit * 4},
            )
    if weights.errors and (req.error_keys or req.error_vector):
        similarity = req.settings.error_similarity if req.error_vector else 2.0
        name = "error_episodes" if in_index else "error_episodes_exact"
        plan["errors"] = (
            _run,
            name,
            None,
            {
                "keys": list(req.error_keys),
                "vector": req.error_vector or req.vector,
                "min_similarity": similarity,
                "limit": limit,
            },
        )
    if weights.symbols and req.symbols:
        plan["symbols"] = (
            _run,
            "symbol_episodes",
            None,
            {"symbols": _weighted_symbols(req), "limit": limit},
        )
    if weights.tags and (req.tags or req.words):
        plan["tags"] = (
            _run,
            "tag_episodes",
            None,
            {"tags": list(req.tags), "words": list(req.words), "limit": limit},
        )
    if weights.tools and req.tools:
        plan["tools"] = (_run, "tool_episodes", None, {"tools": list(req.tools), "limit": limit})
    if weights.environment and req.environment:
        plan["environment"] = (
            _run,
            "environment_episodes",
            None,
            {**req.environment.params(), "limit": limit},
        )
    return plan


async def gather_channels(
    store: GraphStore, req: RecallRequest, *, in_index: bool = True
) -> tuple[dict[str, list[Candidate]], dict[str, float]]:
    """Run every channel that has something to ask, concurrently; their candidates and times."""
    limit = max(req.settings.candidates, req.k * 2) + len(req.exclude)
    plan = _plan(req, limit, in_index)
    timings: dict[str, float] = {}

    async def timed(name: str, spec: tuple[Any, ...]) -> list[Candidate]:
        started = time.perf_counter()
        function, *args = spec
        if function is _vector:
            rows = await _vector(store, req, *args)
        else:
            name_, index, params = args
            rows = await _run(store, name_, index, req, params)
        timings[f"{name}_ms"] = (time.perf_counter() - started) * 1000
        return [c for c in ranked(rows) if c.key[1] not in req.exclude]

    results = await asyncio.gather(*(timed(name, spec) for name, spec in plan.items()))
    return dict(zip(plan, results, strict=True)), timings
