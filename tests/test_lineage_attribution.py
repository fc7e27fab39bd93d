"""Fix links from evidence, written by ingest and re-derived by migration 4 (real Neo4j).

A step that installs the missing module fixed it, not the script written after; a resolved
task's last step claims no error; a failed task's steps claim nothing without evidence.
"""

from __future__ import annotations

from typing import Any

import pytest

from metisgraph.graph.lineage.derive import rederive_all
from metisgraph.ingest.adapters import Parsed, SourceRef
from metisgraph.ingest.pipeline.ingestor import Ingestor
from metisgraph.ingest.records import EpisodeRecord, TaskRecord

pytestmark = pytest.mark.anyio

MISSING = (
    'Traceback (most recent call last):\n  File "run.py", line 1\n'
    "ModuleNotFoundError: No module named 'pytz'"
)
FIXED = [("code of t-s1", "FIXES", None, "module"), ("t-s1", "RESOLVED", "fixed", "module")]
SCRIPT = "import pytz\nprint(pytz.timezone('UTC'))\n"


def _records(project: str, task: str, status: str) -> list[Any]:
    steps: list[dict[str, Any]] = [
        {"action": {"type": "command", "command": "python run.py"}, "outcome": "failure",
         "error": MISSING},
        {"action": {"type": "command", "command": "pip install pytz -q"}, "outcome": "success"},
        {"action": {"type": "command", "command": "cat > check.py && python check.py"},
         "outcome": "success",
         "snippets": [{"code": SCRIPT, "language": "python", "kind": "function",
                       "name": "check pytz", "relation": "GENERATED"}]},
    ]  # fmt: skip
    if status != "resolved":
        steps[1] = {"action": {"type": "command", "command": "ls -la"}, "outcome": "success"}
    out: list[Any] = [TaskRecord(project=project, id=task, goal="Show times", status=status)]
    for i, step in enumerate(steps):
        out.append(
            EpisodeRecord(
                project=project,
                id=f"{task}-s{i}",
                task_id=task,
                step=i,
                summary=f"step {i}",
                source="executed",
                **step,
            )
        )
    return [Parsed(r, SourceRef("test")) for r in out]


async def _links(store: Any, project: str) -> list[tuple[str, str, str | None, str | None]]:
    rows = await store.run_text(
        "MATCH (x {project: $p})-[l:RESOLVED|FIXES|ATTEMPTED]->(r:Error {project: $p}) "
        "RETURN CASE WHEN x:Snippet THEN 'code of ' + l.episode ELSE x.id END AS source, "
        "type(l) AS type, l.kind AS kind, l.rule AS rule "
        "ORDER BY source, type",
        {"p": project},
        read=True,
    )
    return [(r["source"], r["type"], r["kind"], r["rule"]) for r in rows]


async def test_the_install_fixed_it_not_the_script_after_nor_the_tasks_end(
    store: Any, embedder: Any, project: str
) -> None:
    await Ingestor(store, embedder).ingest(_records(project, "t", "resolved"))
    # the step, and the shell snippet ingest took from its command
    assert await _links(store, project) == FIXED
    why = await store.run_text(
        "MATCH (:Episode {project: $p, id: 't-s1'})-[l:RESOLVED]->() "
        "RETURN l.why AS why, l.confidence AS c, l.task AS task",
        {"p": project},
        read=True,
    )
    assert why[0]["why"] == "installs pytz for pytz" and 0 < why[0]["c"] <= 1
    assert why[0]["task"] == "t"


async def test_a_failed_task_claims_no_fix_without_evidence(
    store: Any, embedder: Any, project: str
) -> None:
    await Ingestor(store, embedder).ingest(_records(project, "f", "abandoned"))
    assert await _links(store, project) == []


@pytest.mark.slow
async def test_migration_4_replaces_the_links_of_the_old_rules(
    store: Any, embedder: Any, project: str
) -> None:
    await Ingestor(store, embedder).ingest(_records(project, "t", "resolved"))
    # What the old rules wrote: the task's last step RESOLVED every error it met, and the
    # first code written after the error FIXES it.
    await store.run_text(
        "MATCH (e:Episode {project: $p, id: 't-s2'}), (r:Error {project: $p}) "
        "MERGE (e)-[:RESOLVED]->(r) "
        "WITH e, r MATCH (e)-[:GENERATED]->(s:Snippet) "
        "MERGE (s)-[f:FIXES {task: 't'}]->(r) SET f.episode = 't-s2'",
        {"p": project},
    )
    await store.run_text(
        "MATCH (:Episode {project: $p, id: 't-s1'})-[l:RESOLVED]->() DELETE l", {"p": project}
    )
    assert ("t-s2", "RESOLVED", None, None) in await _links(store, project)
    report = await rederive_all(store)
    assert await _links(store, project) == FIXED
    assert report["tasks"] >= 1 and report["after_unkinded_resolved"] == 0
    assert report["before_unkinded_resolved"] >= 1
