"""Verdicts from the reports agent-evaluation repositories publish, recognised by content:
lists of ids by status (SWE-agent's results.json beside trajs/, the SWE-bench experiments'
per-run results.json, one published with a trailing comma), contradictions and tasks no
list judges left unknown with a reason, and every verdict keeping its source file."""

from __future__ import annotations

import json
import logging
import shutil
from pathlib import Path
from typing import Any

import pytest

from metisgraph.ingest.adapters import Parsed, Refused, detect_format, read_path
from metisgraph.ingest.pipeline import Ingestor

HARNESS = Path(__file__).parent / "fixtures" / "harness"
LISTS = HARNESS / "swe-agent-lists" / "results.json"
EXPERIMENTS = (
    HARNESS / "experiments" / "20240620_sweagent_claude3-5sonnet" / "results" / "results.json"
)


def _read(path: Path) -> tuple[dict[str, Any], dict[str, str]]:
    verdicts: dict[str, Any] = {}
    unknown: dict[str, str] = {}
    for item in read_path(path):
        if isinstance(item, Parsed):
            verdicts[item.record.instance] = item.record
        else:
            assert isinstance(item, Refused)
            unknown[item.raw["instance"]] = item.describe()  # type: ignore[index]
    return verdicts, unknown


def test_swe_agent_results_read_by_content_not_by_name(tmp_path: Path) -> None:
    run = tmp_path / "sweagent-gpt4o" / "evaluation"
    run.mkdir(parents=True)
    renamed = run / "sb-cli-report.final.json"  # no name we know: the keys say what it is
    shutil.copy(LISTS, renamed)
    assert detect_format(renamed) == "harness-report"
    verdicts, unknown = _read(renamed)
    assert {i: v.resolved for i, v in verdicts.items()} == {
        "acme__widgets-101": True,  # `resolved` as a list of ids
        "acme__widgets-102": False,
        "acme__widgets-103": False,  # an empty patch resolves nothing
        "acme__widgets-107": False,
    }
    assert "contradictory" in unknown.pop("acme__widgets-104")
    assert set(unknown) == {"acme__widgets-105", "acme__widgets-106"}
    assert "only in completed_ids, submitted_ids" in unknown["acme__widgets-105"]
    assert "only in error_ids" in unknown["acme__widgets-106"]
    assert {v.run for v in verdicts.values()} == {"sweagent-gpt4o"}
    sources = {v.source for v in verdicts.values()}
    assert sources == {"sweagent-gpt4o/evaluation/sb-cli-report.final.json"}


def test_experiments_results_with_a_trailing_comma_read_with_one_warning(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.WARNING, logger="metisgraph")
    with pytest.raises(json.JSONDecodeError):
        json.loads(EXPERIMENTS.read_text())  # as published: not strict JSON
    assert detect_format(EXPERIMENTS) == "harness-report"
    verdicts, unknown = _read(EXPERIMENTS)
    assert {i: v.resolved for i, v in verdicts.items()} == {
        "acme__widgets-201": True,
        "acme__widgets-206": True,
        "acme__widgets-202": False,  # applied, tests ran, not resolved
        "acme__widgets-204": False,
        "acme__widgets-207": False,  # nothing generated
    }
    assert "in resolved and in no_apply: contradictory" in unknown["acme__widgets-203"]
    assert "test_errored" in unknown["acme__widgets-205"]  # the harness failed: unknown
    warned = [r for r in caplog.records if "trailing comma" in r.getMessage()]
    assert len(warned) == 1 and str(EXPERIMENTS) in warned[0].getMessage()
    source = "20240620_sweagent_claude3-5sonnet/results/results.json"
    assert {v.source for v in verdicts.values()} == {source}
    assert {v.harness for v in verdicts.values()} == {"status-lists"}


@pytest.mark.anyio
async def test_a_run_folder_gets_its_verdicts_and_their_source(
    store: Any, embedder: Any, project: str, tmp_path: Path
) -> None:
    run = tmp_path / "sweagent-run"
    (run / "trajs").mkdir(parents=True)
    traj = json.loads((HARNESS / "agent-a" / "trajs" / "acme__widgets-101.traj.json").read_text())
    for instance in ("acme__widgets-101", "acme__widgets-102", "acme__widgets-104"):
        traj["instance_id"] = instance
        (run / "trajs" / f"{instance}.traj.json").write_text(json.dumps(traj))
    report = {
        "completed_ids": ["acme__widgets-101", "acme__widgets-102", "acme__widgets-104"],
        "resolved": ["acme__widgets-101", "acme__widgets-104"],
        "unresolved_ids": ["acme__widgets-102", "acme__widgets-104"],
    }
    (run / "results.json").write_text(json.dumps(report))
    summary = await Ingestor(store, embedder).ingest(read_path(run, project=project))
    assert (summary.verdicts, summary.refused) == (2, 1), summary
    rows = await store.run_text(
        """MATCH (t:Task {project: $p})
           OPTIONAL MATCH (t)-[:JUDGED_BY]->(v:Verdict)
           RETURN t.instance AS instance, t.outcome AS outcome, t.verdict AS verdict,
                  v.sources AS sources""",
        {"p": project},
        read=True,
    )
    found = {r["instance"]: r for r in rows}
    assert (found["acme__widgets-101"]["verdict"], found["acme__widgets-101"]["outcome"]) == (
        "resolved",
        "success",
    )
    assert found["acme__widgets-102"]["verdict"] == "unresolved"
    assert found["acme__widgets-104"]["verdict"] is None  # contradictory: left unknown
    assert found["acme__widgets-101"]["sources"] == ["sweagent-run/results.json"]
