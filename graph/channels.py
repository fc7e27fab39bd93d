"""Recall's candidate channels: one named query each (cypher/recall.cypher), asked together.

A channel's query is ``channel_<channel>`` (or a variant: ``_overfetch`` for servers without
filters inside the vector index, ``_exact`` for the errors there); its parameters are named
for it already, so ``cypher.union_all`` asks any set of channels in one round trip and a
failing one can be asked again alone, with the same query.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable
from dataclasses import dataclass, field, replace
from typing import Any

from neo4j.exceptions import Neo4jError

from metisgraph.graph.channel_registry import CHANNELS, Channel, weight
from metisgraph.graph.channel_registry import channel as registered
from metisgraph.graph.counters import COUNTERS
from metisgraph.graph.cypher import Query, query, union_all
from metisgraph.graph.fusion import Candidate, ranked
from metisgraph.graph.lucene import lucene_terms, project_scope, scoped
from metisgraph.graph.recall_request import QuestionVectors, RecallFilters, RecallRequest
from metisgraph.graph.store import GraphStore

__all__ = [
    "LIST_GROUP",
    "ChannelAnswers",
    "ChannelFailure",
    "ChannelQuery",
    "combined",
    "filters_clause",
    "gather_channels",
    "lexical_channels",
]

log = logging.getLogger("metisgraph.recall")

_ERROR_OVERFETCH = 4  # error templates fetched per candidate asked, filtered after
# Vectors fetched per candidate a vector channel keeps: the episode's filters (recallable,
# the caller's) are checked after the search; without in-index filters, also the project.
_VECTOR_FETCH = 1
_OVERFETCH = 10
# Graph channels that start from a filtered vector search: their index, and how many
# candidates the unfiltered one fetches per candidate asked when the filtered one fails.
_UNFILTERED = {
    "channel_errors": ("error_embedding", _ERROR_OVERFETCH),
    "channel_patterns": ("pattern_embedding", _OVERFETCH),
}
SHARED_SEARCH = "search_episode_vectors"  # the vector channels' one search
_SHARED_KEY = "episode_vectors"  # its parameters' prefix ($episode_vectors_...)
_REASON_CHARS = 300


@dataclass(frozen=True)
class ChannelQuery:
    """One channel's part of the question: its named query and its own values (named as in
    the query, less the channel's prefix). A shared search answers for several channels
    (``answers``); a channel's own query answers for the channel it is planned under."""

    name: str
    params: dict[str, Any]
    answers: tuple[str, ...] = ()


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


Plan = dict[str, ChannelQuery]  # channel -> its query
Rows = list[dict[str, Any]]
Answers = tuple[dict[str, Rows], list[ChannelFailure]]


def filters_clause(filters: RecallFilters) -> str:
    """The caller's narrowing filters as Cypher: their named pieces, each after an AND."""
    return "".join(f" AND {query(f'filter_{name}').text}" for name in filters.narrowing())


def _shared(req: RecallRequest) -> dict[str, Any]:
    """The values every channel reads under the same name: the projects and the filters."""
    return {"projects": list(req.projects), **req.filters.narrowing()}


# Neo4j keys a cached plan by the query's text and its parameters' types, a list's size
# counted in groups (1, 2-10, 11-100, 101-1,000): each new group of each list of a union
# planned the whole union again, ~0.3-0.5 s (a pasted trace's 3 symbols, 23, 108 words...;
# docs/benchmarks.md, issue 23). The channels' name lists are sent with at least
# LIST_GROUP entries, filled with a value no error, symbol, tag or tool holds (their
# queries match each entry and never count the list), so every question of up to 100
# names meets the one plan the warm-up made.
LIST_GROUP = 11
LIST_FILLER = "\u0000metisgraph:none"
_NAME_LISTS: dict[str, dict[str, Any]] = {
    "errors": {"keys": LIST_FILLER},
    "symbols": {"symbols": {"name": LIST_FILLER, "weight": 0.0}},
    "tags": {"tags": LIST_FILLER, "words": LIST_FILLER},
    "tools": {"tools": LIST_FILLER},
    "environment": {"packages": [LIST_FILLER, LIST_FILLER]},  # a [name, version] pair
}


def _filled(channel: str, params: dict[str, Any]) -> dict[str, Any]:
    """The channel's parameters, each name list at least LIST_GROUP long."""
    lists = _NAME_LISTS.get(channel)
    if not lists:
        return params
    out = dict(params)
    for key, filler in lists.items():
        values = out.get(key)
        if isinstance(values, list) and len(values) < LIST_GROUP:
            out[key] = values + [filler] * (LIST_GROUP - len(values))
    return out


def combined(plan: Plan, req: RecallRequest) -> tuple[Query, dict[str, Any]]:
    """Every channel of the plan in one query (one round trip), with its parameters."""
    clause = filters_clause(req.filters)
    parts = [query(q.name).filled(filters=clause) for q in plan.values()]
    params = _shared(req)
    for channel, q in plan.items():
        params |= {f"{channel}_{name}": value for name, value in _filled(channel, q.params).items()}
    return union_all(parts), params


def _planned(
    c: Channel, params: dict[str, Any], limit: int, fanout: int, in_index: bool
) -> ChannelQuery:
    """The channel's query for this server: in-index filters, or a variant without them
    (vector searches over-fetched and filtered after; errors by exact signature only)."""
    params = params | {"limit": limit}
    if c.fans_out:
        params |= {"fanout": fanout}
    if c.kind == "fulltext":
        return ChannelQuery(c.query, params | {"fetch": limit * 4})
    if c.kind == "vector" and in_index:  # the episode's filters are checked after the search
        return ChannelQuery(c.query, params | {"fetch": limit * _VECTOR_FETCH})
    if in_index or c.vector is None:
        return ChannelQuery(c.query, params)
    if c.name == "errors":
        return ChannelQuery(f"{c.query}_exact", params)
    return ChannelQuery(f"{c.query}_overfetch", params | {"fetch": limit * 10})


def _plan(req: RecallRequest, vectors: QuestionVectors | None, limit: int, in_index: bool) -> Plan:
    """The weighted channels that have something to ask: with ``vectors``, those that need
    the question's vectors; without, those that need none (asked while it is embedded)."""
    plan: Plan = {}
    for c in CHANNELS:
        if (c.vector is None) != (vectors is None) or not weight(req.settings, c.name):
            continue
        params = c.asks(req, vectors)
        if params is None:
            params = c.nothing
        if params is None:
            continue
        if c.kind == "fulltext":  # the terms alone, and within the projects' scope
            terms = lucene_terms(params["text"])
            if not terms:
                continue
            scopes = tuple(project_scope(p) for p in req.projects)
            params = params | {"open": terms, "text": scoped(terms, scopes)}
        plan[c.name] = _planned(c, params, limit, req.settings.fanout, in_index)
    return plan


def _shared_search(
    plan: Plan, vectors: QuestionVectors, limit: int, in_index: bool
) -> ChannelQuery | None:
    """The vector channels over episode_vectors as one search (None for fewer than two):
    the question's text vector finds every kind of vector at once; a title found is scored
    against the question's first line."""
    kinds = {registered(name).of: name for name in plan if registered(name).of}
    if len(kinds) < 2:
        return None
    params = {
        "vector": vectors.text,
        "title": vectors.title if "title" in kinds.values() else None,
        "channels": kinds,
        "limit": limit,
        "fetch": limit * len(kinds) * (_VECTOR_FETCH if in_index else _OVERFETCH),
    }
    name = SHARED_SEARCH if in_index else f"{SHARED_SEARCH}_overfetch"
    return ChannelQuery(name, params, answers=tuple(kinds.values()))


def _dense_plan(req: RecallRequest, vectors: QuestionVectors, limit: int, in_index: bool) -> Plan:
    """The channels that need the question's vectors; the vector channels in one search."""
    plan = _plan(req, vectors, limit, in_index)
    shared = _shared_search(plan, vectors, limit, in_index)
    if shared is None:
        return plan
    rest = {name: q for name, q in plan.items() if name not in shared.answers}
    return {_SHARED_KEY: shared, **rest}


def _lexical_plan(req: RecallRequest, limit: int) -> Plan:
    """The channels that need no vector: full text and the graph by name."""
    return _plan(req, None, limit, in_index=True)


def _limit(req: RecallRequest) -> int:
    return max(req.settings.candidates, req.k * 2) + len(req.exclude)


def _answers(key: str, q: ChannelQuery) -> tuple[str, ...]:
    """The channels a planned query answers for."""
    return q.answers or (key,)


async def _ask_together(store: GraphStore, req: RecallRequest, plan: Plan) -> dict[str, Rows]:
    together, params = combined(plan, req)
    by_channel: dict[str, Rows] = {c: [] for key, q in plan.items() for c in _answers(key, q)}
    for row in await store.run_query(together, params):
        found = [{"project": p, "id": i, "score": s} for p, i, s in row["found"]]
        by_channel[row["channel"]] = found
    return by_channel


async def _ask_alone(store: GraphStore, req: RecallRequest, channel: str, q: ChannelQuery) -> Rows:
    return (await _ask_together(store, req, {channel: q}))[channel]


async def _widen(
    store: GraphStore, req: RecallRequest, key: str, q: ChannelQuery, found: dict[str, Rows]
) -> dict[str, Rows]:
    """Ask again with a wider fetch while filters checked after the search leave a channel
    too few candidates."""
    limit, fetch = q.params["limit"], q.params["fetch"]
    for _ in range(3):
        if all(len(found.get(c, [])) >= limit for c in _answers(key, q)):
            break
        fetch *= 4
        wider = replace(q, params=q.params | {"fetch": fetch})
        found = found | await _ask_together(store, req, {key: wider})
    return found


def _narrowed_after(req: RecallRequest, q: ChannelQuery) -> bool:
    """Whether filters checked after a vector search may have left it short: every filter on
    a server without in-index filters; with them, the caller's own (the warm tier leaves out
    next to nothing and is not waited for)."""
    if q.name.endswith("_overfetch"):
        return True
    return bool(set(req.filters.narrowing()) - {"warm"})


async def _vector_fallback(
    store: GraphStore, req: RecallRequest, key: str, q: ChannelQuery
) -> dict[str, Rows]:
    """A filtered vector search Neo4j could not answer, answered another way.

    Once a vector index holds deletions, Neo4j 2026.08 fails a filtered search whose filter
    matches no live vector (issue 12). When no live episode passes the filters the answer
    is empty; otherwise the unfiltered index is over-fetched and filtered after.
    """
    names = _answers(key, q)
    live = query("vector_live").filled(filters=filters_clause(req.filters))
    kinds = [registered(name).of for name in names]
    rows = await store.run_query(live, _shared(req) | {"of": kinds})
    COUNTERS.increment("vector_search_fallbacks", index=registered(names[0]).index or key)
    log.warning("recall vector search %s failed in Neo4j; answered another way", q.name)
    if not rows[0]["live"]:
        return {c: [] for c in names}
    fetch = q.params["fetch"] * _OVERFETCH // _VECTOR_FETCH
    wide = replace(q, name=f"{q.name}_overfetch", params=q.params | {"fetch": fetch})
    return await _widen(store, req, key, wide, await _ask_together(store, req, {key: wide}))


async def _answer_alone(
    store: GraphStore, req: RecallRequest, key: str, q: ChannelQuery
) -> dict[str, Rows] | list[ChannelFailure]:
    """One planned query asked alone; its channels' rows, or why they could not answer."""
    try:
        return await _ask_together(store, req, {key: q})
    except Neo4jError as error:
        failed = error
    try:
        if q.name in (SHARED_SEARCH, f"channel_{key}") and registered(_answers(key, q)[0]).of:
            return await _vector_fallback(store, req, key, q)
        if q.name in _UNFILTERED:  # the unfiltered index, over-fetched, filtered after
            index, fetch = _UNFILTERED[q.name]
            COUNTERS.increment("vector_search_fallbacks", index=index)
            log.warning(
                "recall channel %s: %s; asked without the in-index filter", key, failed.code
            )
            params = q.params | {"fetch": q.params["limit"] * fetch}
            return {
                key: await _ask_alone(
                    store, req, key, replace(q, name=f"{q.name}_overfetch", params=params)
                )
            }
    except Neo4jError as error:
        failed = error
    reason = f"{failed.code}: {(failed.message or '')[:_REASON_CHARS]}"
    for channel in _answers(key, q):
        COUNTERS.increment("recall_channels_dropped", channel=channel)
        log.warning("recall channel %s dropped: %s", channel, failed.code)
    return [ChannelFailure(channel, reason) for channel in _answers(key, q)]


async def _ask(store: GraphStore, req: RecallRequest, plan: Plan) -> Answers:
    """The plan's channels in one round trip (none when nothing is asked).

    When that query fails, each planned query is asked alone: the ones that answer keep
    their candidates, a failing vector search is answered another way, and a channel that
    still fails is dropped and named with its reason. One channel never fails the question.
    """
    if not plan:
        return {}, []
    try:
        return await _ask_together(store, req, plan), []
    except Neo4jError:
        pass
    answers = await asyncio.gather(*(_answer_alone(store, req, k, q) for k, q in plan.items()))
    rows: dict[str, Rows] = {}
    failures: list[ChannelFailure] = []
    for answer in answers:
        if isinstance(answer, list):
            failures.extend(answer)
        else:
            rows |= answer
    return rows, failures


async def lexical_channels(store: GraphStore, req: RecallRequest) -> ChannelAnswers:
    """The channels that need no vector, in one round trip.

    They can be asked while the question is still being embedded: the server answers them
    on the core the model leaves free.
    """
    rows, failures = await _ask(store, req, _lexical_plan(req, _limit(req)))
    return ChannelAnswers(_candidates(req, rows), failures)


async def gather_channels(
    store: GraphStore,
    req: RecallRequest,
    vectors: QuestionVectors,
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
    dense = _dense_plan(req, vectors, limit, in_index)
    (found, failures), by_lexical = await asyncio.gather(
        _ask(store, req, dense), lexical or lexical_channels(store, req)
    )
    for key, q in dense.items():
        vector = bool(q.answers) or registered(key).kind == "vector"
        if vector and "fetch" in q.params and _narrowed_after(req, q):
            with contextlib.suppress(Neo4jError):  # answered another way (its fallback widened)
                found = await _widen(store, req, key, q, found)
    return ChannelAnswers(
        _candidates(req, found) | by_lexical.candidates, failures + by_lexical.failures
    )


def _candidates(req: RecallRequest, by_channel: dict[str, Rows]) -> dict[str, list[Candidate]]:
    return {
        channel: [c for c in ranked(rows) if c.key[1] not in req.exclude]
        for channel, rows in by_channel.items()
    }
