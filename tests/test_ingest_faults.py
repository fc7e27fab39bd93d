"""Faults in the middle of an ingest, and replays: nothing lost, nothing doubled.

The proof is the canonical graph digest (``graph.digest``: nodes by kind and key with their
properties, relationships; no project name, timestamps or internal ids), so a project
ingested once and a project ingested with faults or twice are compared whole.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import anyio
import pytest
from embedders import HashEmbedder
from graphdiff import assert_same_graph
from neo4j.exceptions import DriverError, Neo4jError

from metisgraph.graph import apply_schema, digest_project
from metisgraph.ingest.adapters import Parsed
from metisgraph.ingest.adapters.base import SourceRef
from metisgraph.ingest.pipeline import Ingestor
from metisgraph.ingest.records import EpisodeRecord, TaskRecord

pytestmark = [pytest.mark.anyio, pytest.mark.slow(25)]

TASKS, STEPS, BATCH = 12, 6, 8  # 84 records in 11 batches: a kill lands mid-way
TRACE = """Traceback (most recent call last):
  File "/srv/app/worker{n}.py", line {line}, in run
    cache.put(key, value)
{kind}: cannot allocate {size} bytes"""


def _records(project: str) -> list[Parsed]:
    """Chained tasks with errors, tools and a success each: every kind of node and edge an
    ingest writes, in many batches."""
    ref = SourceRef("memory.jsonl")
    start = datetime(2025, 6, 1, tzinfo=UTC)
    items: list[Parsed] = []
    for t in range(TASKS):
        task = f"task-{t}"
        items.append(Parsed(TaskRecord(project=project, id=task, goal=f"fix worker {t}"), ref))
        for s in range(STEPS):
            kind = ("MemoryError", "TimeoutError", "KeyError")[(t + s) % 3]
            step: dict[str, Any] = {"summary": f"step {s} of worker {t}: tried fix {s}"}
            if s < STEPS - 1:
                step["error"] = TRACE.format(n=t % 5, line=10 + s, kind=kind, size=64 * (s + 1))
                step["action"] = {"command": f"pytest tests/test_w{t}.py -x"}
            else:
                step["outcome"] = "success"
            record = EpisodeRecord(
                project=project,
                id=f"{task}-ep-{s}",
                task_id=task,
                step=s,
                created_at=start + timedelta(hours=t, minutes=s),
                **step,
            )
            items.append(Parsed(record, ref))
    return items


async def _ingest(store: Any, project: str, **kwargs: Any) -> Any:
    ingestor = Ingestor(store, HashEmbedder(), batch_size=BATCH)
    return await ingestor.ingest(_records(project), **kwargs)


async def test_a_replayed_ingest_changes_nothing(store: Any, project: str) -> None:
    await _ingest(store, project)
    once = await digest_project(store, project)
    again = await _ingest(store, project)
    assert again.written == 0 and again.unchanged == TASKS * STEPS and again.refused == 0
    assert await digest_project(store, project) == once


def _kill(pid: int) -> None:
    os.kill(pid, signal.SIGKILL)
    with contextlib.suppress(ChildProcessError):
        os.waitpid(pid, 0)


async def test_neo4j_killed_mid_ingest_then_the_same_ingest_again_equals_one_clean_run(
    scratch_neo4j: Any, scratch_store: Any
) -> None:
    store = scratch_store
    await apply_schema(store, HashEmbedder().dimension)
    clean = await _ingest(store, "clean")
    assert clean.written == TASKS * STEPS and clean.refused == 0
    wanted = await digest_project(store, "clean")

    pid = scratch_neo4j.status().pid
    assert pid is not None
    done = 0

    def progress(count: int) -> None:
        nonlocal done
        done += count
        if done >= len(_records("x")) // 3 and scratch_neo4j.status().pid == pid:
            _kill(pid)  # SIGKILL: no clean shutdown, a transaction may be in flight

    try:
        with pytest.raises((DriverError, Neo4jError)):
            await _ingest(store, "killed", on_progress=progress)
    finally:
        await anyio.to_thread.run_sync(scratch_neo4j.start)
    assert 0 < done < len(_records("x"))
    partial = await digest_project(store, "killed")
    assert partial != wanted  # the kill did stop the ingest part way

    again = await _ingest(store, "killed")
    assert again.refused == 0
    assert again.written + again.unchanged == TASKS * STEPS
    assert again.unchanged > 0  # what was stored before the kill was kept, not written again
    await assert_same_graph(store, "killed", "clean")


MUTATIONS = """
mutation($project: String!, $task: TaskInput!, $steps: [EpisodeInput!]!) {
  recordTask(input: $task) { status }
  recordEpisodes(inputs: $steps) { written unchanged refused }
  reviewMemory(project: $project, memoryId: "leak-1", status: "approved") { status }
}"""


def _mutations(gql: Any, project: str) -> dict[str, Any]:
    steps = [
        {
            "project": project,
            "id": f"leak-{n}",
            "taskId": "leak",
            "step": n,
            "createdAt": f"2025-06-01T10:0{n}:00Z",
            **step,
        }
        for n, step in enumerate(
            [
                {"summary": "The worker's memory grows for days", "error": TRACE.format(
                    n=1, line=42, kind="MemoryError", size=4096)},
                {"summary": "Bounded the cache to 1024 entries", "outcome": "success",
                 "snippets": [{"code": "cache = LRU(maxsize=1024)\n", "language": "python"}]},
            ]
        )
    ]  # fmt: skip
    task = {"project": project, "id": "leak", "goal": "stop the worker leaking"}
    body = gql(MUTATIONS, {"project": project, "task": task, "steps": steps})
    assert "errors" not in body, body
    return dict(body["data"])


async def test_a_replayed_batch_of_api_mutations_changes_nothing(
    gql: Any, store: Any, project: str
) -> None:
    once, twice = f"{project}-once", f"{project}-twice"
    first = _mutations(gql, once)
    assert first["recordEpisodes"] == {"written": 2, "unchanged": 0, "refused": 0}
    _mutations(gql, twice)
    replay = _mutations(gql, twice)
    assert replay["recordEpisodes"] == {"written": 0, "unchanged": 2, "refused": 0}
    await assert_same_graph(store, twice, once)


def test_the_cli_says_clearly_when_neo4j_is_away(tmp_path: Path, dead_port: int) -> None:
    records = tmp_path / "memory.jsonl"
    line = {"project": "p", "id": "e1", "summary": "The cache grew"}
    records.write_text(json.dumps(line) + "\n")
    env = {**os.environ, "NEO4J_URI": f"bolt://127.0.0.1:{dead_port}", "NEO4J_PASSWORD": "x"}
    cli = str(Path(sys.executable).parent / "metisgraph")
    done = subprocess.run(
        [cli, "ingest", str(records), "--quiet"], capture_output=True, text=True, env=env
    )
    assert done.returncode == 4, done.stderr
    assert "Neo4j is unreachable or went away (ServiceUnavailable)" in done.stderr
    assert "Run the same command again" in done.stderr and "Traceback" not in done.stderr
