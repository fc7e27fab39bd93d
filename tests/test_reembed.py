"""The embedding model stamped on the store; another model refused, or everything re-embedded.

Stand-in models (meaning is irrelevant: which model made which vector is the point) on a
Neo4j of their own, since a stamp and a re-embedding are about the whole store.
"""

from __future__ import annotations

import importlib
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from embedders import HashEmbedder

from metisgraph.graph import ModelCheck, apply_schema, check_model, read_stamp
from metisgraph.ingest.adapters import Parsed
from metisgraph.ingest.adapters.base import SourceRef
from metisgraph.ingest.pipeline import Ingestor
from metisgraph.ingest.records import EpisodeRecord, TaskRecord
from metisgraph.ingest.reembed import reembed

pytestmark = [pytest.mark.anyio, pytest.mark.slow(15)]

TRACE = """Traceback (most recent call last):
  File "/srv/app/worker.py", line 42, in run
    cache.put(key, value)
MemoryError: cannot allocate 4096 bytes"""
VECTORS = ("embedding", "title_embedding", "context_embedding")  # the last two: none


def _records(project: str) -> list[Parsed]:
    start = datetime(2025, 6, 1, tzinfo=UTC)
    ref = SourceRef("memory.jsonl")
    items = [Parsed(TaskRecord(project=project, id="task-1", goal="stop the worker leaking"), ref)]
    steps = [
        {"title": "Worker memory", "summary": "The worker's memory grows for days"},
        {"summary": "It dies with a MemoryError", "error": TRACE},
        {
            "summary": "Bounded the cache",
            "outcome": "success",
            "snippets": [{"code": "cache = LRU(maxsize=1024)\n", "language": "python"}],
        },
    ]
    for n, step in enumerate(steps):
        record = EpisodeRecord(project=project, id=f"ep-{n}", task_id="task-1", step=n,
                               created_at=start + timedelta(minutes=n), **step)  # fmt: skip
        items.append(Parsed(record, ref))
    alone = EpisodeRecord(project=project, id="ep-alone", summary="Restarted the node")
    return [*items, Parsed(alone, ref)]


async def _vectors(store: Any, project: str) -> dict[tuple[str, str, str], list[float]]:
    rows = await store.run_text(
        "MATCH (n {project: $p}) WHERE n.embedding IS NOT NULL "
        "RETURN labels(n)[0] AS label, coalesce(n.id, n.key, n.episode + '/' + n.of) AS id, "
        "properties(n) AS props",
        {"p": project},
        read=True,
    )
    return {
        (r["label"], r["id"], name): r["props"][name]
        for r in rows
        for name in VECTORS
        if r["props"].get(name) is not None
    }


def _assert_same(got: dict[Any, list[float]], wanted: dict[Any, list[float]]) -> None:
    assert got.keys() == wanted.keys()
    for key, vector in got.items():
        assert vector == pytest.approx(wanted[key], abs=1e-6), key


async def _ingest(store: Any, embedder: HashEmbedder, project: str) -> None:
    summary = await Ingestor(store, embedder, batch_size=2).ingest(_records(project))
    assert summary.refused == 0 and summary.written == 4


async def test_another_model_is_refused_and_a_reembedding_equals_an_ingest_with_it(
    scratch_store: Any,
) -> None:
    old, new = HashEmbedder("old"), HashEmbedder("new")
    await apply_schema(scratch_store, old.dimension)
    assert await check_model(scratch_store, old.stamp()) is ModelCheck.stamped
    await _ingest(scratch_store, old, "mem")
    assert await check_model(scratch_store, old.stamp()) is ModelCheck.same
    assert await check_model(scratch_store, new.stamp()) is ModelCheck.changed

    seen: list[tuple[str, int, int]] = []
    report = await reembed(scratch_store, new, on_progress=lambda *p: seen.append(p))
    assert report.done == {"episodes": 4, "snippets": 1, "errors": 1, "patterns": 0}
    assert ("episodes", 4, 4) in seen and report.contexts == 3
    assert (await read_stamp(scratch_store)).current == new.stamp()
    assert await check_model(scratch_store, new.stamp()) is ModelCheck.same

    # What a re-embedding stores is what an ingest with the new model stores, vector by vector.
    await _ingest(scratch_store, new, "fresh")
    reembedded, fresh = await _vectors(scratch_store, "mem"), await _vectors(scratch_store, "fresh")
    # 4 episodes, 1 snippet, 1 error; and the episodes' 8 vectors (4 texts, 1 title,
    # 3 contexts) as EpisodeVector nodes, the title and context ones only there (issue 23)
    assert len(reembedded) == 14
    _assert_same(reembedded, fresh)
    marks = await scratch_store.run_text(
        "MATCH (n) WHERE n._embedded_with IS NOT NULL RETURN count(n) AS n", read=True
    )
    assert marks[0]["n"] == 0


class _Stops(HashEmbedder):
    """The new model, failing on its second batch: a re-embedding stopped part way."""

    def encode(self, texts: Any) -> Any:
        if len(self.calls) == 1:
            self.calls.append(0)
            raise RuntimeError("stopped")
        return super().encode(texts)


async def test_a_stopped_reembedding_is_seen_and_resumes_where_it_stopped(
    scratch_store: Any,
) -> None:
    old = HashEmbedder("old")
    await apply_schema(scratch_store, old.dimension)
    await check_model(scratch_store, old.stamp())
    for project in ("a", "b", "c"):
        await _ingest(scratch_store, old, project)

    # The module, not the function that metisgraph.ingest exports under the same name.
    module = importlib.import_module("metisgraph.ingest.reembed")

    page, module._PAGE = module._PAGE, 5  # type: ignore[attr-defined]
    try:
        with pytest.raises(RuntimeError, match="stopped"):
            await reembed(scratch_store, _Stops("new"))
        assert await check_model(scratch_store, old.stamp()) is ModelCheck.interrupted
        new = HashEmbedder("new")
        assert await check_model(scratch_store, new.stamp()) is ModelCheck.interrupted
        seen: list[tuple[str, int, int]] = []
        await reembed(scratch_store, new, on_progress=lambda *p: seen.append(p))
    finally:
        module._PAGE = page  # type: ignore[attr-defined]
    assert ("episodes", 0, 7) in seen  # 12 episodes, 5 done before the stop
    assert await check_model(scratch_store, new.stamp()) is ModelCheck.same
    await _ingest(scratch_store, new, "fresh")
    fresh = await _vectors(scratch_store, "fresh")
    for project in ("a", "b", "c"):
        _assert_same(await _vectors(scratch_store, project), fresh)


async def test_a_model_of_another_dimension_gets_indexes_of_its_dimension(
    scratch_store: Any,
) -> None:
    old, small = HashEmbedder("old"), HashEmbedder("small", dimension=16)
    await apply_schema(scratch_store, old.dimension)
    await check_model(scratch_store, old.stamp())
    await _ingest(scratch_store, old, "mem")
    report = await reembed(scratch_store, small)
    assert "episode_vectors" in report.dropped_indexes
    await apply_schema(scratch_store, small.dimension)
    rows = await scratch_store.run("vector_indexes")
    assert {r["dimensions"] for r in rows} == {16}
    assert {len(v) for v in (await _vectors(scratch_store, "mem")).values()} == {16}
