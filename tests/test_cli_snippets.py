"""`metisgraph snippet analyze|extract`: what a person sees, and no secret in it."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from metisgraph.api.cli.snippets import app

FIXTURES = Path(__file__).parent / "fixtures" / "code"
PASSWORD = "Sup3r-S3cret!"
# Wide enough that error boxes do not cut the message.
runner = CliRunner(env={"COLUMNS": "300"})


def test_analyze_json_has_every_field_and_no_password() -> None:
    result = runner.invoke(app, ["analyze", str(FIXTURES / "hardcoded.py"), "--json"])
    assert result.exit_code == 0, result.output
    assert PASSWORD not in result.output
    document = json.loads(result.output)
    assert document["language"] == "python"
    assert document["kind"] == "function"
    assert document["signature"] == "def export_orders(region: str='eu') -> int"
    assert document["parameters"] == [{"name": "region", "type": "str", "default": "'eu'"}]
    lifted = {"name": "password", "kind": "credential", "example": None, "default": None}
    assert lifted in document["template_parameters"]
    assert 'password="{{password}}"' in document["template"]
    assert [(f["rule"], f["line"], f["severity"]) for f in document["findings"]] == [
        ("hardcoded-credential", 9, "medium")
    ]
    assert document["risk"] == "medium"
    assert document["needs_review"] is False


def test_analyze_text_output_for_a_dangerous_script() -> None:
    result = runner.invoke(app, ["analyze", str(FIXTURES / "dangerous.sh")])
    assert result.exit_code == 0, result.output
    assert "risk        critical  (starts pending review)" in result.output
    assert "line 6  critical  curl-pipe-shell" in result.output
    assert "line 7  high  kubectl-delete" in result.output


def test_language_option_overrides_the_guess(tmp_path: Path) -> None:
    snippet = tmp_path / "snippet.txt"
    snippet.write_text("const total = (a, b = 1) => a + b;\n")
    result = runner.invoke(app, ["analyze", str(snippet), "--language", "ts", "--json"])
    document = json.loads(result.output)
    assert (document["language"], document["name"]) == ("typescript", "total")
    assert document["parameters"][1] == {"name": "b", "type": None, "default": "1"}


def test_standard_input() -> None:
    result = runner.invoke(app, ["analyze", "-", "--json"], input="rm -rf /\n")
    assert json.loads(result.output)["risk"] == "critical"


def test_missing_and_empty_files_are_clear_errors(tmp_path: Path) -> None:
    missing = runner.invoke(app, ["analyze", str(tmp_path / "nope.py")])
    assert missing.exit_code == 2
    assert "no such file" in missing.output
    empty = tmp_path / "empty.py"
    empty.write_text("\n")
    result = runner.invoke(app, ["analyze", str(empty)])
    assert result.exit_code == 2
    assert "must not be empty" in result.output


def test_extract_lists_snippets_without_secrets(tmp_path: Path) -> None:
    message = tmp_path / "message.md"
    message.write_text(
        'Run this:\n\n```bash\nexport API_TOKEN=tok-123456789\ncurl -H "Authorization: '
        'Bearer $API_TOKEN" https://api.example.com/v1/me\n```\n'
    )
    result = runner.invoke(app, ["extract", str(message), "--json"])
    assert result.exit_code == 0, result.output
    assert "tok-123456789" not in result.output
    (snippet,) = json.loads(result.output)
    assert (snippet["origin"], snippet["language"]) == ("command", "bash")
    assert "export API_TOKEN={{api_token}}" in snippet["code"]


def test_extract_a_shell_action(tmp_path: Path) -> None:
    action = tmp_path / "action.sh"
    action.write_text("cat > fix.py <<'EOF'\nprint('fixed')\nEOF\npython fix.py\n")
    result = runner.invoke(app, ["extract", str(action), "--command"])
    assert result.exit_code == 0, result.output
    assert "#1  heredoc  python  function → fix.py" in result.output
    assert "#2  command  bash  shell" in result.output
