"""What is stored is read: an episode's facts and action parameters, a task's constraints and
the tests its harness verdicts failed come back in recall, planContext, the task chain, and a
test's lineage across runs — on the real app, Neo4j and model."""

from __future__ import annotations

from typing import Any

import pytest

from metisgraph.ingest.adapters import SourceRef, validate_record
from metisgraph.ingest.pipeline import Ingestor

pytestmark = pytest.mark.anyio

FAILING = "tests/test_ledger.py::test_rounding_of_refunds"
OTHER = "tests/test_ledger.py::test_totals"

RECALL = """
query($project: String!, $query: String!) {
  recall(project: $project, query: $query, k: 3) {
    hits { episode { id facts actionParameters }
           task { id constraints testsFailed } }
  }
}"""
PLAN = """
query($project: String!, $goal: String!) {
  planContext(project: $project, task: {goal: $goal}, k: 3, budget: 4000) { prompt }
}"""
TASK = """
query($id: ID!) {
  task(id: $id) {
    constraints
    verdicts { run instance resolved testsFailed testsPassed }
    steps { episodeId actionParameters facts }
  }
}"""
LINEAGE = """
query($projects: [String!]!, $test: String!) {
  testLineage(projects: $projects, test: $test) {
    test failing truncated
    runs { run failed resolved tasks { taskId } }
    firstFailed { run } lastFailed { run } passingSince { run }
  }
}"""


def _records(project: str) -> list[dict[str, Any]]:
    """One task per run of the same instance: run-1 and run-2 fail the refund test, run-3
    passes it. run-1's step carries facts and action parameters."""
    out: list[dict[str, Any]] = []
    for n, resolved in ((1, False), (2, False), (3, True)):
        task = f"ledger-{n}"
        out += [
            {"record_type": "task", "project": project, "id": task, "run": f"run-{n}",
             "instance": "acme__ledger-7", "goal": "fix the rounding of refunds in the ledger",
             "constraints": ["do not change the public API of Ledger", "keep Python 3.9 support"],
             "started_at": f"2026-11-0{n}T10:00:00Z"},
            {"record_type": "episode", "project": project, "task_id": task, "step": 1,
             "summary": f"Rounded refunds with Decimal.quantize (attempt {n})",
             "action": {"type": "command", "command": "pytest tests/test_ledger.py",
                        "parameters": {"rounding": "ROUND_HALF_EVEN", "places": 2}},
             "facts": {"module": "ledger/refunds.py", "attempt": n},
             "outcome": "success" if resolved else "failure"},
            {"record_type": "verdict", "project": project, "run": f"run-{n}",
             "instance": "acme__ledger-7", "resolved": resolved,
             "tests": {"FAIL_TO_PASS": {"success": [FAILING] if resolved else [],
                                        "failure": [] if resolved else [FAILING]},
                       "PASS_TO_PASS": {"success": [OTHER], "failure": []}}},
        ]  # fmt: skip
    return out


@pytest.fixture
async def judged(store: Any, embedder: Any, project: str) -> str:
    items = [validate_record(r, SourceRef("test", n)) for n, r in enumerate(_records(project))]
    summary = await Ingestor(store, embedder).ingest(items)
    assert summary.refused == 0 and summary.verdicts == 3
    return project


async def test_recall_shows_facts_parameters_constraints_and_failed_tests(
    gql: Any, judged: str
) -> None:
    body = gql(RECALL, {"project": judged, "query": "rounding of refunds with Decimal"})
    hits = body["data"]["recall"]["hits"]
    assert hits, body
    by_task = {h["task"]["id"]: h for h in hits}
    first = by_task["ledger-1"]
    assert first["episode"]["actionParameters"] == {"rounding": "ROUND_HALF_EVEN", "places": 2}
    assert first["episode"]["facts"] == {"module": "ledger/refunds.py", "attempt": 1}
    assert first["task"]["constraints"] == [
        "do not change the public API of Ledger",
        "keep Python 3.9 support",
    ]
    assert first["task"]["testsFailed"] == [FAILING]
    assert by_task.get("ledger-3", {"task": {"testsFailed": []}})["task"]["testsFailed"] == []


async def test_plan_context_renders_parameters_and_constraints(gql: Any, judged: str) -> None:
    body = gql(PLAN, {"project": judged, "goal": "fix the rounding of refunds in the ledger"})
    prompt = body["data"]["planContext"]["prompt"]
    assert "parameters: rounding=ROUND_HALF_EVEN, places=2" in prompt
    assert "task constraints: do not change the public API of Ledger; keep Python 3.9" in prompt
    assert f"tests failed: {FAILING}" in prompt  # under a failure memory


async def test_the_task_chain_carries_constraints_verdicts_and_step_fields(
    gql: Any, judged: str
) -> None:
    from metisgraph.graph import NodeRef

    body = gql(TASK, {"id": NodeRef("Task", judged, "ledger-2").id})
    task = body["data"]["task"]
    assert task["constraints"] == [
        "do not change the public API of Ledger",
        "keep Python 3.9 support",
    ]
    assert task["verdicts"] == [
        {"run": "run-2", "instance": "acme__ledger-7", "resolved": False,
         "testsFailed": [FAILING], "testsPassed": [OTHER]}
    ]  # fmt: skip
    step = task["steps"][0]
    assert step["actionParameters"] == {"rounding": "ROUND_HALF_EVEN", "places": 2}
    assert step["facts"] == {"module": "ledger/refunds.py", "attempt": 2}


async def test_a_failing_test_is_followed_across_runs(gql: Any, judged: str) -> None:
    body = gql(LINEAGE, {"projects": [judged], "test": FAILING})
    found = body["data"]["testLineage"]
    assert [(r["run"], r["failed"], r["resolved"]) for r in found["runs"]] == [
        ("run-1", True, False),
        ("run-2", True, False),
        ("run-3", False, True),
    ]
    assert [r["tasks"][0]["taskId"] for r in found["runs"]] == ["ledger-1", "ledger-2", "ledger-3"]
    assert found["firstFailed"]["run"] == "run-1" and found["lastFailed"]["run"] == "run-2"
    assert found["passingSince"]["run"] == "run-3"
    assert found["failing"] is False and found["truncated"] is False
    never = gql(LINEAGE, {"projects": [judged], "test": OTHER})["data"]["testLineage"]
    assert never["firstFailed"] is None and never["passingSince"] is None
    assert len(never["runs"]) == 3


async def test_test_lineage_refuses_what_it_cannot_read_or_ask(gql: Any, judged: str) -> None:
    blank = gql(LINEAGE, {"projects": [judged], "test": "  "})
    assert "test: must not be blank" in blank["errors"][0]["message"]
    none = gql(LINEAGE, {"projects": [], "test": FAILING})
    assert "projects" in none["errors"][0]["message"]
