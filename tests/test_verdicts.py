"""Harness verdicts are outcomes: read by shape, matched to tasks by run and instance, in
either order; the verdict beats the agent's claim and both are kept."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from metisgraph.ingest.adapters import Parsed, detect_format, read_path
from metisgraph.ingest.adapters.layout import run_name
from metisgraph.ingest.pipeline import Ingestor
from metisgraph.ingest.records import VerdictRecord

pytestmark = pytest.mark.anyio
HARNESS = Path(__file__).parent / "fixtures" / "harness"


def test_reports_are_recognised_by_shape() -> None:
    summary = HARNESS / "agent-a" / "results" / "results_summary.json"
    report = HARNESS / "agent-b" / "eval" / "acme__widgets-101.report.json"
    assert detect_format(summary) == detect_format(report) == "harness-report"
    verdicts = [i.record for i in read_path(report) if isinstance(i, Parsed)]
    assert len(verdicts) == 1 and isinstance(verdicts[0], VerdictRecord)
    verdict = verdicts[0]
    assert (verdict.run, verdict.instance, verdict.resolved) == (
        "agent-b",
        "acme__widgets-101",
        False,
    )
    assert verdict.tests["FAIL_TO_PASS"]["failure"] == ["tests/test_core.py::test_negative_resize"]


def test_run_names_follow_the_layouts(tmp_path: Path) -> None:
    for path in (
        "run-7/trajs/x__y-1.traj.json",
        "run-7/trajs/x__y-1/x__y-1.traj.json",
        "run-7/eval/x__y-1.report.json",
        "run-7/logs/x__y-1/report.json",
        "run-7/results/results_summary.json",
        "run-7/output.jsonl",
        "trajectories/run-7/trajs/x__y-1.traj.json",
        "trajectories/run-7/output.jsonl",
    ):
        assert run_name(tmp_path / path) == "run-7", path


def _trajectories_alone(tmp_path: Path) -> Path:
    """The two runs' trajectories without their reports beside them."""
    for agent in ("agent-a", "agent-b"):
        shutil.copytree(HARNESS / agent / "trajs", tmp_path / agent / "trajs")
    return tmp_path


def _reports() -> list[Path]:
    return [
        HARNESS / "agent-a" / "results" / "results_summary.json",
        HARNESS / "agent-b" / "eval" / "acme__widgets-101.report.json",
    ]


async def _tasks(store: Any, project: str) -> dict[str, dict[str, Any]]:
    rows = await store.run_text(
        """MATCH (t:Task {project: $p})
           OPTIONAL MATCH (t)-[:JUDGED_BY]->(v:Verdict)
           OPTIONAL MATCH (t)-[:HAS_EPISODE]->(s:Episode {kind: 'submission'})
           RETURN t.run AS run, t.instance AS instance, t.outcome AS outcome,
                  t.claimed_outcome AS claimed, t.status AS status, t.verdict AS verdict,
                  v.tests_failed AS failed, s.outcome AS submission""",
        {"p": project},
        read=True,
    )
    return {r["run"]: r for r in rows}


@pytest.mark.slow
@pytest.mark.parametrize("reports_first", [True, False])
async def test_verdicts_set_outcomes_in_either_order(
    store: Any, embedder: Any, project: str, tmp_path: Path, reports_first: bool
) -> None:
    ingestor = Ingestor(store, embedder)
    trajectories = read_path(_trajectories_alone(tmp_path), project=project)
    reports = (item for path in _reports() for item in read_path(path, project=project))
    first, second = (reports, trajectories) if reports_first else (trajectories, reports)
    done = [await ingestor.ingest(first), await ingestor.ingest(second)]
    assert sum(s.verdicts for s in done) == 2 and not any(s.refused for s in done)
    tasks = await _tasks(store, project)
    # One instance under two agents: each task gets its own run's verdict.
    a, b = tasks["agent-a"], tasks["agent-b"]
    assert a["instance"] == b["instance"] == "acme__widgets-101"
    assert (a["outcome"], a["status"], a["verdict"]) == ("success", "resolved", "resolved")
    assert (b["outcome"], b["verdict"]) == ("failure", "unresolved")
    assert a["claimed"] == b["claimed"] == "success"  # both agents submitted: their claim
    assert b["failed"] == ["tests/test_core.py::test_negative_resize"]
    assert (a["submission"], b["submission"]) == ("success", "failure")


async def _submitted_code(store: Any, project: str) -> dict[str, dict[str, Any]]:
    """Per run: the reports its submission made about the code it submitted, and that
    code's statistics."""
    rows = await store.run_text(
        """MATCH (t:Task {project: $p})-[:HAS_EPISODE]->(e:Episode {kind: 'submission'})
                 -[:GENERATED]->(s:Snippet)
           OPTIONAL MATCH (o:OutcomeReport {applied_in: e.id})-[:ABOUT]->(s)
           WITH t, s, collect(o.success) AS reports
           RETURN t.run AS run, s.id AS snippet, reports, s.successes AS successes,
                  s.failures AS failures, s.uses AS uses""",
        {"p": project},
        read=True,
    )
    return {r["run"]: r for r in rows}


@pytest.mark.slow
@pytest.mark.parametrize("reports_first", [True, False])
async def test_a_verdict_is_feedback_about_the_code_the_run_submitted(
    store: Any, embedder: Any, project: str, tmp_path: Path, reports_first: bool
) -> None:
    """Both agents submit the same patch and claim success; the harness says it passed for
    agent-a and failed its test for agent-b. The patch is told each verdict, not the
    claims — once each, whichever came first."""
    ingestor = Ingestor(store, embedder)
    trajectories = list(read_path(_trajectories_alone(tmp_path), project=project))
    reports = [item for path in _reports() for item in read_path(path, project=project)]
    for batch in (reports, trajectories) if reports_first else (trajectories, reports):
        await ingestor.ingest(iter(batch))
    code = await _submitted_code(store, project)
    a, b = code["agent-a"], code["agent-b"]
    assert a["snippet"] == b["snippet"]  # one patch, two runs
    assert (a["reports"], b["reports"]) == ([True], [False])
    assert (a["uses"], a["successes"], a["failures"]) == (2, 1, 1)
    # Read again (a replayed ingest): nothing is counted twice.
    await ingestor.ingest(iter(reports))
    await ingestor.ingest(iter(trajectories))
    assert await _submitted_code(store, project) == code


@pytest.mark.shared
@pytest.mark.slow
async def test_shared_runs_outcomes_equal_their_verdicts(store: Any, shared_run: Any) -> None:
    run, project = shared_run.folder, shared_run.project  # ingested once per session
    summary = json.loads((run / "results" / "results_summary.json").read_text())
    expected = {i["instance_id"]: i["resolved"] for i in summary["instances"]}
    rows = await store.run_text(
        "MATCH (t:Task {project: $p}) RETURN t.instance AS i, t.outcome AS o, t.run AS r",
        {"p": project},
        read=True,
    )
    assert len(rows) == len(list((run / "trajs").glob("*.traj.json")))
    for row in rows:
        assert row["r"] == run.name
        assert row["o"] == ("success" if expected[row["i"]] else "failure"), row["i"]
