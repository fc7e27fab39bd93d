"""`metisgraph eval lineage`: labels read and checked, claims matched and scored, and the
command end to end on a small run written for these tests (real Neo4j, real model)."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
import typer
from typer.testing import CliRunner

from metisgraph.api.cli import eval as cli_eval
from metisgraph.api.eval.lineage import LabelView, match, score
from metisgraph.api.eval.lineage_labels import (
    LabelSetError,
    RunRef,
    StepRecord,
    StepRef,
    load_labels,
    read_runs,
    steps_of,
)
from metisgraph.graph.lineage import Claim, ErrorClaims
from metisgraph.graph.settings import Neo4jSettings

REPO = Path(__file__).resolve().parent.parent
SHARED_LABELS = REPO / "bench" / "labels" / "shared-trajectories.lineage.jsonl"


def _line(**changes: Any) -> str:
    base = {
        "source": "s", "run": "a.traj.json", "item": None, "error": "E: boom",
        "seen": ["messages[2]"], "verdict": "fixed", "step": "messages[4]", "reason": "r",
    }  # fmt: skip
    base.update(changes)
    return json.dumps(base)


def test_labels_load_and_bad_lines_are_named(tmp_path: Path) -> None:
    good = tmp_path / "good.jsonl"
    good.write_text(_line() + "\n" + _line(verdict="unresolved", step=None) + "\n")
    labels = load_labels(good)
    assert [(x.line, x.verdict, x.step) for x in labels] == [
        (1, "fixed", "messages[4]"),
        (2, "unresolved", None),
    ]
    assert labels[0].accepted == {"messages[4]"}
    bad = tmp_path / "bad.jsonl"
    bad.write_text(
        "\n".join(
            [
                _line(verdict="solved"),
                _line(step=None),
                _line(verdict="unresolved"),
                _line(seen=[]),
                _line(item=0),
                "{not json",
            ]
        )
    )
    with pytest.raises(LabelSetError) as raised:
        load_labels(bad)
    message = str(raised.value)
    for expected in (
        ":1: field 'verdict'",
        ":2: field 'step'",
        ":3: field 'step'",
        ":4: field 'seen'",
        ":5: field 'item'",
        ":6: invalid JSON",
    ):
        assert expected in message


def test_the_shared_label_file_holds_what_its_readme_counts() -> None:
    labels = load_labels(SHARED_LABELS)
    assert len(labels) == 59
    assert Counter(x.verdict for x in labels) == {"fixed": 37, "workaround": 6, "unresolved": 16}
    by_source = Counter((x.source, x.verdict) for x in labels)
    assert by_source[("openhands_output_jsonl", "fixed")] == 15
    assert by_source[("swe-agent_traj", "fixed")] == 5
    # No product key: runs by file, steps by their place in the file.
    assert all(
        p.split("[")[0] in {"messages", "trajectory", "history"} for x in labels for p in x.seen
    )


@pytest.mark.shared
def test_every_shared_label_names_a_step_of_its_run(shared_dir: Path) -> None:
    labels = load_labels(SHARED_LABELS)
    runs = shared_dir / "trajectories"
    steps = steps_of(read_runs(runs, [x.run for x in labels]))
    for label in labels:
        for pointer in [*label.seen, *label.accepted]:
            assert StepRef(label.run, pointer) in steps, f"{label.name}: no step {pointer}"


def _view(verdict: str, step: str | None, **product: Any) -> LabelView:
    (label,) = load_labels_from(_line(verdict=verdict, step=step))
    view = LabelView(label, found=product.pop("found", True))
    view.fixes = set(product.pop("fixes", ()))
    view.workarounds = set(product.pop("workarounds", ()))
    view.evidence = product.pop("evidence", {})
    view.failed_task = product.pop("failed", False)
    return view


def load_labels_from(*lines: str) -> list[Any]:
    """Labels from their lines, as the file reader makes them (a file of those lines)."""
    import tempfile

    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "labels.jsonl"
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
        return load_labels(path)


def test_scores_count_claims_and_recall_by_step() -> None:
    views = [
        _view("fixed", "messages[4]", fixes={"messages[4]"}, evidence={"messages[4]": ["x"]}),
        _view("fixed", "messages[4]", fixes={"messages[6]", "messages[4]"}),  # one right claim
        _view("fixed", "messages[4]", found=False),  # never extracted: a miss
        _view("workaround", "messages[8]", fixes={"messages[8]"}, failed=True),
        _view("unresolved", None),  # found, nothing claimed: right
        _view("unresolved", None, workarounds={"messages[9]"}),
    ]
    got = score(views)
    assert got["fixed"]["claims"] == 4 and got["fixed"]["right"] == 2
    assert got["fixed"]["precision"] == 0.5
    assert got["fixed"]["recall"] == round(2 / 3, 3)
    assert got["workaround"]["precision"] == 0.0 and got["workaround"]["recall"] == 0.0
    assert got["unresolved"]["precision"] == 1.0 and got["unresolved"]["recall"] == 0.5
    assert got["failed_tasks"] == {"fix_claims": 1, "without_evidence": 1, "wrong": 1}
    assert got["found"] == 5


def test_product_errors_go_to_the_label_at_their_step_with_the_closest_line() -> None:
    run = RunRef("a.traj.json")
    labels = load_labels_from(
        _line(error="TypeError: bad operand", seen=["messages[2]"], step="messages[4]"),
        _line(error="ls: cannot access 'x'", seen=["messages[2]"], step="messages[6]"),
    )
    steps = {
        StepRef(run, f"messages[{i}]"): StepRecord("p", "t", f"t:{i}", "command", "x")
        for i in (2, 4, 6, 8)
    }

    def error(key: str, sample: str, kind: str, seen: set[str], fixes: list[str]) -> ErrorClaims:
        claims = tuple(Claim(e, "RESOLVED") for e in fixes)
        return ErrorClaims("p", "t", "open", "unknown", key, kind, sample, frozenset(seen),
                           claims, ())  # fmt: skip

    views, unlabelled = match(
        labels,
        steps,
        [
            error(
                "k1", "Traceback ...\nTypeError: bad operand", "python:TypeError", {"t:2"}, ["t:4"]
            ),
            error("k2", "ls: cannot access 'x': No such file", "exit 2", {"t:2"}, []),
            error("k3", "something else", "log:error", {"t:8"}, ["t:8"]),
        ],
    )
    assert views[0].fixes == {"messages[4]"} and views[0].found
    assert views[1].found and views[1].product_verdict == "unresolved"
    assert [(u.sample, u.fixes) for u in unlabelled] == [("something else", 1)]


@pytest.fixture(scope="module")
def cli() -> typer.Typer:
    root = typer.Typer()
    root.add_typer(cli_eval.app, name="eval")
    return root


@pytest.mark.slow
def test_eval_lineage_scores_a_run_through_ingest_and_the_graph(
    cli: typer.Typer,
    neo4j_settings: Neo4jSettings,
    embedder: Any,  # the commands take the session's model (conftest)
    fixtures_dir: Path,
) -> None:
    password = neo4j_settings.password.get_secret_value() if neo4j_settings.password else ""
    env = {"NEO4J_URI": neo4j_settings.uri or "", "NEO4J_PASSWORD": password, "COLUMNS": "300"}
    lineage = fixtures_dir / "lineage"
    args = ["eval", "lineage", str(lineage / "runs.labels.jsonl"), "--runs", str(lineage / "runs")]
    result = CliRunner(env=env).invoke(cli, [*args, "--json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    overall = report["overall"]
    assert overall["errors"] == 3
    labels = {row["error"][:20]: row for row in report["labels"]}
    # Every labelled error of this run is one the product extracts.
    assert overall["found"] == 3 and all(r["product"] != "not found" for r in labels.values())
    fixed = [r for r in report["labels"] if r["verdict"] == "fixed"]
    recalled = [r for r in fixed if r["step"] in r["fixes"]]
    assert overall["fixed"]["recall"] == round(len(recalled) / len(fixed), 3)
    claims = sum(len(r["fixes"]) for r in report["labels"])
    assert overall["fixed"]["claims"] == claims
    assert set(report["sources"]) == {"runs"}
    table = CliRunner(env=env).invoke(cli, args)
    assert table.exit_code == 0 and "lineage attribution" in table.output


def test_eval_lineage_refuses_a_bad_label_file_before_starting(
    cli: typer.Typer, tmp_path: Path
) -> None:
    bad = tmp_path / "labels.jsonl"
    bad.write_text(_line(verdict="maybe") + "\n")
    result = CliRunner().invoke(cli, ["eval", "lineage", str(bad), "--runs", str(tmp_path)])
    assert result.exit_code == 1
    assert "field 'verdict'" in result.output
