"""The counts an `errors` page ranks by, kept on the Error nodes (real Neo4j, fast embedder).

Sightings, tasks, first and last sighting, fixes and the last fix are written with the
sightings and stay true when an episode is recorded again, when one is forgotten, and after
migration 7 on a store written before they were kept; the page without a window reads them
from the nodes, not from the sightings. Each project keeps its list's totals (errors, open
errors) on its Project node through every path that creates, fixes, reopens or deletes an
error, and the page reads them instead of counting.
"""

from __future__ import annotations

import io
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from embedders import HashEmbedder

from metisgraph.graph.explore import ErrorOrder, error_page
from metisgraph.graph.exports import export_chunks, import_graph
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


def _task(project: str, task: str, offset: int, *, fixed: bool, module: str = "pytz") -> list[Any]:
    """A task whose first two steps hit the same error; the third installs the module."""
    fix = f"pip install {module} -q" if fixed else "ls -la"
    steps: list[dict[str, Any]] = [
        {"action": {"type": "command", "command": "python run.py"}, "outcome": "failure",
         "error": _missing(module)},
        {"action": {"type": "command", "command": "python run.py --tz UTC"},
         "outcome": "failure", "error": _missing(module)},
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


KEPT_TOTALS = """
MATCH (p:Project {name: $p})
RETURN p.error_total AS total, p.error_open AS open"""


async def _assert_totals(store: Any, project: str) -> tuple[int, int]:
    """The project's kept totals equal a count of its errors (open: never fixed, or sighted
    after the last fix, from the sightings and fixes themselves); the pages show them."""
    truths = [truth for truth, _ in (await _counts(store, project)).values()]
    errors = len(truths)
    open_ = sum(1 for t in truths if t[5] is None or (t[3] is not None and t[3] > t[5]))
    [kept] = await store.run_text(KEPT_TOTALS, {"p": project}, read=True)
    assert (kept["total"], kept["open"]) == (errors, open_)
    assert (await error_page(store, [project])).total == errors
    assert (await error_page(store, [project], ErrorOrder.RECENT)).total == errors
    assert (await error_page(store, [project], ErrorOrder.UNRESOLVED)).total == open_
    return errors, open_


@pytest.mark.slow
async def test_project_totals_kept_through_create_fix_reopen_rewrite_forget_import(
    store: Any, project: str
) -> None:
    ingestor = Ingestor(store, HashEmbedder())
    # created, and fixed in the same task after its sightings: closed
    await ingestor.ingest(_task(project, "a", 0, fixed=True))
    errors, open_ = await _assert_totals(store, project)
    assert errors >= 1 and open_ == errors - 1
    # sighted again after the fix (task b, hours later): open again
    await ingestor.ingest(_task(project, "b", 5, fixed=False))
    assert await _assert_totals(store, project) == (errors, errors)
    # the later sightings forgotten (recount_errors): closed again
    await forget_episodes(store, project, ["b-s0", "b-s1"])
    assert await _assert_totals(store, project) == (errors, errors - 1)
    # the fixing step recorded again without its fix (the links derived again): open
    again = _task(project, "a", 0, fixed=False)[3]
    await ingestor.ingest([again])
    assert await _assert_totals(store, project) == (errors, errors)
    # and with it again (closed), then a sighting recorded again without its error
    await ingestor.ingest([_task(project, "a", 0, fixed=True)[3]])
    assert await _assert_totals(store, project) == (errors, errors - 1)
    hit = _task(project, "a", 0, fixed=True)[2]
    await ingestor.ingest([Parsed(hit.record.model_copy(update={"error": None}), hit.ref)])
    assert await _assert_totals(store, project) == (errors, errors - 1)

    # an import into a project with an open error of its own: the totals are that
    # project's (its own and the imported), not the export's
    copy = f"{project}-copy"
    await ingestor.ingest(_task(copy, "z", 20, fixed=False, module="yaml"))
    own = await _assert_totals(store, copy)
    assert own[0] == own[1] >= 1
    text = "".join([c async for c in export_chunks(store, project, "json")])
    await import_graph(store, io.StringIO(text), project=copy)
    assert await _assert_totals(store, copy) == (own[0] + errors, own[1] + errors - 1)
    # and again into the same project: nothing counts twice
    await import_graph(store, io.StringIO(text), project=copy)
    assert await _assert_totals(store, copy) == (own[0] + errors, own[1] + errors - 1)

    # every sighting and fix forgotten: the errors go, and their counts with them
    await forget_episodes(store, project, ["a-s0", "a-s1", "a-s2", "b-s2"])
    assert await _assert_totals(store, project) == (0, 0)


async def test_migration_11_sets_the_totals_of_a_store_written_before(
    store: Any, project: str
) -> None:
    ingestor = Ingestor(store, HashEmbedder())
    await ingestor.ingest(_task(project, "a", 0, fixed=True) + _task(project, "b", 5, fixed=True))
    expected = await _assert_totals(store, project)
    await store.run_text(
        "MATCH (p:Project {name: $p}) REMOVE p.error_total, p.error_open "
        "WITH p MATCH (r:Error {project: $p}) REMOVE r.tallied",
        {"p": project},
    )
    # without them the page counts (the same totals)
    assert (await error_page(store, [project])).total == expected[0]
    assert (await error_page(store, [project], ErrorOrder.UNRESOLVED)).total == expected[1]
    report = await cypher_step("migrate_error_totals")(store)
    assert report["errors_tallied"] >= 1 and report["projects_tallied"] >= 1
    assert await _assert_totals(store, project) == expected


async def test_the_first_write_to_a_project_without_totals_sets_them_whole(
    store: Any, project: str
) -> None:
    ingestor = Ingestor(store, HashEmbedder())
    await ingestor.ingest(_task(project, "a", 0, fixed=True))
    await store.run_text(
        "MATCH (p:Project {name: $p}) REMOVE p.error_total, p.error_open "
        "WITH p MATCH (r:Error {project: $p}) REMOVE r.tallied",
        {"p": project},
    )
    await ingestor.ingest(_task(project, "b", 5, fixed=False))  # reopens the error
    errors, open_ = await _assert_totals(store, project)
    assert open_ == errors >= 1
