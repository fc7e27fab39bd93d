"""Snippet tests that can run (issue 25, item 4): code taken from a run keeps the test command
the run used, and verify runs it when no command is given; instance values in code become
parameters with runnable defaults."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest

from metisgraph.graph.store import GraphStore
from metisgraph.ingest.adapters import read_path
from metisgraph.ingest.adapters.base import Parsed, SourceRef, validate_record
from metisgraph.ingest.pipeline import Ingestor
from metisgraph.ingest.records import EpisodeRecord
from metisgraph.ingest.sandbox import Sandbox, SandboxSettings, verify_snippet
from metisgraph.ingest.snippets.runner_commands import runner_invocation

pytestmark = [pytest.mark.anyio]

FIXTURES = Path(__file__).parent / "fixtures"
RUNS = {  # the adapters' own runs, and one of this module's (a run that tests with doctest)
    "openhands": FIXTURES / "trajectories" / "openhands",
    "mini-swe-agent-tools": FIXTURES / "trajectories" / "mini-swe-agent-tools",
    "mini-swe-agent-doctest": FIXTURES / "snippets" / "runs" / "mini-swe-agent-doctest",
}


async def _ingest(store: GraphStore, embedder: Any, project: str, *folders: str) -> None:
    items = [i for f in folders for i in read_path(RUNS[f], project=project)]
    await Ingestor(store, embedder).ingest(items)


async def _snippets(store: GraphStore, project: str) -> list[dict[str, Any]]:
    return await store.run_text(
        """MATCH (s:Snippet {project: $p})
           RETURN s.id AS id, s.kind AS kind, s.origin AS origin, s.files AS files,
                  s.test_command AS test_command ORDER BY s.id""",
        {"p": project},
        read=True,
    )


@pytest.mark.slow
async def test_snippets_from_a_run_carry_the_test_command_the_run_used(
    store: GraphStore, embedder: Any, project: str
) -> None:
    await _ingest(
        store, embedder, project, "openhands", "mini-swe-agent-tools", "mini-swe-agent-doctest"
    )
    found = await _snippets(store, project)
    by_files = {(s["kind"], s["origin"], tuple(s["files"] or ())): s for s in found}
    # The edit OpenHands made, and its final patch: tested afterwards with `pytest tests -q`.
    edit = by_files[("function", "editor", ("/workspace/src/widgets/core.py",))]
    assert edit["test_command"] == "python -m pytest tests -q"
    # A patch submitted after its tests ran gets the last test run before it.
    patches = {s["files"][0]: s["test_command"] for s in found if s["kind"] == "patch"}
    assert "python -m pytest tests/test_core.py -q" in patches.values()
    # Only the runner's own command is kept, not `cd /testbed &&` nor `| tail`.
    written = by_files[("function", "heredoc", ("slug.py",))]
    assert written["test_command"] == "python3 -m doctest -v slug.py"
    # Command lines the run merely ran (a grep, the test run itself) get none.
    assert all(s["test_command"] is None for s in found if s["origin"] == "command")
    assert patches.get("LICENSE") is None  # that run never tested anything


@pytest.mark.sandbox
async def test_verify_without_a_command_runs_the_test_command_of_the_run(
    store: GraphStore, embedder: Any, project: str
) -> None:
    from metisgraph.ingest.sandbox.support import probe

    uid = 0x70000000 + 1 + random.randrange(1_000_000)  # as tests/test_sandbox_gate.py
    settings = SandboxSettings(uid=uid, gid=uid, timeout_s=20, processes=16)
    if not (support := probe(settings)).ready:
        pytest.skip(support.reason())
    await _ingest(store, embedder, project, "mini-swe-agent-doctest")
    (written,) = [s for s in await _snippets(store, project) if s["origin"] == "heredoc"]
    verdict = await verify_snippet(
        store, Sandbox(settings), project=project, snippet_id=written["id"]
    )
    assert verdict.command == "python3 -m doctest -v slug.py"
    assert verdict.status == "passed", verdict
    assert "2 passed and 0 failed" in (verdict.output_tail or "")


@pytest.mark.shared
async def test_shared_runs_give_their_code_the_test_commands_they_used(
    store: GraphStore, shared_trajectories: Any
) -> None:
    project, items = shared_trajectories.project, shared_trajectories.items
    ran: dict[str, set[str]] = {}  # task -> every test invocation its steps ran
    for item in items:
        record = item.record if isinstance(item, Parsed) else None
        if isinstance(record, EpisodeRecord) and record.action and record.action.command:
            found = runner_invocation(record.action.command)
            if found:
                ran.setdefault(str(record.task_id), set()).add(found)
    rows = await store.run_text(
        """MATCH (e:Episode {project: $p})-[:GENERATED|USED|MODIFIED]->(s:Snippet)
           WHERE s.project = $p
           RETURN s.id AS id, collect(DISTINCT e.task_id) AS tasks, s.kind AS kind,
                  s.origin AS origin, s.test_command AS test_command""",
        {"p": project},
        read=True,
    )
    carried = [r for r in rows if r["test_command"]]
    assert len({t for r in carried for t in r["tasks"]}) >= 10, len(carried)
    for row in carried:  # each is one a run that holds it ran, the runner's command only
        assert any(row["test_command"] in ran.get(str(t), ()) for t in row["tasks"]), row
        assert row["origin"] != "command"
    # The patches of runs that tested something carry one.
    tested = [r for r in rows if r["kind"] == "patch" and any(str(t) in ran for t in r["tasks"])]
    assert tested and all(r["test_command"] for r in tested), tested


REPORTS = """import os

DATA = "/home/alice/reports/q1.csv"
SERVER = "10.20.30.40"
# the nightly job runs on build-07.corp.internal


def report_dir():
    return os.path.dirname(DATA)


def endpoint(name):
    return f"http://{SERVER}:8080/{name}"
"""
REPORTS_TEST = (
    'assert report_dir() == "/home/alice/reports"\n'
    'assert endpoint("daily") == "http://10.20.30.40:8080/daily"\n'
    'print(endpoint("daily"), report_dir())\n'
)


@pytest.mark.sandbox
async def test_instance_values_become_parameters_with_defaults_that_run(
    store: GraphStore, embedder: Any, project: str
) -> None:
    """A home path, an IP and a host in code and its test are stored as parameters with
    runnable defaults (never the originals), read by the code and its test alike: verify
    runs the template as stored, and with the caller's values."""
    from metisgraph.ingest.sandbox.support import probe

    uid = 0x70000000 + 1 + random.randrange(1_000_000)
    settings = SandboxSettings(uid=uid, gid=uid, timeout_s=20, processes=16)
    if not (support := probe(settings)).ready:
        pytest.skip(support.reason())
    raw = {"record_type": "snippet", "project": project, "code": REPORTS,
           "tests": [REPORTS_TEST], "language": "python"}  # fmt: skip
    item = validate_record(raw, SourceRef("test", 1))
    assert isinstance(item, Parsed), item
    summary = await Ingestor(store, embedder).ingest([item], keep_results=True)
    (done,) = [r for r in summary.results if r.kind == "snippet"]
    rows = await store.run_text(
        """MATCH (s:Snippet {project: $p, id: $id})
           RETURN s.template AS template, s.tests AS tests,
                  s.template_parameters AS parameters, properties(s) AS everything""",
        {"p": project, "id": done.id},
        read=True,
    )
    stored = rows[0]
    for private in ("alice", "10.20.30.40", "build-07"):
        assert private not in repr(stored["everything"]), private
    assert 'report_dir() == "{{home}}/reports"' in stored["tests"][0]
    assert "http://{{server}}:8080/daily" in stored["tests"][0]
    assert "# the nightly job runs on {{host}}" in stored["template"]
    defaults = {p["name"]: p["default"] for p in json.loads(stored["parameters"])}
    assert defaults == {"data": "{{home}}/reports/q1.csv", "server": "127.0.0.1",
                        "host": "localhost", "home": "/work/home"}  # fmt: skip

    plain = await verify_snippet(store, Sandbox(settings), project=project, snippet_id=done.id)
    assert plain.status == "passed", plain
    assert "http://127.0.0.1:8080/daily /work/home/reports" in (plain.output_tail or "")
    given = await verify_snippet(
        store, Sandbox(settings), project=project, snippet_id=done.id,
        parameters={"home": "/srv/bob", "server": "192.0.2.7"},
    )  # fmt: skip
    assert given.status == "passed", given
    assert "http://192.0.2.7:8080/daily /srv/bob/reports" in (given.output_tail or "")
