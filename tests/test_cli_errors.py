"""`metisgraph errors …` and `metisgraph eval signatures`, through a real typer app."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from metisgraph.api.cli import errors as cli_errors
from metisgraph.api.cli import eval as cli_eval
from metisgraph.ingest.errors.signatures import line_signature, signature_key


@pytest.fixture(scope="module")
def cli() -> typer.Typer:
    """The two sub-apps mounted as api/cli/main.py mounts them."""
    root = typer.Typer()
    root.add_typer(cli_errors.app, name="errors")
    root.add_typer(cli_eval.app, name="eval")
    return root


@pytest.fixture(scope="module")
def runner() -> CliRunner:
    # A wide terminal: typer's help panels and rich tables would wrap at the default width.
    return CliRunner(env={"COLUMNS": "300"})


def test_signature_prints_one_line_per_input_line(cli: typer.Typer, runner: CliRunner) -> None:
    lines = [
        "Failed password for invalid user admin from 10.0.0.7 port 52233 ssh2",
        "Failed password for invalid user 1234 from 192.168.3.9 port 40022 ssh2",
        "",
        "session opened for user ana by (uid=0)",
    ]
    result = runner.invoke(cli, ["errors", "signature"], input="\n".join(lines) + "\n")
    assert result.exit_code == 0, result.output
    out = result.stdout.splitlines()
    assert out == [line_signature(line) for line in lines]
    assert out[0] == out[1]  # the same template, whoever the user and wherever from
    assert out[2] == ""


def test_signature_key_prints_the_hash(cli: typer.Typer, runner: CliRunner) -> None:
    result = runner.invoke(cli, ["errors", "signature", "--key"], input="worker 7 started\n")
    assert result.exit_code == 0
    assert result.stdout.strip() == signature_key(line_signature("worker 7 started"))
    assert len(result.stdout.strip()) == 16


def test_extract_lists_errors_as_json_lines(
    cli: typer.Typer, runner: CliRunner, fixtures_dir: Path
) -> None:
    text = (fixtures_dir / "errors" / "java_caused_by.txt").read_text(encoding="utf-8")
    result = runner.invoke(cli, ["errors", "extract", "--json"], input=text)
    assert result.exit_code == 0, result.output
    errors = [json.loads(line) for line in result.stdout.splitlines()]
    assert [e["kind"] for e in errors] == ["java.sql.SQLRecoverableException", "ORA-04031"]
    assert errors[0]["chain"][0] == "org.springframework.dao.DataAccessResourceFailureException"
    assert len(errors[0]["key"]) == 16


def test_extract_says_when_there_is_nothing(cli: typer.Typer, runner: CliRunner) -> None:
    result = runner.invoke(cli, ["errors", "extract"], input="all 42 tests passed\n")
    assert result.exit_code == 0
    assert result.stdout == ""
    assert "no errors found" in result.stderr


def test_extract_text_shows_kind_template_and_frames(
    cli: typer.Typer, runner: CliRunner, fixtures_dir: Path
) -> None:
    text = (fixtures_dir / "errors" / "go_panic.txt").read_text(encoding="utf-8")
    result = runner.invoke(cli, ["errors", "extract"], input=text)
    assert "go:panic  (go)" in result.stdout
    assert "frames:   feed.Reader.Next, feed.Consume" in result.stdout


def test_eval_signatures_json(cli: typer.Typer, runner: CliRunner, fixtures_dir: Path) -> None:
    folder = fixtures_dir / "errors" / "signature_set"
    result = runner.invoke(cli, ["eval", "signatures", str(folder), "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["mean_grouping_accuracy"] == pytest.approx(0.6667, abs=1e-4)
    assert set(data["systems"]) == {"Web", "Db"}


def test_eval_signatures_writes_the_group_of_every_line(
    cli: typer.Typer, runner: CliRunner, fixtures_dir: Path, tmp_path: Path
) -> None:
    folder = fixtures_dir / "errors" / "signature_set"
    out = tmp_path / "groups.jsonl"
    result = runner.invoke(cli, ["eval", "signatures", str(folder), "--groups", str(out)])
    assert result.exit_code == 0, result.output
    rows = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert len(rows) == 9 and {r["system"] for r in rows} == {"Web", "Db"}
    web = [r for r in rows if r["system"] == "Web"]
    assert len({r["group"] for r in web}) == 3  # the three groups the rules find in Web


def test_eval_signatures_table(cli: typer.Typer, runner: CliRunner, fixtures_dir: Path) -> None:
    folder = fixtures_dir / "errors" / "signature_set"
    result = runner.invoke(cli, ["eval", "signatures", str(folder), "--method", "drain3"])
    assert result.exit_code == 0, result.output
    assert "grouping accuracy" in result.stdout and "drain3" in result.stdout
    assert "Web" in result.stdout and "mean" in result.stdout


def test_eval_signatures_names_a_bad_line(
    cli: typer.Typer, runner: CliRunner, fixtures_dir: Path
) -> None:
    folder = fixtures_dir / "errors" / "bad_set"
    result = runner.invoke(cli, ["eval", "signatures", str(folder)])
    assert result.exit_code == 1
    assert "lines.jsonl:2: missing field 'content'" in result.stderr


def test_eval_signatures_refuses_an_unknown_method(
    cli: typer.Typer, runner: CliRunner, fixtures_dir: Path
) -> None:
    folder = fixtures_dir / "errors" / "signature_set"
    result = runner.invoke(cli, ["eval", "signatures", str(folder), "--method", "magic"])
    assert result.exit_code == 2
    assert "choose from rules, families, drain3" in result.output


def test_ingest_with_nothing_to_read_exits_2_before_opening_anything(
    runner: CliRunner, tmp_path: Path
) -> None:
    from metisgraph.api.cli import app

    (tmp_path / "notes.txt").write_text("hello")
    result = runner.invoke(app, ["ingest", str(tmp_path)])
    assert result.exit_code == 2
    assert "skipped" in result.stderr and "nothing to read" in result.stderr
    good = tmp_path / "records.jsonl"
    good.write_text(json.dumps({"project": "p", "summary": "x"}) + "\n")
    missing = tmp_path / "no-such-folder" / "letters.jsonl"
    result = runner.invoke(app, ["ingest", str(good), "--dead-letter", str(missing)])
    assert result.exit_code == 2 and "no folder" in result.stderr
