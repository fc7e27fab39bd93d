"""The counts an `errors` page ranks by, kept on the Error nodes (real Neo4j, fast embedder).

Sightings, tasks, first and last sighting, fixes and the last fix are written with the
sightings and stay true when an episode is recorded again, when one is forgotten, and after
migration 7 on a store written before they were kept; the page without a window reads them
from the nodes, not from the sightings.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from embedders import HashEmbedder

from metisgraph.graph.explore import error_page
from metisgraph.graph.migrations import cypher_step
from metisgraph.ingest.adapters import Parsed, SourceRef
from metisgraph.ingest.pipeline import Ingestor
from metisgraph.ingest.pipeline.forgetting import forget_episodes
from metisgraph.ingest.records import EpisodeRecord, TaskRecord

pytestmark = pytest.mark.anyio

START = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)


def _missing(module: str) -> str:
    return (
        'Traceback (most recent call last):\n  File "run.py", line 1\n'
        f"ModuleNotFoundError: No module named '{module}'"
    )


def _task(project: str, task: str, offset: int, *, fixed: bool) -> list[Any]:
    """A task whose first two steps hit the same error; the third installs the module."""
    fix = "pip install pytz -q" if fixed else "ls -la"
    steps: list[dict[str, Any]] = [
        {"action": {"type": "command", "command": "python run.py"}, "outcome": "failure",
         "error": _missing("pytz")},
        {"action": {"type": "command", "command": "python run.py --tz UTC"},
         "outcome": "failure", "error": _missing("pytz")},
        {"action": {"type": "command", "command": fix}, "outcome": "success"},
    ]  # fmt: skip
    out: list[Any] = [TaskRecord(project=project, id=task, goal="Show times", status="resolved")]
    for i, step in enumerate(steps):
        at = START + timedelta(hours=offset, minutes=i)
        out.append(
            EpisodeRecord(project=project, id=f"{task}-s{i}", task_id=task, step=i,
                          summary=f"{task} step {i}", source="executed", created_at=at, **step)
        )  # fmt: skip
    return [Parsed(r, SourceRef("test")) for r in out]


TRUTH = """
MATCH (r:Error {project: $p})
CALL (r) {
  OPTIONAL MATCH (r)<-[:HIT]-(e:Episode)
  RETURN count(e) AS sightings, count(DISTINCT e.task_id) AS tasks,
         min(e.created_at) AS first, max(e.created_at) AS last
}
CALL (r) {
  OPTIONAL MATCH (e:Episode)-[l:RESOLVED {kind: 'fixed'}]->(r)
  RETURN count(DISTINCT e) AS fixes, max(e.created_at) AS fixed_at
}
RETURN r.key AS key,
       [sightings, tasks, first, last, fixes, fixed_at] AS truth,
       [r.sightings, r.tasks, r.first_sighting, r.last_sighting, r.fixes, r.fixed_at] AS kept
ORDER BY key"""


async def _counts(store: Any, project: str) -> dict[str, tuple[list[Any], list[Any]]]:
    rows = await store.run_text(TRUTH, {"p": project}, read=True)
    return {r["key"]: (r["truth"], r["kept"]) for r in rows}


async def _assert_true(store: Any, project: str) -> dict[str, list[Any]]:
    counts = await _counts(store, project)
    assert counts
    for key, (truth, kept) in counts.items():
        assert kept == truth, key
    return {key: truth for key, (truth, _) in counts.items()}


@pytest.mark.slow
async def test_error_counts_kept_at_write_time_and_true_after_rewrite_and_forget(
    store: Any, project: str
) -> None:
    ingestor = Ingestor(store, HashEmbedder())
    # one batch: two tasks meet the error twice each; one of them fixes it
    await ingestor.ingest(_task(project, "a", 0, fixed=True) + _task(project, "b", 5, fixed=False))
    counts = await _assert_true(store, project)
    [pytz] = [truth for truth in counts.values() if truth[0] == 4]
    assert pytz[1:2] == [2] and pytz[4] == 1  # 4 sightings in 2 tasks, 1 fix
    # a later batch: a third task, and the same episodes again (nothing counts twice)
    await ingestor.ingest(_task(project, "c", 9, fixed=True))
    await ingestor.ingest(_task(project, "a", 0, fixed=True))
    counts = await _assert_true(store, project)
    assert sorted([*t[:2], t[4]] for t in counts.values())[-1] == [6, 3, 2]

    # a step recorded again with other content: its sighting goes
    again = _task(project, "c", 9, fixed=True)[2]
    changed = again.record.model_copy(update={"error": None, "summary": "c ran fine"})
    await ingestor.ingest([Parsed(changed, again.ref)])
    await _assert_true(store, project)
    # forgetting the fixing step and a sighting of task b
    await forget_episodes(store, project, ["a-s2", "b-s0"])
    counts = await _assert_true(store, project)
    assert sorted([*t[:2], t[4]] for t in counts.values())[-1] == [4, 3, 1]


async def test_migration_7_counts_a_store_written_before(store: Any, project: str) -> None:
    await Ingestor(store, HashEmbedder()).ingest(_task(project, "a", 0, fixed=True))
    await store.run_text(
        "MATCH (r:Error {project: $p}) REMOVE r.sightings, r.tasks, r.first_sighting, "
        "r.last_sighting, r.fixes, r.fixed_at",
        {"p": project},
    )
    assert all(kept[0] is None for _, kept in (await _counts(store, project)).values())
    report = await cypher_step("migrate_error_counts")(store)
    assert report["errors_counted"] >= 1
    await _assert_true(store, project)


async def test_the_page_without_a_window_reads_the_kept_counts(store: Any, project: str) -> None:
    await Ingestor(store, HashEmbedder()).ingest(_task(project, "a", 0, fixed=False))
    page = await error_page(store, [project])
    [row] = [r for r in page.rows if r.sightings == 2]
    assert (row.tasks, row.fixes, row.open) == (1, 0, True)
    # what the page shows is what the node keeps (a page reads no sighting)
    await store.run_text(
        "MATCH (r:Error {project: $p, key: $k}) SET r.sightings = 1000, r.tasks = 7",
        {"p": project, "k": row.key},
    )
    shown = {r.key: r for r in (await error_page(store, [project])).rows}[row.key]
    assert (shown.sightings, shown.tasks) == (1000, 7)
    # a window still counts the sightings in it
    windowed = await error_page(store, [project], since=START, until=START + timedelta(days=1))
    assert {r.key: r.sightings for r in windowed.rows}[row.key] == 2
