"""The pipelined ingest: batches that overlap give the graph a sequential ingest gives.

Context rows are computed before a batch is written, from its own vectors and the steps
stored before it; they must equal what `refresh_context` computes from the graph after.
A fake embedder is enough: nothing here depends on meaning.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import numpy as np
import pytest
from embedders import HashEmbedder

from metisgraph.ingest.adapters import Parsed
from metisgraph.ingest.adapters.base import SourceRef
from metisgraph.ingest.pipeline import Ingestor, neighbours
from metisgraph.ingest.pipeline.neighbours import refresh_context
from metisgraph.ingest.records import EpisodeRecord, TaskRecord

pytestmark = pytest.mark.anyio


def _records(project: str, tasks: int, steps: int) -> list[Parsed]:
    start = datetime(2025, 3, 1, tzinfo=UTC)
    items: list[Parsed] = []
    for t in range(tasks):
        task_id = f"task-{t}"
        items.append(
            Parsed(TaskRecord(project=project, id=task_id, goal=f"goal {t}"), SourceRef("x"))
        )
        # Steps arrive out of order, so the chain order comes from `step`, not arrival.
        for s in reversed(range(steps)):
            record = EpisodeRecord(
                project=project,
                id=f"{task_id}:{s}",
                task_id=task_id,
                step=s,
                summary=f"task {t} step {s}: looked at component {t * 7 + s}",
                created_at=start + timedelta(hours=t, minutes=s),
            )
            items.append(Parsed(record, SourceRef("x")))
    return items


async def _contexts(store: Any, project: str) -> dict[str, tuple[list[float], str]]:
    rows = await store.run_text(
        "MATCH (e:Episode {project: $project}) "
        "OPTIONAL MATCH (v:EpisodeVector {project: e.project, episode: e.id, of: 'context'}) "
        "RETURN e.id AS id, v.embedding AS vector, e.context_text AS text",
        {"project": project},
        read=True,
    )
    return {r["id"]: (r["vector"], r["text"]) for r in rows}


async def test_contexts_across_batches_equal_a_refresh(store: Any, project: str) -> None:
    # Batches of 4 records cut every task of 5 steps (and its task record) in two or three.
    ingestor = Ingestor(store, HashEmbedder(), batch_size=4)
    summary = await ingestor.ingest(_records(project, tasks=4, steps=5))
    assert summary.written == 20
    before = await _contexts(store, project)
    assert all(vector is not None for vector, _ in before.values())
    await refresh_context(store, [{"project": project, "id": f"task-{t}"} for t in range(4)])
    after = await _contexts(store, project)
    assert before.keys() == after.keys()
    for key, (vector, text) in before.items():
        assert text == after[key][1], key
        assert np.allclose(vector, after[key][0], atol=1e-6), key
    middle = before["task-2:2"][1].splitlines()
    assert [line.split(":")[0] for line in middle] == [f"task 2 step {s}" for s in range(5)]


async def test_the_same_episode_in_consecutive_batches_is_unchanged(
    store: Any, project: str
) -> None:
    items = _records(project, tasks=1, steps=3)
    again = [i for i in items if isinstance(i.record, EpisodeRecord)]
    ingestor = Ingestor(store, HashEmbedder(), batch_size=4)
    summary = await ingestor.ingest([*items, *again])
    assert summary.written == 3
    assert summary.unchanged == 3


async def test_the_summary_counts_each_error_tool_and_environment_once(
    store: Any, project: str
) -> None:
    """Batches of two: the same error, tool and environment turn up in every batch."""
    trace = (
        "Traceback (most recent call last):\n"
        '  File "/srv/app/jobs/export.py", line 12, in run\n'
        "    raise ExportTimeout(job)\n"
        "jobs.export.ExportTimeout: export job timed out\n"
    )
    items = [
        Parsed(
            EpisodeRecord(
                project=project, id=f"e{n}", summary=f"export attempt {n} timed out",
                error=trace, tools=["pytest"],
                environment={"os": "linux", "runtime": "python", "runtime_version": "3.11.4"},
            ),
            SourceRef("x", n),
        )
        for n in range(6)
    ]  # fmt: skip
    summary = await Ingestor(store, HashEmbedder(), batch_size=2).ingest(items)
    assert summary.written == 6
    assert (summary.errors, summary.tools, summary.environments) == (1, 1, 1)
    [row] = await store.run_text(
        """MATCH (r:Error {project: $p}) WITH count(r) AS errors
           MATCH (t:Tool {project: $p}) WITH errors, count(t) AS tools
           MATCH (v:Environment {project: $p}) RETURN errors, tools, count(v) AS environments""",
        {"p": project},
        read=True,
    )
    assert row == {"errors": 1, "tools": 1, "environments": 1}


async def test_a_crash_while_context_is_refreshed_leaves_no_batch_without_it(
    store: Any, project: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Steps without a time: their context is read back from the graph, after the writes.
    items = [
        Parsed(EpisodeRecord(project=project, id=f"s{n}", task_id="t", step=n,
                             summary=f"step {n} of the task"), SourceRef("x"))
        for n in range(3)
    ]  # fmt: skip

    def crash(chain: list[dict[str, Any]]) -> list[dict[str, Any]]:
        raise RuntimeError("the process died here")

    monkeypatch.setattr(neighbours, "context_rows", crash)
    with pytest.raises(RuntimeError, match="died"):
        await Ingestor(store, HashEmbedder()).ingest(items)
    assert await _contexts(store, project) == {}  # nothing half written
    monkeypatch.undo()
    summary = await Ingestor(store, HashEmbedder()).ingest(items)
    assert summary.written == 3
    contexts = await _contexts(store, project)
    assert sorted(contexts) == ["s0", "s1", "s2"]
    assert all(vector is not None and text for vector, text in contexts.values())
