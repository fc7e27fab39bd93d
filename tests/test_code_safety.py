"""The static safety scan: the right rule ids on the right lines, and the risk they add up to."""

from __future__ import annotations

from pathlib import Path

import pytest

from metisgraph.ingest.code import analyze_snippet, needs_review
from metisgraph.ingest.code.safety import RULES, risk_of, scan

FIXTURES = Path(__file__).parent / "fixtures" / "code"


def _hits(code: str, language: str, **kwargs: str) -> set[tuple[str, int]]:
    return {(f.rule, f.line) for f in scan(code, language, **kwargs)}


def test_dangerous_python_fixture_is_flagged_on_the_right_lines() -> None:
    code = (FIXTURES / "dangerous.py").read_text()
    assert _hits(code, "python") == {
        ("os-system", 12),
        ("rm-rf", 12),
        ("subprocess-shell", 13),
        ("unsafe-deserialization", 14),
        ("network-call", 14),
        ("unsafe-deserialization", 15),
        ("eval-exec", 16),
        ("write-outside-workdir", 17),
    }


def test_dangerous_shell_fixture_is_flagged_on_the_right_lines() -> None:
    code = (FIXTURES / "dangerous.sh").read_text()
    assert _hits(code, "bash") == {
        ("rm-rf", 4),
        ("chmod-777", 5),
        ("curl-pipe-shell", 6),
        ("network-call", 6),
        ("sudo", 6),
        ("kubectl-delete", 7),
        ("git-force-push", 8),
        ("sql-drop", 9),
        ("sql-truncate", 10),
        ("write-outside-workdir", 11),
    }


def test_severities_escalate_for_the_worst_targets() -> None:
    by_rule = {f.rule: f.severity for f in scan((FIXTURES / "dangerous.sh").read_text(), "bash")}
    assert by_rule["rm-rf"] == "critical"  # "$BUILD_DIR"/ is / when the variable is empty
    assert by_rule["curl-pipe-shell"] == "critical"
    assert by_rule["sql-drop"] == "critical"
    assert by_rule["write-outside-workdir"] == "high"  # /etc
    assert scan("rm -rf build/", "bash")[0].severity == "high"
    assert scan("DROP INDEX idx_orders;", "sql")[0].severity == "high"
    assert scan("kubectl delete ns staging", "bash")[0].severity == "critical"


def test_safe_code_has_no_findings_and_no_risk() -> None:
    code = "import subprocess\nsubprocess.run(['ls', '-la'], check=True)\nprint(len([1]))\n"
    assert scan(code, "python") == ()
    assert risk_of(scan(code, "python")) == "none"


def test_comments_and_similar_names_are_not_flagged() -> None:
    code = (
        "# os.system('rm -rf /') would be terrible\n"
        "model.eval()\n"
        "value = ast.literal_eval(text)\n"
        "subprocess.run(cmd, shell=False)\n"
    )
    assert scan(code, "python") == ()


def test_python_rules_follow_import_aliases() -> None:
    code = "from os import system as run\nimport pickle as pk\nrun('make')\npk.load(fh)\n"
    assert _hits(code, "python") == {("os-system", 3), ("unsafe-deserialization", 4)}


def test_yaml_safe_loader_is_not_flagged() -> None:
    assert scan("import yaml\nyaml.load(fh, Loader=yaml.SafeLoader)\n", "python") == ()
    assert _hits("import yaml\nyaml.load(fh)\n", "python") == {("unsafe-deserialization", 2)}


def test_multiline_subprocess_call_reports_the_call_line() -> None:
    code = "import subprocess\n\nsubprocess.check_output(\n    cmd,\n    shell=True,\n)\n"
    assert _hits(code, "python") == {("subprocess-shell", 3)}


def test_python_fragment_that_does_not_parse_still_gets_pattern_rules() -> None:
    fragment = "    if x:\n        os.system(cmd)\n  else:\n        eval(code)\n"
    assert _hits(fragment, "python") == {("os-system", 2), ("eval-exec", 4)}


def test_writes_to_scratch_or_the_work_directory_are_fine() -> None:
    assert scan("echo hi > /tmp/out.txt", "bash") == ()
    assert scan("cp a.txt /work/proj/a.txt", "bash", workdir="/work/proj") == ()
    finding = scan("cp a.txt /srv/share/a.txt", "bash")[0]
    assert (finding.rule, finding.severity) == ("write-outside-workdir", "medium")


def test_other_languages_have_their_own_rules() -> None:
    js = 'const cp = require("child_process");\ncp.exec(`rm ${dir}`);\neval(input);\n'
    assert _hits(js, "javascript") == {("subprocess-shell", 2), ("eval-exec", 3)}
    go = 'cmd := exec.Command("sh", "-c", line)\nresp, _ := http.Get(url)\n'
    assert _hits(go, "go") == {("subprocess-shell", 1), ("network-call", 2)}


def test_a_patch_is_judged_by_the_lines_it_adds() -> None:
    diff = (FIXTURES / "two_files.diff").read_text()
    assert _hits(diff, "diff") == {("os-system", 22)}
    removed_only = "--- a/x.sh\n+++ b/x.sh\n@@ -1,2 +1,1 @@\n-rm -rf /\n echo ok\n"
    assert scan(removed_only, "diff") == ()


def test_hardcoded_credentials_are_reported_without_their_value() -> None:
    findings = scan('PASSWORD = "hunter2-hunter2"\n', "python")
    assert [(f.rule, f.line, f.severity) for f in findings] == [
        ("hardcoded-credential", 1, "medium")
    ]
    assert "hunter2" not in findings[0].message


@pytest.mark.parametrize(
    ("code", "language", "pending"),
    [
        ("rm -rf ./build", "bash", True),
        ("curl https://example.com/health", "bash", False),
        ("ls -la", "bash", False),
        ("DROP TABLE users;", "sql", True),
    ],
)
def test_risky_snippets_start_pending(code: str, language: str, pending: bool) -> None:
    assert needs_review(analyze_snippet(code, language)) is pending


def test_every_rule_has_a_known_severity() -> None:
    assert {severity for severity, _ in RULES.values()} <= {"low", "medium", "high", "critical"}
