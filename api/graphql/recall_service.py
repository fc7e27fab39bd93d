"""Recall as a service: the one path the API, the CLI and the evaluation all take.

One way down: ingest prepares the question (``metisgraph.ingest.question``), the graph
answers it (``metisgraph.graph.recall``) with what the API shows. Here a question that
cannot be asked becomes the caller's error; who may read which project is checked by the
caller of ``answer`` (the resolver, the CLI).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from dataclasses import replace
from typing import Any, TypeVar

import anyio

from metisgraph.api.graphql.context import UserError
from metisgraph.api.metrics import RECALL_STAGE_SECONDS
from metisgraph.api.services import Services
from metisgraph.graph import (
    RecallOutcome,
    RecallRequest,
    abstention_gates,
    project_rankers,
    recall,
)
from metisgraph.ingest.question import Question, QuestionError, prepare_question

__all__ = ["answer", "recall_for"]

_T = TypeVar("_T")


async def answer(
    services: Services, question: Question, *, embedded: asyncio.Event | None = None
) -> RecallOutcome:
    """Recall the experience that helps with a question: hits, conflicts, warnings. Its
    stage timings go to /metrics (the process's own figures, never one caller's answer).
    ``embedded`` is set once the question's vectors are done (or recall stopped before),
    for a caller whose own embedding should not go before them on the questions' lane."""
    try:
        return await _answer(services, question, embedded)
    finally:
        if embedded is not None:
            embedded.set()


async def _then_set(work: Awaitable[_T], event: asyncio.Event | None) -> _T:
    try:
        return await work
    finally:
        if event is not None:
            event.set()


async def _answer(
    services: Services, question: Question, embedded: asyncio.Event | None
) -> RecallOutcome:
    try:
        # Redacting and parsing a long question (a pasted trace, up to MAX_QUESTION_CHARS)
        # takes a while: in a worker thread, the server goes on answering everyone else.
        prepared = await anyio.to_thread.run_sync(prepare_question, question)
    except QuestionError as error:
        raise UserError(str(error)) from None
    # Embedding while the projects' abstention thresholds are read (cached: rarely a read).
    vectors = asyncio.ensure_future(_then_set(prepared.vectors(services.embedder), embedded))
    try:
        request = await _gated(services, prepared.request)
    except BaseException:
        vectors.cancel()
        await asyncio.gather(vectors, return_exceptions=True)
        raise
    outcome = await recall(services.store, request, vectors, in_index=services.vector_filters)
    for name, ms in outcome.timings.items():
        RECALL_STAGE_SECONDS.labels(name.removesuffix("_ms")).observe(ms / 1000)
    return outcome


async def _gated(services: Services, request: RecallRequest) -> RecallRequest:
    """The request with each project's measured abstention threshold (graph/abstention.py),
    unless it set its own, and under ``ranker: learned`` each project's own ranker."""
    if request.settings.ranker == "learned":  # the projects' own rankers (cached: rarely a read)
        request = replace(request, rankers=await project_rankers(services.store, request.projects))
    if request.settings.abstain_below is not None:
        return request
    gates = await abstention_gates(
        services.store,
        request.projects,
        services.embedder.aencode,
        in_index=services.vector_filters,
    )
    levels = {p: (g.threshold, g.code_threshold, g.source) for p, g in gates.items()}
    return replace(request, gates=levels)


def _plain(value: Any) -> Any:
    if hasattr(value, "to_native"):
        return value.to_native()
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items() if k != "embedding"}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value


async def recall_for(services: Services, question: Question) -> dict[str, Any]:
    """Recall as plain JSON-able data (the CLI's --json output)."""
    outcome = await answer(services, question)
    hits = [
        {
            "episode": _plain(hit.episode),
            "score": hit.score,
            "task": _plain(hit.task),
            "why": {
                "channels": hit.channels,
                "ranks": hit.ranks,
                "trust": hit.trust,
                "contributions": hit.contributions,
                "evidence": hit.evidence,
                "relevance": hit.relevance,
                "dropped": hit.dropped,
            },
            "errors": hit.errors,
            "snippets": _plain(hit.snippets),
            "flagged": hit.flagged,
            "rank": hit.rank,
            "duplicates": hit.duplicates,
        }
        for hit in outcome.hits
    ]
    patterns = [
        {
            "pattern": _plain(p.pattern),
            "score": p.score,
            "rank": p.rank,
            "members": p.members,
            "above": p.best_member,
            "recommends": _plain(p.snippet),
        }
        for p in outcome.patterns
    ]
    return {
        "hits": hits,
        "patterns": patterns,
        "conflicts": [vars(c) for c in outcome.conflicts],
        "abstained": outcome.abstained,
        "reason": outcome.reason,
        "abstention": vars(outcome.gate) if outcome.gate else None,
        "warnings": [vars(w) for w in outcome.warnings],
        "timings": outcome.timings,
    }
