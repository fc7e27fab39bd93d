"""Recall's candidate channels: one named query each, run concurrently."""

from __future__ import annotations

import asyncio
import hashlib
import logging
import re
from collections.abc import Awaitable
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import Any

from neo4j.exceptions import Neo4jError

from metisgraph.graph.counters import COUNTERS
from metisgraph.graph.cypher import query
from metisgraph.graph.fusion import Candidate, ranked
from metisgraph.graph.recall_settings import RecallSettings
from metisgraph.graph.store import GraphStore

__all__ = [
    "ALL_OUTCOMES",
    "RECALLABLE_REVIEW",
    "ChannelAnswers",
    "ChannelFailure",
    "ChannelQuery",
    "EnvironmentQuery",
    "RecallFilters",
    "RecallRequest",
    "combined",
    "gather_channels",
    "lexical_channels",
    "lucene_query",
    "lucene_terms",
    "project_scope",
]

log = logging.getLogger("metisgraph.recall")

ALL_OUTCOMES = ("success", "failure", "partial", "unknown")
RECALLABLE_REVIEW = ("unreviewed", "pending", "approved")
_EARLIEST = datetime(1, 1, 1, tzinfo=UTC)
_LATEST = datetime(9999, 12, 31, tzinfo=UTC)
_VECTOR_INDEXES = {
    "vector": "episode_embedding",
    "title": "episode_title_embedding",
    "context": "episode_context_embedding",
}
_VECTOR_PROPERTIES = {
    "episode_embedding": "embedding",
    "episode_title_embedding": "title_embedding",
    "episode_context_embedding": "context_embedding",
}
_ERROR_OVERFETCH = 4  # error templates fetched per candidate asked, filtered after
_REASON_CHARS = 300
_TEXT_INDEXES = {"fulltext": "episode_text", "context_text": "episode_context"}
_INDEX_NAME = re.compile(r"^[a-z][a-z0-9_]{0,62}$")
_LUCENE_SPECIAL = re.compile(r'([+\-&|!(){}\[\]^"~*?:\\/])')
_WORD = re.compile(r"[\w.$#@-]+", re.UNICODE)
_PARAMETER = re.compile(r"\$([A-Za-z_][A-Za-z0-9_]*)")


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

    def clause(self) -> str:
        """The predicates that narrow anything, from a fixed set; defaults add none.

        Every episode has an outcome, a review status (rejected ones are not recallable), a
        creation time and a confidence, so a filter at its default would only make the
        index check each candidate against everything it already satisfies.
        """
        parts = []
        if set(self.outcomes) != set(ALL_OUTCOMES):
            parts.append("e.outcome IN $outcomes")
        if set(self.review) - {"rejected"} != set(RECALLABLE_REVIEW):
            parts.append("e.review_status IN $review")
        if self.since != _EARLIEST:
            parts.append("e.created_at >= $since")
        if self.until != _LATEST:
            parts.append("e.created_at <= $until")
        if self.min_confidence > 0:
            parts.append("e.confidence >= $min_confidence")
        if self.kinds is not None:
            parts.append("e.kind IN $kinds")
        return "".join(f" AND {p}" for p in parts)


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
    lexical: str | None = None  # the text for the full-text channels, when not `text`


def project_scope(project: str) -> str:
    """One Lucene token standing for the project, so full-text search filters inside the index."""
    return "p" + hashlib.sha256(project.encode()).hexdigest()[:24]


def lucene_terms(text: str, max_terms: int = 64) -> str:
    """Free text as safe Lucene terms: escaped, OR-ed, each once; no user syntax gets through."""
    terms: dict[str, None] = {}
    # Lower case: the analysers fold case anyway, and AND / OR / NOT would be operators.
    # Each term once: a repeated word would spend the budget and count twice.
    for word in _WORD.findall(text.lower()):
        word = word.strip(".-")
        if len(word) >= 2:
            terms.setdefault(_LUCENE_SPECIAL.sub(r"\\\1", word))
        if len(terms) >= max_terms:
            break
    return " OR ".join(terms)


def lucene_query(text: str, scopes: tuple[str, ...], max_terms: int = 64) -> str | None:
    """``lucene_terms`` restricted to the projects' scope tokens, inside the index."""
    terms = lucene_terms(text, max_terms)
    if not terms:
        return None
    return f"+scope:({' OR '.join(scopes)}) +({terms})"


def _text(name: str, index: str | None, filters: RecallFilters) -> str:
    if index is not None and not _INDEX_NAME.match(index):
        raise ValueError(f"not an index name: {index!r}")
    text = query(name).text.replace("{{filters}}", filters.clause())
    return text.replace("{{index}}", index or "")


@dataclass(frozen=True)
class ChannelQuery:
    """One channel's part of the question: a named query, its index and its own values."""

    name: str
    index: str | None
    params: dict[str, Any]


@dataclass(frozen=True)
class ChannelFailure:
    """A channel that could not answer a question, and why (the Neo4j error code and text)."""

    channel: str
    reason: str


@dataclass
class ChannelAnswers:
    """Each answering channel's candidates, and the channels dropped from the question."""

    candidates: dict[str, list[Candidate]]
    failures: list[ChannelFailure] = field(default_factory=list)


Answers = tuple[dict[str, list[dict[str, Any]]], list[ChannelFailure]]


def _vector_query(channel: str, vector: list[float], limit: int, in_index: bool) -> ChannelQuery:
    index = _VECTOR_INDEXES[channel]
    if in_index:
        return ChannelQuery("vector_episodes", index, {"vector": vector, "limit": limit})
    return ChannelQuery(
        "vector_episodes_overfetch", index, {"vector": vector, "limit": limit, "fetch": limit * 10}
    )


def _weighted_symbols(req: RecallRequest) -> list[dict[str, Any]]:
    weights = req.symbol_weights or (1.0,) * len(req.symbols)
    return [{"name": n, "weight": w} for n, w in zip(req.symbols, weights, strict=True)]


def _text_channels(req: RecallRequest, limit: int) -> dict[str, ChannelQuery]:
    lucene = lucene_query(req.lexical or req.text, req.scopes)
    if not lucene:
        return {}
    params = {"text": lucene, "limit": limit, "fetch": limit * 4}
    return {c: ChannelQuery("fulltext_episodes", i, params) for c, i in _TEXT_INDEXES.items()}


def _error_channel(req: RecallRequest, limit: int, in_index: bool) -> ChannelQuery:
    similarity = req.settings.error_similarity if req.error_vector else 2.0
    params = {
        "keys": list(req.error_keys),
        "vector": req.error_vector or req.vector,
        "min_similarity": similarity,
        "limit": limit,
    }
    return ChannelQuery("error_episodes" if in_index else "error_episodes_exact", None, params)


def _graph_channels(req: RecallRequest, limit: int) -> dict[str, ChannelQuery]:
    """The graph channels that ask by name: symbols, tags, tools, environment."""
    plan: dict[str, ChannelQuery] = {}
    if req.symbols:
        symbols = {"symbols": _weighted_symbols(req), "limit": limit}
        plan["symbols"] = ChannelQuery("symbol_episodes", None, symbols)
    if req.tags or req.words:
        tags = {"tags": list(req.tags), "words": list(req.words), "limit": limit}
        plan["tags"] = ChannelQuery("tag_episodes", None, tags)
    if req.tools:
        tools = {"tools": list(req.tools), "limit": limit}
        plan["tools"] = ChannelQuery("tool_episodes", None, tools)
    if req.environment:
        environment = {**req.environment.params(), "limit": limit}
        plan["environment"] = ChannelQuery("environment_episodes", None, environment)
    return plan


def _dense_plan(req: RecallRequest, limit: int, in_index: bool) -> dict[str, ChannelQuery]:
    """The channels that need the question's vectors: the vector indexes and the errors."""
    vectors = {"vector": req.vector, "title": req.title_vector or req.vector, "context": req.vector}
    plan = {c: _vector_query(c, v, limit, in_index) for c, v in vectors.items()}
    if req.error_keys or req.error_vector:
        plan["errors"] = _error_channel(req, limit, in_index)
    return {c: q for c, q in plan.items() if req.settings.weights.of(c)}


def _lexical_plan(req: RecallRequest, limit: int) -> dict[str, ChannelQuery]:
    """The channels that need no vector: full text and the graph by name."""
    plan = _text_channels(req, limit) | _graph_channels(req, limit)
    return {c: q for c, q in plan.items() if req.settings.weights.of(c)}


def _limit(req: RecallRequest) -> int:
    return max(req.settings.candidates, req.k * 2) + len(req.exclude)


def _body(channel: str, q: ChannelQuery, filters: RecallFilters) -> str:
    """A channel's query as a subquery part, its own parameters renamed ``$<channel>_<name>``."""
    if not _INDEX_NAME.match(channel):
        raise ValueError(f"not a channel name: {channel!r}")
    text = _text(q.name, q.index, filters).removeprefix("CYPHER 25").strip()
    text = _PARAMETER.sub(lambda m: f"${channel}_{m[1]}" if m[1] in q.params else m[0], text)
    # One record per channel: the driver pays per record far more than per value.
    found = "collect([project, id, score]) AS found"
    return f"CALL () {{\n{text}\n}}\nRETURN '{channel}' AS channel, {found}"


def combined(plan: dict[str, ChannelQuery], req: RecallRequest) -> tuple[str, dict[str, Any]]:
    """Every channel in one query (one round trip): UNION ALL of one subquery per channel."""
    parts = [_body(channel, q, req.filters) for channel, q in plan.items()]
    params: dict[str, Any] = {"projects": list(req.projects), **req.filters.params()}
    for channel, q in plan.items():
        params |= {f"{channel}_{name}": value for name, value in q.params.items()}
    return "CYPHER 25\n" + "\nUNION ALL\n".join(parts), params


async def _widen(
    store: GraphStore, req: RecallRequest, q: ChannelQuery, rows: list[dict[str, Any]]
) -> list[dict[str, Any]]:
    """Over-fetching servers: ask again with a wider fetch while filters leave too few."""
    limit, fetch = q.params["limit"], q.params["fetch"]
    for _ in range(3):
        if len(rows) >= limit:
            break
        fetch *= 4
        rows = await _run_alone(store, req, replace(q, params=q.params | {"fetch": fetch}))
    return rows


async def _run_alone(
    store: GraphStore, req: RecallRequest, q: ChannelQuery
) -> list[dict[str, Any]]:
    """One channel's query on its own, with its own parameter names."""
    params = {"projects": list(req.projects), **req.filters.params(), **q.params}
    return await store.run_text(_text(q.name, q.index, req.filters), params, read=True)


async def _ask_together(
    store: GraphStore, req: RecallRequest, plan: dict[str, ChannelQuery]
) -> dict[str, list[dict[str, Any]]]:
    text, params = combined(plan, req)
    by_channel: dict[str, list[dict[str, Any]]] = {channel: [] for channel in plan}
    for row in await store.run_text(text, params, read=True):
        found = [{"project": p, "id": i, "score": s} for p, i, s in row["found"]]
        by_channel[row["channel"]] = found
    return by_channel


async def _vector_fallback(
    store: GraphStore, req: RecallRequest, channel: str, q: ChannelQuery
) -> list[dict[str, Any]]:
    """A filtered vector search Neo4j could not answer, answered another way.

    Once a vector index holds deletions, Neo4j 2026.08 fails a filtered search whose filter
    matches no live vector (issue 12). When no live episode passes the filters the answer
    is empty; otherwise the unfiltered index is over-fetched and filtered after.
    """
    assert q.index is not None
    live = await _run_alone(
        store,
        req,
        ChannelQuery("vector_episodes_live", q.index, {"property": _VECTOR_PROPERTIES[q.index]}),
    )
    COUNTERS.increment("vector_search_fallbacks", index=q.index)
    if not live[0]["live"]:
        return []
    wide = _vector_query(channel, q.params["vector"], q.params["limit"], in_index=False)
    return await _widen(store, req, wide, await _run_alone(store, req, wide))


async def _answer_alone(
    store: GraphStore, req: RecallRequest, channel: str, q: ChannelQuery
) -> list[dict[str, Any]] | ChannelFailure:
    """One channel asked alone; its rows, or why it could not answer."""
    try:
        return (await _ask_together(store, req, {channel: q}))[channel]
    except Neo4jError as error:
        failed = error
    try:
        if q.name == "vector_episodes":
            return await _vector_fallback(store, req, channel, q)
        if q.name == "error_episodes":
            COUNTERS.increment("vector_search_fallbacks", index="error_embedding")
            fetch = q.params["limit"] * _ERROR_OVERFETCH
            return await _run_alone(
                store,
                req,
                replace(q, name="error_episodes_overfetch", params=q.params | {"fetch": fetch}),
            )
    except Neo4jError as error:
        failed = error
    COUNTERS.increment("recall_channels_dropped", channel=channel)
    log.warning("recall channel %s dropped: %s", channel, failed.code)
    return ChannelFailure(channel, f"{failed.code}: {(failed.message or '')[:_REASON_CHARS]}")


async def _ask(store: GraphStore, req: RecallRequest, plan: dict[str, ChannelQuery]) -> Answers:
    """The plan's channels in one round trip (none when nothing is asked).

    When that query fails, each channel is asked alone: the ones that answer keep their
    candidates, a failing vector search is answered another way, and a channel that still
    fails is dropped and named with its reason. One channel never fails the question.
    """
    if not plan:
        return {}, []
    try:
        return await _ask_together(store, req, plan), []
    except Neo4jError:
        pass
    answers = await asyncio.gather(*(_answer_alone(store, req, c, q) for c, q in plan.items()))
    rows = {c: a for c, a in zip(plan, answers, strict=True) if not isinstance(a, ChannelFailure)}
    return rows, [a for a in answers if isinstance(a, ChannelFailure)]


async def lexical_channels(store: GraphStore, req: RecallRequest) -> ChannelAnswers:
    """The channels that need no vector, in one round trip.

    They can be asked while the question is still being embedded (the request's vectors
    are not read): the server answers them on the core the model leaves free.
    """
    rows, failures = await _ask(store, req, _lexical_plan(req, _limit(req)))
    return ChannelAnswers(_candidates(req, rows), failures)


async def gather_channels(
    store: GraphStore,
    req: RecallRequest,
    *,
    in_index: bool = True,
    lexical: Awaitable[ChannelAnswers] | None = None,
) -> ChannelAnswers:
    """Run every channel that has something to ask; their candidates, and the channels that
    could not answer (dropped, with the reason).

    Two round trips side by side whatever the number of channels: each round trip costs the
    driver and the network their fixed share, and channel queries sent one by one would
    only queue for the same few cores. The channels that need the question's vectors go in
    one query and the others in a second (``lexical_channels``), so the server works on
    both at once; ``lexical`` is that second query when the caller started it earlier.
    """
    limit = _limit(req)
    dense = _dense_plan(req, limit, in_index)
    (found, failures), by_lexical = await asyncio.gather(
        _ask(store, req, dense), lexical or lexical_channels(store, req)
    )
    for channel, q in dense.items():
        if channel in found and "fetch" in q.params and q.name.startswith("vector"):
            found[channel] = await _widen(store, req, q, found[channel])
    return ChannelAnswers(
        _candidates(req, found) | by_lexical.candidates, failures + by_lexical.failures
    )


def _candidates(
    req: RecallRequest, by_channel: dict[str, list[dict[str, Any]]]
) -> dict[str, list[Candidate]]:
    return {
        channel: [c for c in ranked(rows) if c.key[1] not in req.exclude]
        for channel, rows in by_channel.items()
    }
