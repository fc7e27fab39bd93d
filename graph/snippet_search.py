"""Search code memory by meaning and by structure, and say why each snippet matched.

Structure (imports, calls, the touched symbols, the files written, the signature's name and
parameter names, as stored) is a filter: a snippet must have every one asked for; so is
verification, when asked (a sandboxed pass in a compatible environment). Within them,
or over the whole project when no structure is asked, meaning (vector) and words (full
text) rank the candidates, fused by reciprocal rank. Without a query text, structural
matches rank by how reuse went (that order is reported either way). A snippet stale in some
environment (graph/staleness.py) ranks after the fresh ones; when the caller states an
environment, one whose conditions do not hold there (graph/applicability.py) ranks after
every one whose do.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from dataclasses import dataclass, field, replace
from typing import Any

from neo4j.exceptions import Neo4jError

from metisgraph.graph.applicability import (
    NOT_STATED,
    Applicability,
    CallerConditions,
    snippet_applies,
)
from metisgraph.graph.counters import COUNTERS
from metisgraph.graph.fusion import Candidate, reciprocal_rank
from metisgraph.graph.lucene import lucene_terms, project_scope, scoped
from metisgraph.graph.recall_request import SnippetJudge
from metisgraph.graph.snippets import snippets_by_id
from metisgraph.graph.staleness import stale_ids
from metisgraph.graph.store import GraphStore

__all__ = ["SnippetHit", "SnippetSearch", "search_snippets"]

Row = dict[str, Any]
STRUCTURE_LIMIT = 500  # structural candidates considered; ranked by reuse before the cut
_RRF_K = 60
_LAST_CODE_POINT = "\U0010ffff"


@dataclass(frozen=True)
class SnippetSearch:
    project: str
    text: str | None = None
    vector: list[float] | None = None
    language: str | None = None
    kind: str | None = None
    imports: tuple[str, ...] = ()
    calls: tuple[str, ...] = ()
    symbols: tuple[str, ...] = ()  # a definition touched, or the snippet's own name
    files: tuple[str, ...] = ()  # a path written, or its trailing components
    name: str | None = None  # the signature's name
    parameters: tuple[str, ...] = ()  # the signature's parameter names
    k: int = 10
    verified: bool = False  # only snippets a sandboxed run verified (VERIFIED_IN with evidence)
    # ...in an environment compatible with this one: os, arch, runtime, runtime_minor
    environment: dict[str, str | None] | None = None
    # The caller's stated environment, and its verdict on a snippet's requirements: a
    # snippet whose conditions do not hold there ranks after the ones whose do.
    caller: CallerConditions | None = None
    judge: SnippetJudge | None = None

    @property
    def structural(self) -> bool:
        return bool(
            self.imports or self.calls or self.symbols or self.files or self.name
            or self.parameters
        )  # fmt: skip


@dataclass
class SnippetHit:
    snippet: Row
    score: float
    channels: dict[str, float] = field(default_factory=dict)  # channel -> raw score
    ranks: dict[str, int] = field(default_factory=dict)  # channel -> 1-based rank
    matched: list[Row] = field(default_factory=list)  # {facet, wanted, found}
    applies: Applicability = NOT_STATED  # its conditions in the caller's environment


async def search_snippets(
    store: GraphStore,
    q: SnippetSearch,
    *,
    vector_filters: bool = True,
    embedding: Awaitable[list[float]] | None = None,
) -> list[SnippetHit]:
    """The k best recallable snippets of the project for a query text and/or structure.

    ``embedding``: the query's vector still being computed (in place of ``q.vector``); the
    words are searched while it is awaited.
    """
    try:
        return await _search(store, q, vector_filters, embedding)
    finally:
        if asyncio.iscoroutine(embedding):  # never awaited when nothing can match
            embedding.close()


async def _search(
    store: GraphStore,
    q: SnippetSearch,
    vector_filters: bool,
    embedding: Awaitable[list[float]] | None,
) -> list[SnippetHit]:
    channels: dict[str, list[Row]] = {}
    matched: dict[str, list[Row]] = {}
    candidates: set[str] | None = None
    if q.structural:
        rows = await _structural(store, q)
        matched = {r["id"]: r["matched"] for r in rows}
        candidates = set(matched)
        channels["structure"] = [{"id": r["id"], "score": r["success_rate"] or 0.0} for r in rows]
    if q.verified:
        verified = {r["id"] for r in await _verified(store, q)}
        candidates = verified if candidates is None else candidates & verified
        if "structure" in channels:
            channels["structure"] = [r for r in channels["structure"] if r["id"] in verified]
    if candidates is not None and not candidates:
        return []
    # The words need no vector: asked at once, while the meaning waits for its vector.
    words = asyncio.ensure_future(_fulltext(store, q, candidates)) if q.text else None
    try:
        if embedding is not None:
            q = replace(q, vector=await embedding)
        if q.vector is not None:
            channels["semantic"] = await _semantic(store, q, candidates, vector_filters)
    except BaseException:
        if words is not None:
            words.cancel()
            await asyncio.gather(words, return_exceptions=True)
        raise
    if words is not None:
        channels["fulltext"] = await words
    return await _hits(store, q, channels, matched)


async def _structural(store: GraphStore, q: SnippetSearch) -> list[Row]:
    facets = {
        "imports": list(dict.fromkeys(q.imports)),
        "calls": list(dict.fromkeys(q.calls)),
        "symbols": list(dict.fromkeys(q.symbols)),
        "files": list(dict.fromkeys(q.files)),
        "names": [q.name] if q.name else [],
        "parameters": list(dict.fromkeys(q.parameters)),
    }
    return await store.run(
        "snippets_by_structure",
        project=q.project,
        **facets,
        needed=sum(len(wanted) for wanted in facets.values()),
        language=q.language,
        kind=q.kind,
        limit=STRUCTURE_LIMIT,
    )


async def _verified(store: GraphStore, q: SnippetSearch) -> list[Row]:
    """Snippets verified in the sandbox, where any environment they passed in is compatible
    with the caller's (no field contradicts it; a runtime version agrees to the minor)."""
    wanted = q.environment or {}
    return await store.run(
        "verified_snippets",
        project=q.project,
        language=q.language,
        kind=q.kind,
        os=wanted.get("os"),
        arch=wanted.get("arch"),
        runtime=wanted.get("runtime"),
        runtime_minor=wanted.get("runtime_minor"),
        limit=STRUCTURE_LIMIT,
    )


def _fetch(q: SnippetSearch) -> int:
    return max(q.k * 4, 20)


async def _semantic(
    store: GraphStore, q: SnippetSearch, candidates: set[str] | None, vector_filters: bool
) -> list[Row]:
    if candidates is not None:
        return await store.run(
            "snippet_similarity", project=q.project, ids=sorted(candidates), vector=q.vector
        )
    bounds = {
        "language_from": q.language or "",
        "language_to": q.language or _LAST_CODE_POINT,
        "kind_from": q.kind or "",
        "kind_to": q.kind or _LAST_CODE_POINT,
    }
    if vector_filters:
        try:
            if not q.language and not q.kind:
                return await store.run(
                    "vector_snippets_any", project=q.project, vector=q.vector, limit=_fetch(q)
                )
            return await store.run(
                "vector_snippets", project=q.project, vector=q.vector, limit=_fetch(q), **bounds
            )
        except Neo4jError:
            # Once the index holds deletions, Neo4j 2026.08 fails a filtered search that
            # matches no live vector (issue 12): the unfiltered index, filtered after.
            COUNTERS.increment("vector_search_fallbacks", index="snippet_embedding")
    return await store.run(
        "vector_snippets_overfetch",
        project=q.project,
        vector=q.vector,
        limit=_fetch(q),
        fetch=_fetch(q) * 10,
        **bounds,
    )


async def _fulltext(store: GraphStore, q: SnippetSearch, candidates: set[str] | None) -> list[Row]:
    terms = lucene_terms(q.text or "")
    if not terms:
        return []
    limit = len(candidates) if candidates is not None else _fetch(q)
    rows = await store.run(
        "fulltext_snippets",
        project=q.project,
        open=terms,
        text=scoped(terms, (project_scope(q.project),)),
        language=q.language,
        kind=q.kind,
        limit=limit,
        fetch=max(limit, _fetch(q)) * 5,
    )
    return [r for r in rows if candidates is None or r["id"] in candidates]


async def _hits(
    store: GraphStore,
    q: SnippetSearch,
    channels: dict[str, list[Row]],
    matched: dict[str, list[Row]],
) -> list[SnippetHit]:
    """Reciprocal rank fusion of the ranking channels; the top k fetched in one trip.

    The structure channel ranks only when there is no query: with one, structure filters
    and meaning and words rank.
    """
    ranking = {"semantic", "fulltext"} & set(channels) or {"structure"}
    candidates = {
        name: [Candidate((q.project, row["id"]), float(row["score"])) for row in rows]
        for name, rows in channels.items()
    }
    weights = {name: 1.0 for name in ranking}
    fused = [f for f in reciprocal_rank(candidates, weights, _RRF_K) if f.contributions]
    # A snippet stale in some environment (a package moved past what it was verified with,
    # or it failed where it used to work) ranks after every fresh one, in its own order.
    # The rows of the top k are fetched beside that check; stale ones are rare, so the
    # fresh ones that move up in their place are most often fetched already.
    ids = [f.key[1] for f in fused]
    stale, found, applies = await asyncio.gather(
        stale_ids(store, q.project, ids),
        snippets_by_id(store, q.project, ids[: q.k]),
        _applicability(store, q, ids),
    )
    fused.sort(key=lambda f: (applies[f.key[1]].status == "no", f.key[1] in stale))
    top = fused[: q.k]
    moved_up = [f.key[1] for f in top if f.key[1] not in ids[: q.k]]
    if moved_up:
        found.update(await snippets_by_id(store, q.project, moved_up))
    return [
        SnippetHit(found[f.key[1]], f.relevance, f.scores, f.ranks, matched.get(f.key[1], []),
                   applies[f.key[1]])
        for f in top
        if f.key[1] in found
    ]  # fmt: skip


async def _applicability(
    store: GraphStore, q: SnippetSearch, ids: list[str]
) -> dict[str, Applicability]:
    """Whether each candidate's conditions hold in the caller's environment: the
    environments it worked in and its requirements (one round trip, only when the caller
    states an environment)."""
    judged = dict.fromkeys(ids, NOT_STATED)
    if q.caller is None or not q.caller.stated() or q.judge is None or not ids:
        return judged
    for row in await store.run("snippet_conditions", project=q.project, ids=ids):
        verdict = q.judge(row)
        judged[row["id"]] = snippet_applies(
            row["worked_in"], verdict.status, verdict.reasons, q.caller
        )
    return judged
