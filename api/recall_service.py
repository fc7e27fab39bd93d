"""Recall as a service: the one path the API, the CLI and the evaluation all take."""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from metisgraph.api.context import UserError
from metisgraph.api.services import Services
from metisgraph.graph.recall import RecallQuery, RecallResult, recall
from metisgraph.ingest.abstraction import sanitize

__all__ = ["MAX_K", "recall_for", "recall_result"]

MAX_K = 100


async def recall_result(
    services: Services, *, project: str, query: str, k: int = 5
) -> RecallResult:
    """Sanitize and embed the question like stored memory, then recall."""
    if not 1 <= k <= MAX_K:
        raise UserError(f"k must be between 1 and {MAX_K}, got {k}")
    if not query.strip():
        raise UserError("query must not be blank")
    # The question is abstracted like stored memory, so placeholders meet placeholders.
    text = sanitize(query).text
    vector = (await services.embedder.aencode([text]))[0].tolist()
    return await recall(
        services.store,
        RecallQuery(project=project, text=text, vector=vector, k=k),
        vector_filters=services.vector_filters,
    )


def _plain(value: Any) -> Any:
    if hasattr(value, "to_native"):
        return value.to_native()
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value


async def recall_for(services: Services, *, project: str, query: str, k: int = 5) -> dict[str, Any]:
    """Recall as plain JSON-able data (the CLI's --json output)."""
    result = await recall_result(services, project=project, query=query, k=k)
    hits = [_plain(asdict(h)) for h in result.hits]
    return {
        "hits": hits,
        "abstained": not hits,
        "reason": None if hits else "no memory in this project matches the question",
        "timings": result.timings,
    }
