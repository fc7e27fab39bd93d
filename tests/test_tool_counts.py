"""A tool's statistics move with each use at write time, not by recounting every episode
that used it (real Neo4j, fast embedder): they stay true when an episode is recorded again
with another outcome, when a harness verdict changes a submission's outcome (a batch with
no tool in it), and after forgetting.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from embedders import HashEmbedder

from metisgraph.ingest.adapters import Parsed, SourceRef
from metisgraph.ingest.pipeline import Ingestor
from metisgraph.ingest.pipeline.forgetting import forget_episodes
from metisgraph.ingest.records import EpisodeRecord, TaskRecord, VerdictRecord

pytestmark = pytest.mark.anyio
START = datetime(2026, 5, 4, 8, 0, tzinfo=UTC)

TRUTH = """
MATCH (t:Tool {project: $p})
CALL (t) {
  OPTIONAL MATCH (e:Episode)-[:USED_TOOL]->(t)
  RETURN count(e) AS uses, count(CASE WHEN e.outcome = 'success' THEN 1 END) AS successes,
         count(CASE WHEN e.outcome = 'failure' THEN 1 END) AS failures,
         max(e.created_at) AS last
}
RETURN t.name AS name, [uses, successes, failures, last] AS truth,
       [t.uses, t.successes, t.failures, t.last_used_at] AS kept,
       t.failure_rate AS rate
ORDER BY name"""


async def _assert_true(store: Any, project: str) -> dict[str, list[Any]]:
    rows = await store.run_text(TRUTH, {"p": project}, read=True)
    assert rows
    for r in rows:
        assert r["kept"] == r["truth"], r["name"]
        uses, _, failures, _ = r["truth"]
        assert r["rate"] == (failures / uses if uses else None), r["name"]
    return {r["name"]: r["truth"] for r in rows}


def _step(project: str, n: int, command: str, outcome: str) -> Parsed:
    record = EpisodeRecord(
        project=project, id=f"s{n}", summary=f"step {n} ran {command}", outcome=outcome,
        action={"type": "command", "command": command}, created_at=START + timedelta(hours=n),
    )  # fmt: skip
    return Parsed(record, SourceRef("test"))


async def test_tool_statistics_kept_by_use_and_true_after_rewrite_and_forget(
    store: Any, project: str
) -> None:
    ingestor = Ingestor(store, HashEmbedder())
    await ingestor.ingest(
        [
            _step(project, 0, "valgrind --leak-check=full ./orders", "failure"),
            _step(project, 1, "valgrind ./orders", "failure"),
            _step(project, 2, "gdb -batch ./orders", "success"),
        ]
    )
    await ingestor.ingest([_step(project, 3, "valgrind -q ./orders", "success")])
    tools = await _assert_true(store, project)
    assert tools["valgrind"][:3] == [3, 1, 2]
    # the last use recorded again with another outcome; then the same again (no change)
    await ingestor.ingest([_step(project, 3, "valgrind -q ./orders", "failure")])
    await ingestor.ingest([_step(project, 3, "valgrind -q ./orders", "failure")])
    assert (await _assert_true(store, project))["valgrind"][:3] == [3, 0, 3]
    # an episode recorded again without the tool: the last use is the one before
    await ingestor.ingest([_step(project, 3, "ls ./orders", "failure")])
    tools = await _assert_true(store, project)
    assert tools["valgrind"][:3] == [2, 0, 2] and tools["valgrind"][3].hour == START.hour + 1
    await forget_episodes(store, project, ["s0"])
    assert (await _assert_true(store, project))["valgrind"][:3] == [1, 0, 1]


async def test_a_verdict_moves_the_statistics_of_the_tools_its_submission_used(
    store: Any, project: str
) -> None:
    """A run's submission claimed success with `git diff`; the harness failed it, in a batch
    of its own (no tool in it): the tool's successes and failures move with the outcome."""
    task = TaskRecord(project=project, id="t1", goal="fix the resize", run="run-1",
                      instance="acme__widgets-7")  # fmt: skip
    submit = EpisodeRecord(project=project, id="t1-s0", task_id="t1", step=0, kind="submission",
                           summary="submitted the patch", outcome="success",
                           action={"type": "command", "command": "git diff"},
                           created_at=START)  # fmt: skip
    ingestor = Ingestor(store, HashEmbedder())
    await ingestor.ingest([Parsed(task, SourceRef("test")), Parsed(submit, SourceRef("test"))])
    assert (await _assert_true(store, project))["git"][:3] == [1, 1, 0]
    verdict = VerdictRecord(project=project, run="run-1", instance="acme__widgets-7",
                            resolved=False)  # fmt: skip
    await ingestor.ingest([Parsed(verdict, SourceRef("test"))])
    assert (await _assert_true(store, project))["git"][:3] == [1, 0, 1]
