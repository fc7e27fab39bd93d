"""Ingest end to end: the CLI, the pipeline and what lands in the real Neo4j."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from metisgraph.graph.settings import Neo4jSettings
from metisgraph.ingest.adapters import Parsed, read_path
from metisgraph.ingest.pipeline import Ingestor
from metisgraph.ingest.records import EpisodeRecord, TaskRecord

CLI = str(Path(sys.executable).parent / "metisgraph")
pytestmark = pytest.mark.anyio


def _run_cli(neo4j: Neo4jSettings, *args: str) -> subprocess.CompletedProcess[str]:
    assert neo4j.uri and neo4j.password
    env = {**os.environ, "NEO4J_URI": neo4j.uri, "NEO4J_USERNAME": neo4j.username,
           "NEO4J_PASSWORD": neo4j.password.get_secret_value()}  # fmt: skip
    return subprocess.run([CLI, *args], capture_output=True, text=True, env=env, timeout=600)


def _with_project(source: Path, target: Path, project: str) -> Path:
    lines = [json.loads(line) for line in source.read_text().splitlines() if line.strip()]
    target.write_text("".join(json.dumps({**r, "project": project}) + "\n" for r in lines))
    return target


async def _everything(store: Any, project: str) -> str:
    """Every property of every node and relationship of the project, as one text."""
    rows = await store.run_text(
        """MATCH (n) WHERE n.project = $project OR n.name = $project
           OPTIONAL MATCH (n)-[r]-()
           RETURN properties(n) AS node, collect(properties(r)) AS rels""",
        {"project": project},
        read=True,
    )
    blob = []
    for row in rows:
        for props in [row["node"], *row["rels"]]:
            blob.extend(f"{k}={v}" for k, v in props.items() if not k.endswith("embedding"))
    return "\n".join(blob)


async def _fingerprint(store: Any, project: str) -> str:
    rows = await store.run_text(
        """MATCH (n {project: $project}) OPTIONAL MATCH (n)-[r]->(m)
           RETURN labels(n) AS labels, properties(n) AS node,
                  collect([type(r), properties(r), m.id, m.key, m.name]) AS out""",
        {"project": project},
        read=True,
    )
    canonical = sorted(json.dumps(r, sort_keys=True, default=str) for r in rows)
    return hashlib.sha256("\n".join(canonical).encode()).hexdigest()


@pytest.mark.slow(12)
async def test_planted_secrets_never_reach_the_graph(
    store: Any, cli_in_process: Any, project: str, fixtures_dir: Path, tmp_path: Path
) -> None:
    text = fixtures_dir / "text"
    planted = json.loads((text / "planted_secrets.json").read_text())["secrets"]
    source = _with_project(text / "planted_secrets.jsonl", tmp_path / "secrets.jsonl", project)
    result = cli_in_process("ingest", str(source), "--quiet")
    assert result.returncode == 0, result.stderr
    blob = await _everything(store, project)
    assert "REDACTED" in blob and len(blob) > 5000  # the records are there, sanitized
    survivors = [s for s in planted if s["value"] in blob]
    assert survivors == [], survivors


@pytest.mark.slow(10)  # `metisgraph ingest` in a process of its own: the entry point, as installed
async def test_cli_refuses_bad_records_keeps_them_and_writes_the_rest(
    store: Any, neo4j_settings: Neo4jSettings, project: str, tmp_path: Path
) -> None:
    good = {"project": project, "summary": "Cleared the stale cache", "outcome": "success"}
    lines = [
        json.dumps({**good, "id": "g1"}),
        json.dumps({**good, "id": "b1", "summary": " "}),
        "{not json",
        json.dumps({**good, "id": "b2", "tags": ["nocolon"], "outcome": "maybe"}),
        json.dumps({**good, "id": "g2", "summary": "Restarted the worker"}),
    ]
    source = tmp_path / "mixed.jsonl"
    source.write_text("\n".join(lines) + "\n")
    dead = tmp_path / "dead.jsonl"
    result = _run_cli(neo4j_settings, "ingest", str(source), "--dead-letter", str(dead), "--quiet")
    assert result.returncode == 3, (result.stdout, result.stderr)
    assert f"{source}:2: field 'summary'" in result.stderr
    kept = [json.loads(line) for line in dead.read_text().splitlines()]
    assert [k["line"] for k in kept] == [2, 3, 4]
    fields = {e["field"] for e in kept[2]["errors"]}
    assert {"outcome"} <= fields and any(f.startswith("tags") for f in fields)
    assert kept[0]["raw"]["id"] == "b1"  # the refused record itself is kept
    stored = await store.run_text(
        "MATCH (e:Episode {project: $p}) RETURN e.id AS id ORDER BY id", {"p": project}, read=True
    )
    assert [r["id"] for r in stored] == ["g1", "g2"]


@pytest.mark.slow(8)  # the fixture trajectories ingested twice with the real model (~7 s)
async def test_ingesting_the_same_trajectories_twice_changes_nothing(
    store: Any, cli_in_process: Any, project: str, fixtures_dir: Path
) -> None:
    folder = fixtures_dir / "trajectories"
    first = cli_in_process("ingest", str(folder), "--project", project, "--quiet")
    assert first.returncode == 0, first.stderr
    before = await _fingerprint(store, project)
    second = cli_in_process("ingest", str(folder), "--project", project, "--quiet")
    assert second.returncode == 0, second.stderr
    assert await _fingerprint(store, project) == before
    assert "│     0 │" in second.stdout or " 0 " in second.stdout  # nothing written


@pytest.mark.slow
async def test_a_trajectory_becomes_a_task_with_a_chain_errors_tools_and_environment(
    store: Any, embedder: Any, project: str, fixtures_dir: Path
) -> None:
    items = list(read_path(fixtures_dir / "trajectories", project=project))
    summary = await Ingestor(store, embedder).ingest(items)
    assert summary.refused == 0 and summary.tasks >= 1
    tasks = [i.record for i in items if isinstance(i, Parsed) and isinstance(i.record, TaskRecord)]
    rows = await store.run_text(
        """MATCH (t:Task {project: $p})
           OPTIONAL MATCH (t)-[:HAS_EPISODE]->(e:Episode)
           WITH t, count(e) AS steps
           OPTIONAL MATCH (t)-[:HAS_EPISODE]->(:Episode)-[n:NEXT]->(:Episode)
           RETURN t.id AS id, t.status AS status, steps, count(n) AS links""",
        {"p": project},
        read=True,
    )
    assert len(rows) == len(tasks)
    for row in rows:  # a chain of NEXT links through every step (a one-step run has none)
        assert row["steps"] >= 1 and row["links"] == row["steps"] - 1, row
    assert max(r["steps"] for r in rows) >= 3
    counts = await store.run_text(
        """RETURN COUNT { (:Episode {project: $p})-[:HIT]->(:Error) } AS hits,
                  COUNT { (:Episode {project: $p})-[:USED_TOOL]->(:Tool) } AS tools""",
        {"p": project},
        read=True,
    )
    assert counts[0]["hits"] > 0 and counts[0]["tools"] > 0


@pytest.mark.slow
async def test_environments_are_fingerprinted_with_their_packages(
    store: Any, embedder: Any, project: str
) -> None:
    from metisgraph.ingest.adapters import SourceRef

    observation = "$ python --version\nPython 3.11.7\n$ pip freeze\npandas==2.2.1\nnumpy==1.26.4\n"
    records = [
        EpisodeRecord(project=project, id=f"e{n}", summary="Checked the interpreter",
                      action={"type": "command", "command": "python --version && pip freeze"},
                      observation=observation) for n in range(2)
    ]  # fmt: skip
    await Ingestor(store, embedder).ingest([Parsed(r, SourceRef("test")) for r in records])
    rows = await store.run_text(
        """MATCH (e:Episode {project: $p})-[:IN_ENV]->(v:Environment)-[h:HAS_PACKAGE]->(k)
           RETURN v.key AS key, v.runtime AS runtime, v.runtime_version AS version,
                  collect(DISTINCT e.id) AS episodes,
                  collect(DISTINCT [k.name, h.version]) AS pkgs""",
        {"p": project},
        read=True,
    )
    assert len(rows) == 1  # one fingerprint for one environment
    assert (rows[0]["runtime"], rows[0]["version"]) == ("python", "3.11.7")
    assert sorted(rows[0]["episodes"]) == ["e0", "e1"]
    assert sorted(rows[0]["pkgs"]) == [["numpy", "1.26.4"], ["pandas", "2.2.1"]]


@pytest.mark.slow
async def test_a_resolved_task_marks_its_open_episodes_and_resolves_its_errors(
    store: Any, embedder: Any, project: str
) -> None:
    from metisgraph.ingest.adapters import SourceRef

    ref = SourceRef("test")
    records = [
        TaskRecord(project=project, id="t", goal="Fix the import error", status="resolved"),
        EpisodeRecord(project=project, id="s0", task_id="t", step=0, outcome="failure",
                      summary="Import failed", observation="Traceback (most recent call last):\n"
                      "  File \"app.py\", line 1, in <module>\nModuleNotFoundError: No module "
                      "named 'yaml'"),
        EpisodeRecord(project=project, id="s1", task_id="t", step=1, outcome="unknown",
                      summary="Looked for the requirements file"),
        EpisodeRecord(project=project, id="s2", task_id="t", step=2, outcome="success",
                      summary="Installed pyyaml; the import works",
                      action={"type": "command", "command": "pip install pyyaml"}),
    ]  # fmt: skip
    await Ingestor(store, embedder).ingest([Parsed(r, ref) for r in records])
    rows = await store.run_text(
        """MATCH (e:Episode {project: $p}) OPTIONAL MATCH (e)-[:RESOLVED_BY]->(f)
           RETURN e.id AS id, e.outcome AS outcome, e.resolution AS resolution, f.id AS by
           ORDER BY id""",
        {"p": project},
        read=True,
    )
    by_id = {r["id"]: r for r in rows}
    assert by_id["s1"]["resolution"] == "resolved" and by_id["s1"]["by"] == "s2"
    assert by_id["s0"]["outcome"] == "failure" and by_id["s0"]["by"] is None  # failures stay
    resolved = await store.run_text(
        "MATCH (:Episode {project: $p, id: 's2'})-[:RESOLVED]->(r:Error) RETURN r.kind AS kind",
        {"p": project},
        read=True,
    )
    assert [r["kind"] for r in resolved] == ["python:ModuleNotFoundError"]


def _version(project: str, command: str, tag: str, observation: str, id: str = "e") -> Parsed:
    """A version of episode ``id``: its tool, tag and error come from these fields."""
    from metisgraph.ingest.adapters import SourceRef

    episode = EpisodeRecord(project=project, id=id, summary="Ran the checks",
                            action={"type": "command", "command": command},
                            tags=[tag], observation=observation)  # fmt: skip
    return Parsed(episode, SourceRef("test"))


async def _links(store: Any, project: str, id: str = "e") -> dict[str, list[str]]:
    rows = await store.run_text(
        """MATCH (e:Episode {project: $p, id: $id})-[r]->(n)
           WHERE type(r) IN ['USED_TOOL', 'TAGGED', 'HIT']
           RETURN type(r) AS type, coalesce(n.name, n.kind) AS name ORDER BY type, name""",
        {"p": project, "id": id},
        read=True,
    )
    out: dict[str, list[str]] = {}
    for row in rows:
        out.setdefault(row["type"], []).append(row["name"])
    return out


_CRASH = "Traceback (most recent call last):\n  File \"a.py\", line 1\nKeyError: 'x'"
_MEMORY_LINKS = {
    "HIT": ["python:KeyError"],
    "TAGGED": ["area:memory"],
    "USED_TOOL": ["make", "valgrind"],
}
_DEPLOY_LINKS = {"TAGGED": ["area:deploy"], "USED_TOOL": ["kubectl"]}


@pytest.mark.slow
async def test_an_episode_recorded_again_with_other_content_keeps_no_stale_links(
    store: Any, embedder: Any, project: str
) -> None:
    ingestor = Ingestor(store, embedder)
    await ingestor.ingest([_version(project, "valgrind ./server && make", "area:memory", _CRASH)])
    assert await _links(store, project) == _MEMORY_LINKS
    deploy = _version(project, "kubectl get pods", "area:deploy", "all running")
    summary = await ingestor.ingest([deploy])
    assert summary.written == 1
    assert await _links(store, project) == _DEPLOY_LINKS
    orphans = await store.run_text(
        """MATCH (n {project: $p}) WHERE (n:Tool OR n:Tag) AND NOT EXISTS { (n)--() }
           RETURN n.name AS name""",
        {"p": project},
        read=True,
    )
    assert orphans == []  # valgrind, make and area:memory went with their last link


@pytest.mark.slow
async def test_the_last_version_of_an_id_in_one_batch_is_the_one_stored(
    store: Any, embedder: Any, project: str
) -> None:
    """Versions of one id in one batch end as they would one record at a time: the last one
    stored, with its own links only. Found by the fuzz run (seed 12): A stored, then B and A
    again in one batch left B, since each was compared with the stored A, not with B."""
    memory = _version(project, "valgrind ./server && make", "area:memory", _CRASH)
    deploy = _version(project, "kubectl get pods", "area:deploy", "all running")
    ingestor = Ingestor(store, embedder)
    await ingestor.ingest([memory])
    summary = await ingestor.ingest([deploy, memory])  # one batch: B, then A again
    # The batch's last word is what is stored already: nothing to write, B never was.
    assert (summary.written, summary.unchanged, summary.refused) == (0, 2, 0)
    assert await _links(store, project) == _MEMORY_LINKS

    # A new id, two versions in one batch: the first one's tool, tag and error are not kept.
    new = [_version(project, m.record.action.command, m.record.tags[0],  # type: ignore[union-attr]
                    m.record.observation or "", id="f") for m in (memory, deploy)]  # fmt: skip
    summary = await ingestor.ingest(new)
    assert summary.written == 2
    assert await _links(store, project, "f") == _DEPLOY_LINKS
    stored = await store.run_text(
        "MATCH (e:Episode {project: $p}) RETURN e.id AS id, e.observation AS seen ORDER BY id",
        {"p": project},
        read=True,
    )
    assert [(r["id"], "KeyError" in r["seen"]) for r in stored] == [("e", True), ("f", False)]


@pytest.mark.shared
@pytest.mark.slow
async def test_every_shared_trajectory_ingests_and_reingests_unchanged(
    store: Any, shared_trajectories: Any
) -> None:
    folder, project = shared_trajectories.folder, shared_trajectories.project
    items = shared_trajectories.items  # ingested once per session (conftest)
    assert not [i for i in items if not isinstance(i, Parsed)]
    first = shared_trajectories.summary
    assert first.refused == 0 and first.tasks >= 20 and first.errors > 0 and first.tools > 0
    assert first.environments > 0
    before = await _fingerprint(store, project)
    again = await Ingestor(store, shared_trajectories.embedder).ingest(
        read_path(folder, project=project)
    )
    assert again.written == 0 and again.unchanged == first.written
    assert await _fingerprint(store, project) == before
