"""A question made ready for the graph, as a record is: sanitized, its errors, symbols, words,
tags, tools and environment extracted, the texts to embed chosen, its snippets' judge."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import Any

from metisgraph.graph import (
    PRESETS,
    EnvironmentQuery,
    QuestionVectors,
    RecallRequest,
    RecallSettings,
    Vector,
)
from metisgraph.ingest.code import Verdict
from metisgraph.ingest.embeddings import Embedder
from metisgraph.ingest.environment import extract_environment
from metisgraph.ingest.errors import extract_errors
from metisgraph.ingest.prepare import (
    clean_tags,
    clean_tool,
    question_symbols,
    without_library_frames,
    words,
)
from metisgraph.ingest.question.asked import Question, check
from metisgraph.ingest.records import EnvironmentInput
from metisgraph.ingest.sanitize import sanitize
from metisgraph.ingest.snippets import verdict_for

__all__ = ["PreparedQuestion", "environment_query", "prepare_question"]


@dataclass(frozen=True)
class PreparedQuestion:
    """The request for the graph, and the texts whose vectors it still needs."""

    request: RecallRequest
    texts: tuple[str, ...]  # the whole question; its first line and its error, when there
    title_at: int | None
    error_at: int | None

    async def vectors(self, embedder: Embedder) -> QuestionVectors:
        """The question's vectors, embedded in the questions' own lane; remembered for the
        projects asked only (one tenant's questions never warm another's)."""
        tenant = "\n".join(sorted(self.request.projects))
        found = await embedder.aencode_queries(list(self.texts), tenant=tenant)

        def at(index: int | None) -> Vector | None:
            return None if index is None else Vector(found[index].tolist())

        return QuestionVectors(Vector(found[0].tolist()), at(self.title_at), at(self.error_at))


def prepare_question(q: Question) -> PreparedQuestion:
    """Check the question (QuestionError names the field) and make it ready for the graph.

    The channels that need no vector can start with the request at once; the others wait
    for ``PreparedQuestion.vectors``.
    """
    filters = replace(q.filters, since=_aware(q.filters.since), until=_aware(q.filters.until))
    q = replace(q, filters=filters)
    check(q)
    # The question is sanitized like stored memory, so placeholders meet placeholders.
    text = sanitize(q.query).text
    error = sanitize(q.error).text if q.error else ""
    full = f"{text}\n{error}" if error else text
    errors = extract_errors(full)
    first_line = text.strip().splitlines()[0] if text.strip() else text
    texts = [full]
    title_at = error_at = None
    if first_line != text.strip():
        title_at = len(texts)
        texts.append(first_line)
    if errors:
        error_at = len(texts)
        texts.append(f"{errors[0].kind}: {errors[0].template}")
    symbols = question_symbols(text, error, errors)
    request = RecallRequest(
        projects=q.all_projects,
        text=full,
        k=q.k,
        error_keys=tuple(e.key for e in errors),
        error_kinds=tuple(dict.fromkeys(e.kind for e in errors)),
        symbols=tuple(symbols),
        symbol_weights=tuple(symbols.values()),
        tags=tuple(clean_tags(q.tags)),
        words=tuple(words(text)),
        tools=tuple(clean_tool(t) for t in q.tools),
        environment=environment_query(q.environment),
        filters=q.filters,
        exclude=q.exclude,
        settings=_settings(q),
        lexical=without_library_frames(full),
        judge=_Judge(q.environment),
        conflicts=q.conflicts,
        steps=q.steps,
    )
    return PreparedQuestion(request, tuple(texts), title_at, error_at)


def _settings(q: Question) -> RecallSettings:
    """The preset's (or the given) settings, with the question's own abstention threshold."""
    settings = q.settings or PRESETS[q.preset]
    if q.abstain_below is None:
        return settings
    return replace(settings, abstain_below=q.abstain_below)


def _aware(moment: datetime | None) -> datetime | None:
    """A time without a zone is UTC, as at ingest."""
    return moment.replace(tzinfo=UTC) if moment and moment.tzinfo is None else moment


def environment_query(env: EnvironmentInput | None) -> EnvironmentQuery | None:
    """The caller's environment, its names settled as a stored one's are (OS, architecture,
    runtime, packages), so it meets them."""
    if env is None:
        return None
    settled = extract_environment((), env)
    if settled is None:
        return None
    packages = tuple(sorted(settled.packages.items()))
    return EnvironmentQuery(
        os=settled.os, runtime=settled.runtime, runtime_version=settled.runtime_version,
        packages=packages, arch=settled.arch, os_version=settled.os_version,
    )  # fmt: skip


@dataclass(frozen=True)
class _Judge:
    """Whether a snippet across the bridge can run in the caller's environment."""

    environment: EnvironmentInput | None

    def __call__(self, snippet: Mapping[str, Any]) -> Verdict:
        return verdict_for(snippet, self.environment)
