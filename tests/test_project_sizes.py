"""Each project's sizes (tasks, episodes) kept on its Project node, and the projects list
reading them (real Neo4j, fast embedder).

The list counted each project's tasks, episodes and errors in their indexes at every call
(283 ms at 1M episodes). The sizes are now moved by every write that creates a task or an
episode and by forgetting, set whole by an import, migration 12 and the bulk load, and
counted once at the first write to a project without them; errors come from the totals the
errors pages keep. Each test compares the kept sizes with a count of the nodes.
"""

from __future__ import annotations

import io
from datetime import UTC, datetime, timedelta
from typing import Any

import anyio
import pytest
from embedders import HashEmbedder

from metisgraph.graph.explore.listing import projects
from metisgraph.graph.exports import export_chunks, import_graph
from metisgraph.graph.migrations import cypher_step
from metisgraph.ingest.adapters import Parsed, SourceRef
from metisgraph.ingest.pipeline import Ingestor
from metisgraph.ingest.pipeline.forgetting import forget_episodes
from metisgraph.ingest.records import EpisodeRecord, TaskRecord

pytestmark = pytest.mark.anyio

START = datetime(2026, 4, 6, 9, 0, tzinfo=UTC)

TRUTH = """
MATCH (p:Project {name: $p})
RETURN COUNT { MATCH (t:Task {project: $p}) WHERE t.id IS NOT NULL } AS tasks,
       COUNT { MATCH (e:Episode {project: $p}) WHERE e.id IS NOT NULL } AS episodes,
       COUNT { MATCH (r:Error {project: $p}) WHERE r.key IS NOT NULL } AS errors,
       [p.task_total, p.episode_total, p.error_total] AS kept,
       COUNT { MATCH (n {project: $p}) WHERE n.uncounted IS NOT NULL } AS marked"""


def _task(project: str, task: str, offset: int, steps: int = 3, *, declared: bool = True,
          summary: str = "step") -> list[Parsed]:  # fmt: skip
    """A task of ``steps`` episodes (the first fails with an error); ``declared``: its
    TaskRecord is sent too, else the task is made by its episodes alone."""
    out: list[Any] = []
    if declared:
        out.append(TaskRecord(project=project, id=task, goal=f"Goal {task}", status="open"))
    for i in range(steps):
        error = None
        if i == 0:
            error = f"Traceback (most recent call last):\nKeyError: 'k{task}'"
        out.append(
            EpisodeRecord(
                project=project, id=f"{task}-s{i}", task_id=task, step=i, source="executed",
                summary=f"{task} {summary} {i}", outcome="failure" if error else "success",
                action={"type": "command", "command": f"python run_{task}.py"},
                error=error, created_at=START + timedelta(hours=offset, minutes=i),
            )
        )  # fmt: skip
    return [Parsed(r, SourceRef("test")) for r in out]


async def _sizes(store: Any, project: str) -> tuple[int, int, int]:
    """The kept sizes equal the nodes counted (no node left marked), and the projects list
    shows them; returns (tasks, episodes, errors)."""
    [row] = await store.run_text(TRUTH, {"p": project}, read=True)
    truth = (row["tasks"], row["episodes"], row["errors"])
    assert tuple(row["kept"]) == truth
    assert row["marked"] == 0
    [shown] = [p for p in await projects(store, [project]) if p.name == project]
    assert (shown.tasks, shown.episodes, shown.errors) == truth
    return truth


@pytest.mark.slow
async def test_sizes_kept_through_write_rewrite_forget_and_import(store: Any, project: str) -> None:
    ingestor = Ingestor(store, HashEmbedder())
    # one batch: a declared task, and a task made by its episodes alone
    await ingestor.ingest(_task(project, "a", 0) + _task(project, "b", 2, declared=False))
    assert (await _sizes(store, project))[:2] == (2, 6)
    # the same records again, and again with other content: nothing counts twice
    await ingestor.ingest(_task(project, "a", 0))
    await ingestor.ingest(_task(project, "b", 2, summary="ran again"))
    assert (await _sizes(store, project))[:2] == (2, 6)
    # a later batch adds a step to a task and a new task
    await ingestor.ingest(_task(project, "a", 0, steps=4)[-1:] + _task(project, "c", 5, 2))
    assert (await _sizes(store, project))[:2] == (3, 9)
    # forgetting episodes, then a task with its episodes
    await forget_episodes(store, project, ["a-s3", "b-s1"])
    assert (await _sizes(store, project))[:2] == (3, 7)
    await forget_episodes(store, project, ["c-s0", "c-s1"], tasks=["c"])
    tasks, episodes, errors = await _sizes(store, project)
    assert (tasks, episodes) == (2, 5) and errors >= 2

    # an import into a project with memory of its own: that project's sizes, not the export's
    copy = f"{project}-copy"
    await ingestor.ingest(_task(copy, "z", 20, 2))
    assert (await _sizes(store, copy))[:2] == (1, 2)
    text = "".join([c async for c in export_chunks(store, project, "json")])
    await import_graph(store, io.StringIO(text), project=copy)
    assert (await _sizes(store, copy))[:2] == (3, 7)
    await import_graph(store, io.StringIO(text), project=copy)  # again: nothing twice
    assert (await _sizes(store, copy))[:2] == (3, 7)
    # and writing to the imported project moves them on from there
    await ingestor.ingest(_task(copy, "y", 30, 1))
    assert (await _sizes(store, copy))[:2] == (4, 8)


@pytest.mark.slow
async def test_writers_at_once_count_each_node_once(store: Any, project: str) -> None:
    """Two batches written at the same time, half their tasks and episodes the same: each
    node made is counted by the one statement that made it."""
    one = Ingestor(store, HashEmbedder(), batch_size=8)
    two = Ingestor(store, HashEmbedder(), batch_size=8)
    first = [r for t in range(6) for r in _task(project, f"t{t}", t, 2)]
    second = [r for t in range(3, 9) for r in _task(project, f"t{t}", t, 2, declared=t % 2 == 0)]
    async with anyio.create_task_group() as group:
        group.start_soon(one.ingest, first)
        group.start_soon(two.ingest, second)
    assert (await _sizes(store, project))[:2] == (9, 18)


async def test_the_list_reads_the_kept_sizes(store: Any, project: str) -> None:
    await Ingestor(store, HashEmbedder()).ingest(_task(project, "a", 0))
    await _sizes(store, project)
    # what the list shows is what the node keeps: it counts no node
    await store.run_text(
        "MATCH (p:Project {name: $p}) SET p.task_total = 70, p.episode_total = 9000,"
        " p.error_total = 12",
        {"p": project},
    )
    [shown] = await projects(store, [project])
    assert (shown.tasks, shown.episodes, shown.errors) == (70, 9000, 12)


async def test_migration_12_and_the_first_write_set_the_sizes_of_a_store_written_before(
    store: Any, project: str
) -> None:
    ingestor = Ingestor(store, HashEmbedder())
    await ingestor.ingest(_task(project, "a", 0) + _task(project, "b", 1))
    expected = await _sizes(store, project)
    forget = "MATCH (p:Project {name: $p}) REMOVE p.task_total, p.episode_total"
    await store.run_text(forget, {"p": project})
    # without them the list counts (the same sizes)
    [shown] = await projects(store, [project])
    assert (shown.tasks, shown.episodes, shown.errors) == expected
    report = await cypher_step("migrate_project_sizes", project=None)(store)
    assert report["projects_sized"] >= 1
    assert await _sizes(store, project) == expected
    # a store written before, then written to: the first write counts them whole
    await store.run_text(forget, {"p": project})
    await ingestor.ingest(_task(project, "c", 2, 2))
    assert (await _sizes(store, project))[:2] == (expected[0] + 1, expected[1] + 2)


async def test_an_import_cut_short_after_its_nodes_leaves_no_size_wrong(
    store: Any, project: str
) -> None:
    """The Project node an export carries holds its own store's sizes and totals: the
    import's nodes leave them unset (the list counts) until its end sets them whole."""
    ingestor = Ingestor(store, HashEmbedder())
    await ingestor.ingest(_task(project, "a", 0))
    expected = await _sizes(store, project)
    bogus = {"task_total": 500, "episode_total": 9000, "error_total": 70, "error_open": 60}
    row = {"kind": "Project", "project": project, "key": project, "gid": "p", "props": bogus}
    await store.write_many([("import_nodes", {"rows": [row]})])
    [shown] = await projects(store, [project])
    assert (shown.tasks, shown.episodes, shown.errors) == expected
    # the next write sets them whole again
    await ingestor.ingest(_task(project, "b", 1, 1))
    assert (await _sizes(store, project))[:2] == (expected[0] + 1, expected[1] + 1)
