"""Recall's two ways of filtering vector search against the real Neo4j and model: inside the
index (Cypher 25 SEARCH ... WHERE) and over-fetching then widening (servers before 2026.02).
Both must find the same memories, however few pass the caller's filters."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import pytest
from counting import CountingStore
from profiles import db_hits

from metisgraph.graph import GraphStore, QuestionVectors, RecallFilters, RecallRequest, recall
from metisgraph.graph.channels import LIST_FILLER
from metisgraph.graph.conflicts import find_conflicts
from metisgraph.graph.cypher import query
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


QUESTION = "memory keeps growing until the process is killed"


def _request(project: str, filters: RecallFilters) -> RecallRequest:
    return RecallRequest(projects=(project,), text=QUESTION, k=3, filters=filters)


def _vectors(embedder: Any) -> QuestionVectors:
    return QuestionVectors(embedder.encode([QUESTION])[0].tolist())


@pytest.mark.slow
async def test_in_index_and_overfetch_find_the_same_filtered_memories(
    store: Any, embedder: Any, project: str
) -> None:
    await _load(store, embedder, project)
    filters = RecallFilters(outcomes=("success",))
    vectors = _vectors(embedder)
    in_index = await recall(store, _request(project, filters), vectors, in_index=True)
    overfetch = await recall(store, _request(project, filters), vectors, in_index=False)
    found = [h.episode["id"] for h in in_index.hits]
    assert sorted(found) == ["m28", "m48", "m8"]  # every success, and only successes
    # The three differ only by their case number: the order among them is a near tie.
    assert sorted(h.episode["id"] for h in overfetch.hits) == sorted(found)
    assert all(h.episode["outcome"] == "success" for h in overfetch.hits)


@pytest.mark.slow
async def test_default_filters_return_the_nearest_memories_by_either_path(
    store: Any, embedder: Any, project: str
) -> None:
    await _load(store, embedder, project)
    vectors, everything = _vectors(embedder), _request(project, RecallFilters())
    in_index = await recall(store, everything, vectors, in_index=True)
    overfetch = await recall(store, everything, vectors, in_index=False)
    for outcome in (in_index, overfetch):  # fifteen leaks, near ties: any three of them
        found = [h.episode["id"] for h in outcome.hits]
        assert len(found) == 3 and all(int(i[1:]) % len(TOPICS) == 0 for i in found), found


async def _until(done: Callable[[], bool], seconds: float = 10.0) -> None:
    """Wait until `done()` holds, or the time is up (a round trip is slow on a busy machine)."""
    for _ in range(int(seconds / 0.05)):
        if done():
            return
        await asyncio.sleep(0.05)


async def test_channels_asked_before_the_vectors_give_the_same_answer(
    store: Any, embedder: Any, project: str
) -> None:
    """The full-text and graph channels read no vector: asked while the vectors are computed,
    the answer is the same as with the vectors given."""
    await _load(store, embedder, project)
    request, vectors = _request(project, RecallFilters()), _vectors(embedder)
    computed = asyncio.get_running_loop().create_future()
    counting = CountingStore(store)
    asked = asyncio.ensure_future(recall(counting, request, computed, speculate=False))
    await _until(lambda: counting.sent >= 2)
    # The projects' clocks (where the cold tier starts), then the channels that need no
    # vector, asked meanwhile.
    assert counting.sent == 2
    computed.set_result(vectors)
    apart = await asked
    together = await recall(store, request, vectors)
    assert [h.episode["id"] for h in apart.hits] == [h.episode["id"] for h in together.hits]
    assert [h.channels for h in apart.hits] == [h.channels for h in together.hits]
    assert any("fulltext" in h.channels for h in apart.hits)


class _Expanding(GraphStore):
    """The store, keeping the episodes each of recall's expansions asked for."""

    asked: list[set[tuple[str, str]]]

    async def run_text(
        self, text: str, params: dict[str, Any] | None = None, *, read: bool = False
    ) -> list[dict[str, Any]]:
        if params and "linked" in params and "AS fixed_by" in text:  # recall_expand
            # filled to one length with a key no episode holds; after the fusion, the
            # shortlist less the keys read early ($done)
            keys, done = params["keys"], params.get("done", [])
            asked = {(k["project"], k["id"]) for k in keys if k["id"] != LIST_FILLER}
            self.asked.append(asked - {(k["project"], k["id"]) for k in done})
        return await super().run_text(text, params, read=read)


async def test_the_lexical_shortlist_expanded_early_leaves_the_answer_as_it_was(
    store: Any, embedder: Any, project: str
) -> None:
    """An idle server expands the full-text channels' own shortlist while the question is
    embedded and the vector channels are asked; the expansion after them reads only the
    rest, and the answer is the one recall gives without it: the same hits in the same
    order, each with the same channels, evidence and snippets, and the same conflicts."""
    await _load(store, embedder, project)
    request, vectors = RecallRequest(projects=(project,), text=QUESTION, k=5), _vectors(embedder)
    plain = await recall(store, request, vectors, speculate=False)
    expanding = _Expanding(store.driver, store.database)
    expanding.asked = []
    computed = asyncio.get_running_loop().create_future()
    asked = asyncio.ensure_future(recall(expanding, request, computed, speculate=True))
    await _until(lambda: len(expanding.asked) >= 1)
    assert len(expanding.asked) == 1  # read before the question's vectors are known
    computed.set_result(vectors)
    early = await asked
    assert [vars(h) for h in early.hits] == [vars(h) for h in plain.hits]
    assert early.conflicts == plain.conflicts and early.candidates == plain.candidates
    first, *after = expanding.asked
    hits = {(h.episode["project"], h.episode["id"]) for h in plain.hits}
    assert hits & first  # the full-text channels found some of the hits
    for later in after:  # what was read early is not read again
        assert not (later & first)
    assert hits <= first.union(*after)


@pytest.mark.slow
async def test_a_recall_without_the_steps_answers_the_rest_the_same(
    store: Any, embedder: Any, project: str
) -> None:
    """A caller that shows no neighbouring steps (planContext) is spared their lookups; every
    other part of each hit is what a caller that shows them gets."""
    steps = [
        {"project": project, "id": f"s{n}", "task_id": "t1", "step": n, "outcome": outcome,
         "summary": f"{TOPICS[0]} (step {n})"}
        for n, outcome in enumerate(("failure", "failure", "success"))
    ]  # fmt: skip
    items = [validate_record(raw, SourceRef("test", n)) for n, raw in enumerate(steps, 1)]
    assert all(isinstance(i, Parsed) for i in items)
    await Ingestor(store, embedder).ingest(items)
    vectors = _vectors(embedder)
    shown = await recall(store, _request(project, RecallFilters()), vectors)
    request = RecallRequest(projects=(project,), text=QUESTION, k=3, steps=False)
    skipped = await recall(store, request, vectors)
    by_id = {h.episode["id"]: h for h in shown.hits}
    assert sorted(by_id) == ["s0", "s1", "s2"]
    assert by_id["s1"].previous["id"] == "s0" and by_id["s1"].next["id"] == "s2"
    assert all(h.previous is None and h.next is None for h in skipped.hits)
    for hit in shown.hits:
        hit.previous = hit.next = None
    assert [vars(h) for h in skipped.hits] == [vars(h) for h in shown.hits]


class _Reading(GraphStore):
    """The store, keeping every row its reads send back."""

    rows: list[dict[str, Any]]

    async def run_text(
        self, text: str, params: dict[str, Any] | None = None, *, read: bool = False
    ) -> list[dict[str, Any]]:
        found = await super().run_text(text, params, read=read)
        self.rows.extend(found)
        return found


def _vectors_in(value: Any) -> int:
    """How many embeddings (long lists of numbers) a value read back holds."""
    if isinstance(value, list):
        if len(value) >= 64 and all(isinstance(v, float) for v in value):
            return 1
        return sum(_vectors_in(v) for v in value)
    if isinstance(value, dict):
        return sum(_vectors_in(v) for v in value.values())
    return 0


@pytest.mark.slow
async def test_recall_reads_no_vector_and_finds_the_conflicts_the_vectors_give(
    store: Any, embedder: Any, project: str
) -> None:
    """How alike two hits are decides a conflict: the server computes that one number for
    each pair of the shortlist beside its expansion, so no vector (384 numbers a row, most
    of what recall read) comes back; the conflicts are those the hits' own vectors give."""
    await _load(store, embedder, project)  # the leak: 12 failures and 3 successes alike
    reading = _Reading(store.driver, store.database)
    reading.rows = []
    request = RecallRequest(projects=(project,), text=QUESTION, k=10)
    outcome = await recall(reading, request, _vectors(embedder))
    assert _vectors_in(reading.rows) == 0
    rows = await store.run("eval_episode_vectors", project=project)
    stored = {r["id"]: r["embedding"] for r in rows}
    episodes = [{**h.episode, "embedding": stored[h.episode["id"]]} for h in outcome.hits]
    expected = find_conflicts(episodes, request.settings.conflict_similarity)
    assert any("opposite outcomes" in c.reason for c in expected)
    assert [(c.a, c.b, c.reason) for c in outcome.conflicts] == [
        (c.a, c.b, c.reason) for c in expected
    ]
    for got, want in zip(outcome.conflicts, expected, strict=True):
        assert got.similarity == pytest.approx(want.similarity, abs=1e-5)


async def test_the_similarities_read_reads_each_vector_once(
    store: Any, embedder: Any, project: str
) -> None:
    """How alike the shortlist's pairs are is computed beside every recall's expansion: its
    cost (db hits) grows with the episodes asked, not with their pairs (30 episodes, 435
    pairs: reading two nodes' vectors a pair read each one 29 times)."""
    await _load(store, embedder, project)
    keys = [{"project": project, "id": f"m{n}"} for n in range(30)]
    text = query("episode_similarities").filled(keys=query("recall_keys").text).text
    body = text.removeprefix("CYPHER 25\n")
    async with store.driver.session(database=store.database) as session:
        result = await session.run(f"CYPHER 25 PROFILE {body}", {"keys": keys, "linked": []})
        rows = [r.data() async for r in result]
        summary = await result.consume()
    assert len(rows[0]["pairs"]) == 30 * 29 // 2
    assert db_hits(summary.profile) <= 5 * len(keys)
