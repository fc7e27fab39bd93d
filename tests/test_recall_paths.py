"""Recall's two ways of filtering vector search against the real Neo4j and model: inside the
index (Cypher 25 SEARCH ... WHERE) and over-fetching then widening (servers before 2026.02).
Both must find the same memories, however few pass the caller's filters."""

from __future__ import annotations

from typing import Any

import pytest

from metisgraph.graph.channels import RecallFilters, RecallRequest, project_scope
from metisgraph.graph.recall import recall
from metisgraph.ingest.adapters.base import Parsed, SourceRef, validate_record
from metisgraph.ingest.pipeline import Ingestor

pytestmark = pytest.mark.anyio

TOPICS = [
    "the worker leaks memory until the OOM killer ends it",
    "connection pool exhausted under load, requests time out",
    "disk full on the build agent, the cache was never pruned",
    "TLS handshake fails after the certificate rotated",
]


async def _load(store: Any, embedder: Any, project: str) -> None:
    raws = []
    for n in range(60):  # 57 failures crowd the nearest neighbours; 3 successes hide behind
        outcome = "success" if n % 20 == 8 else "failure"
        summary = f"{TOPICS[n % len(TOPICS)]} (case {n})"
        raws.append({"project": project, "id": f"m{n}", "summary": summary, "outcome": outcome})
    items = [validate_record(raw, SourceRef("test", n)) for n, raw in enumerate(raws, 1)]
    assert all(isinstance(i, Parsed) for i in items)
    await Ingestor(store, embedder).ingest(items)


def _request(embedder: Any, project: str, filters: RecallFilters) -> RecallRequest:
    text = "memory keeps growing until the process is killed"
    return RecallRequest(
        projects=(project,),
        text=text,
        vector=embedder.encode([text])[0].tolist(),
        scopes=(project_scope(project),),
        k=3,
        filters=filters,
    )


async def test_in_index_and_overfetch_find_the_same_filtered_memories(
    store: Any, embedder: Any, project: str
) -> None:
    await _load(store, embedder, project)
    filters = RecallFilters(outcomes=("success",))
    in_index = await recall(store, _request(embedder, project, filters), in_index=True)
    overfetch = await recall(store, _request(embedder, project, filters), in_index=False)
    found = [h.episode["id"] for h in in_index.hits]
    assert sorted(found) == ["m28", "m48", "m8"]  # every success, and only successes
    # The three differ only by their case number: the order among them is a near tie.
    assert sorted(h.episode["id"] for h in overfetch.hits) == sorted(found)
    assert all(h.episode["outcome"] == "success" for h in overfetch.hits)


async def test_default_filters_return_the_nearest_memories_by_either_path(
    store: Any, embedder: Any, project: str
) -> None:
    await _load(store, embedder, project)
    in_index = await recall(store, _request(embedder, project, RecallFilters()), in_index=True)
    overfetch = await recall(store, _request(embedder, project, RecallFilters()), in_index=False)
    for outcome in (in_index, overfetch):  # fifteen leaks, near ties: any three of them
        found = [h.episode["id"] for h in outcome.hits]
        assert len(found) == 3 and all(int(i[1:]) % len(TOPICS) == 0 for i in found), found


async def test_channels_asked_before_the_vectors_give_the_same_answer(
    store: Any, embedder: Any, project: str
) -> None:
    """The full-text and graph channels read no vector: asked early, the answer is the same."""
    from dataclasses import replace

    from metisgraph.graph.channels import lexical_channels

    await _load(store, embedder, project)
    whole = _request(embedder, project, RecallFilters())
    early = lexical_channels(store, replace(whole, vector=[]))  # the vector is not read
    together = await recall(store, whole)
    apart = await recall(store, whole, lexical=early)
    assert [h.episode["id"] for h in apart.hits] == [h.episode["id"] for h in together.hits]
    assert [h.channels for h in apart.hits] == [h.channels for h in together.hits]
    assert any("fulltext" in h.channels for h in apart.hits)
