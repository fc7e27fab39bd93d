"""Recall as a service: the one path the API, the CLI and the evaluation all take."""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import Any

from metisgraph.api.context import UserError
from metisgraph.api.services import Services
from metisgraph.graph import (
    ALL_OUTCOMES,
    PRESETS,
    RECALLABLE_REVIEW,
    EnvironmentQuery,
    RecallFilters,
    RecallOutcome,
    RecallRequest,
    Vector,
    lexical_channels,
    project_scope,
    recall,
)
from metisgraph.ingest import EnvironmentInput
from metisgraph.ingest.environment import normalize_package
from metisgraph.ingest.errors import extract_errors
from metisgraph.ingest.prepare import (
    clean_tags,
    clean_tool,
    question_symbols,
    without_library_frames,
    words,
)
from metisgraph.ingest.sanitize import sanitize
from metisgraph.ingest.snippets import verdict_for

__all__ = ["MAX_K", "Question", "RecallAnswer", "answer", "recall_for"]

MAX_K = 100
MAX_PROJECTS = 20
# A question with a pasted trace or log is long; megabytes are a mistake (or an attack):
# sanitizing them alone would hold the server for seconds.
MAX_QUESTION_CHARS = 200_000


@dataclass(frozen=True)
class Question:
    """What a caller asks: the question, where to look, what they know, what to keep out."""

    project: str
    query: str
    k: int = 5
    projects: tuple[str, ...] = ()  # more readable projects (cross-project recall)
    error: str | None = None
    environment: EnvironmentInput | None = None
    tags: tuple[str, ...] = ()
    tools: tuple[str, ...] = ()
    outcomes: tuple[str, ...] | None = None
    review: tuple[str, ...] | None = None
    since: datetime | None = None
    until: datetime | None = None
    min_confidence: float | None = None
    kinds: tuple[str, ...] | None = None
    preset: str = "balanced"
    exclude: frozenset[str] = frozenset()

    @property
    def all_projects(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys((self.project, *self.projects)))


@dataclass
class RecallAnswer:
    outcome: RecallOutcome
    snippets: dict[tuple[str, str], list[dict[str, Any]]] = field(default_factory=dict)


def _check(q: Question) -> None:
    if not 1 <= q.k <= MAX_K:
        raise UserError(f"k must be between 1 and {MAX_K}, got {q.k}")
    if not q.query.strip():
        raise UserError("query must not be blank")
    for name, text in (("query", q.query), ("context.error", q.error or "")):
        if len(text) > MAX_QUESTION_CHARS:
            raise UserError(f"{name}: at most {MAX_QUESTION_CHARS} characters, got {len(text)}")
    if len(q.all_projects) > MAX_PROJECTS:
        raise UserError(f"at most {MAX_PROJECTS} projects per recall")
    if q.preset not in PRESETS:
        raise UserError(f"unknown preset {q.preset!r}; known: {', '.join(PRESETS)}")
    if q.since and q.until and q.since > q.until:
        raise UserError("filter.since is after filter.until")
    bad = set(q.outcomes or ()) - set(ALL_OUTCOMES)
    if bad:
        raise UserError(f"unknown outcome(s) {sorted(bad)}; known: {', '.join(ALL_OUTCOMES)}")
    if q.min_confidence is not None and not 0.0 <= q.min_confidence <= 1.0:
        raise UserError(f"filter.minConfidence must be between 0 and 1, got {q.min_confidence}")
    unknown = set(q.review or ()) - set(RECALLABLE_REVIEW)
    if unknown:
        known = ", ".join(RECALLABLE_REVIEW)
        raise UserError(
            f"unknown or unrecallable review status(es) {sorted(unknown)}; known: {known}"
            " (rejected memories never return)"
        )


def _aware(moment: datetime | None) -> datetime | None:
    """A time without a zone is UTC, as at ingest."""
    return moment.replace(tzinfo=UTC) if moment and moment.tzinfo is None else moment


def _filters(q: Question) -> RecallFilters:
    base = RecallFilters()
    return RecallFilters(
        outcomes=q.outcomes or base.outcomes,
        review=tuple(r for r in (q.review or RECALLABLE_REVIEW) if r != "rejected"),
        since=q.since or base.since,
        until=q.until or base.until,
        min_confidence=q.min_confidence or 0.0,
        kinds=q.kinds,
    )


def _environment(env: EnvironmentInput | None) -> EnvironmentQuery | None:
    if env is None:
        return None
    packages = tuple((normalize_package(n), v) for n, v in sorted(env.packages.items()))
    return EnvironmentQuery(env.os, env.runtime, env.runtime_version, packages)


@dataclass(frozen=True)
class _Unembedded:
    """A request before its vectors, with the texts to embed and where each vector goes."""

    request: RecallRequest
    texts: list[str]
    title_at: int | None
    error_at: int | None

    def with_vectors(self, vectors: Any) -> RecallRequest:
        def at(index: int | None) -> Vector | None:
            return None if index is None else Vector(vectors[index].tolist())

        return replace(
            self.request,
            vector=Vector(vectors[0].tolist()),
            title_vector=at(self.title_at),
            error_vector=at(self.error_at),
        )


def _request(q: Question) -> _Unembedded:
    """The request without its vectors (the channels that need none can start at once)."""
    # The question is sanitized like stored memory, so placeholders meet placeholders.
    text = sanitize(q.query).text
    error = sanitize(q.error).text if q.error else ""
    full = f"{text}\n{error}" if error else text
    errors = extract_errors(full)
    first_line = text.strip().splitlines()[0] if text.strip() else text
    to_embed = [full]
    title_at = error_at = None
    if first_line != text.strip():
        title_at = len(to_embed)
        to_embed.append(first_line)
    if errors:
        error_at = len(to_embed)
        to_embed.append(f"{errors[0].kind}: {errors[0].template}")
    symbols = question_symbols(text, error, errors)
    request = RecallRequest(
        projects=q.all_projects,
        text=full,
        vector=[],
        scopes=tuple(project_scope(p) for p in q.all_projects),
        k=q.k,
        error_keys=tuple(e.key for e in errors),
        symbols=tuple(symbols),
        symbol_weights=tuple(symbols.values()),
        tags=tuple(clean_tags(q.tags)),
        words=tuple(words(text)),
        tools=tuple(clean_tool(t) for t in q.tools),
        environment=_environment(q.environment),
        filters=_filters(q),
        exclude=q.exclude,
        settings=PRESETS[q.preset],
        lexical=without_library_frames(full),
    )
    return _Unembedded(request, to_embed, title_at, error_at)


async def answer(services: Services, q: Question) -> RecallAnswer:
    """Recall, then the snippets across the bridge with their verdict for the caller."""
    q = replace(q, since=_aware(q.since), until=_aware(q.until))
    _check(q)
    pending = _request(q)
    # The channels that need no vector are asked while the question is embedded: the model
    # keeps one core, the server answers on the other.
    lexical = asyncio.ensure_future(lexical_channels(services.store, pending.request))
    try:
        started = time.perf_counter()
        vectors = await services.embedder.aencode_queries(pending.texts)
        embedded = (time.perf_counter() - started) * 1000
    except BaseException:
        lexical.cancel()
        await asyncio.gather(lexical, return_exceptions=True)
        raise
    request = pending.with_vectors(vectors)
    outcome = await recall(
        services.store, request, in_index=services.vector_filters, lexical=lexical
    )
    outcome.timings = {"embed_ms": embedded, **outcome.timings}
    snippets = {(h.episode["project"], h.episode["id"]): h.snippets for h in outcome.hits}
    for found in snippets.values():
        for snippet in found:
            verdict = verdict_for(snippet, q.environment)
            snippet["compatible"] = verdict.status
            snippet["reasons"] = list(verdict.reasons)
    return RecallAnswer(outcome, snippets)


def _plain(value: Any) -> Any:
    if hasattr(value, "to_native"):
        return value.to_native()
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items() if k != "embedding"}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value


async def recall_for(services: Services, q: Question) -> dict[str, Any]:
    """Recall as plain JSON-able data (the CLI's --json output)."""
    result = await answer(services, q)
    hits = []
    for hit in result.outcome.hits:
        key = (hit.episode["project"], hit.episode["id"])
        hits.append(
            {
                "episode": _plain(hit.episode),
                "score": hit.score,
                "task": _plain(hit.task),
                "why": {
                    "channels": hit.channels,
                    "ranks": hit.ranks,
                    "trust": hit.trust,
                    "contributions": hit.contributions,
                    "relevance": hit.relevance,
                    "dropped": hit.dropped,
                },
                "errors": hit.errors,
                "snippets": _plain(result.snippets.get(key, [])),
                "flagged": hit.flagged,
            }
        )
    return {
        "hits": hits,
        "conflicts": [vars(c) for c in result.outcome.conflicts],
        "abstained": result.outcome.abstained,
        "reason": result.outcome.reason,
        "warnings": [vars(w) for w in result.outcome.warnings],
        "timings": result.outcome.timings,
    }
