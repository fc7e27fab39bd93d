"""`metisgraph eval plan`: the fixing step's action looked for in planning prompts — the
matching on its own, and the command end to end on a small labelled run (real Neo4j, real
model)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import typer
from typer.testing import CliRunner

from metisgraph.api.cli import eval as cli_eval
from metisgraph.api.eval.plan import action_head, holds
from metisgraph.graph.settings import Neo4jSettings


def test_the_action_head_is_its_first_line_collapsed() -> None:
    assert action_head("\n  pip   install sqlparse -q\nother") == "pip install sqlparse -q"
    assert action_head(None) is None and action_head("  \n ") is None
    assert len(action_head("x" * 500) or "") == 80


def test_a_prompt_holds_the_fix_only_with_its_step_and_its_action() -> None:
    prompt = (
        "M1 [success] Installed it (outcome success; id t:4)\n   did: pip install\n     sqlparse -q"
    )
    assert holds(prompt, ["t:4"], ["pip install sqlparse -q"]) == (True, True)
    assert holds(prompt, ["t:9"], ["pip install sqlparse -q"]) == (False, False)
    assert holds(prompt, ["t:4"], ["python -m pip install x"]) == (False, True)
    assert holds(prompt, ["t:4"], [None]) == (False, True)


@pytest.fixture(scope="module")
def cli() -> typer.Typer:
    root = typer.Typer()
    root.add_typer(cli_eval.app, name="eval")
    return root


@pytest.mark.slow
def test_eval_plan_scores_the_fixed_errors_of_a_run(
    cli: typer.Typer,
    neo4j_settings: Neo4jSettings,
    embedder: Any,  # the commands take the session's model (conftest)
    fixtures_dir: Path,
    tmp_path: Path,
) -> None:
    password = neo4j_settings.password.get_secret_value() if neo4j_settings.password else ""
    env = {"NEO4J_URI": neo4j_settings.uri or "", "NEO4J_PASSWORD": password, "COLUMNS": "300"}
    lineage = fixtures_dir / "lineage"
    prompts = tmp_path / "prompts.jsonl"
    args = ["eval", "plan", str(lineage / "runs.labels.jsonl"), "--runs", str(lineage / "runs")]
    result = CliRunner(env=env).invoke(cli, [*args, "--json", "--prompts", str(prompts)])
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    overall = report["overall"]
    assert report["budget"] == 2000 and set(report["sources"]) == {"runs"}
    assert overall["fixed"] == 2 and overall["failed"] == 0  # the unresolved error is not asked
    cases = report["cases"]
    assert [c["goal"][:36] for c in cases] == [
        "acme/ledger: ModuleNotFoundError: No",
        "acme/ledger: TypeError: unsupported ",
    ]
    assert all(0 < c["tokens"] <= 2000 for c in cases)
    assert overall["holds"] == sum(c["holds"] for c in cases)
    assert overall["claims_none_while_left_out"] == sum(c["claims_none"] for c in cases)
    written = [json.loads(line) for line in prompts.read_text().splitlines()]
    assert [w["label"] for w in written] == [c["label"] for c in cases]
    for case in written:  # the score is what the prompt shows
        assert case["holds"] == (case["cited"] and any(f in " ".join(case["prompt"].split())
                                                       for f in case["fix"] if f))  # fmt: skip
    # The installed package: a one-line fix in a small run is in its prompt.
    assert written[0]["holds"], written[0]["prompt"]
    table = CliRunner(env=env).invoke(cli, args)
    assert table.exit_code == 0 and "the fix in the planning prompt" in table.output
