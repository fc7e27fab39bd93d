"""What a verification would run, decided without running it: files, command, refusals."""

from __future__ import annotations

import json

import pytest

from metisgraph.ingest.code import file_suffix, fill_template
from metisgraph.ingest.sandbox.gate import review_refusal
from metisgraph.ingest.sandbox.workspace import Unrunnable, workspace


def _snippet(language: str, template: str, tests: list[str], **more: object) -> dict[str, object]:
    return {"language": language, "template": template, "tests": tests, **more}


def test_python_tests_import_the_snippet_and_run_one_after_the_other() -> None:
    work = workspace(_snippet("python", "def f():\n    return 1\n", ["assert f() == 1", "f()"]),
                     None, {})  # fmt: skip
    assert work.command == "python3 -B test_1.py && python3 -B test_2.py"
    assert work.files["snippet.py"] == "def f():\n    return 1\n"
    assert work.files["test_1.py"].startswith("from snippet import *")
    assert work.files["test_1.py"].endswith("assert f() == 1")


def test_shell_tests_run_with_bash_and_a_command_wins() -> None:
    snippet = _snippet("bash", "echo hi\n", ['out=$(bash snippet.sh); [ "$out" = hi ]'])
    assert workspace(snippet, None, {}).command == "bash test_1.sh"
    assert workspace(snippet, "sh snippet.sh", {}).command == "sh snippet.sh"


def test_what_cannot_run_is_named() -> None:
    with pytest.raises(Unrunnable, match="no runner for sql snippets: give a check command"):
        workspace(_snippet("sql", "SELECT 1;", ["SELECT 1;"]), None, {})
    with pytest.raises(Unrunnable, match="the snippet has no tests"):
        workspace(_snippet("python", "x = 1\n", []), None, {})
    assert workspace(_snippet("sql", "SELECT 1;", []), "cat snippet.sql", {}).files == {
        "snippet.sql": "SELECT 1;"
    }


def test_placeholders_take_the_callers_value_then_the_stored_example() -> None:
    lifted = json.dumps([{"name": "path", "kind": "path", "example": "data/orders.csv"},
                         {"name": "token", "kind": "credential", "example": None}])  # fmt: skip
    snippet = _snippet("python", 'PATH = "{{path}}"\nTOKEN = "{{token}}"\n', ["print(PATH)"],
                       template_parameters=lifted)  # fmt: skip
    with pytest.raises(Unrunnable, match=r"no value for \{\{token\}\}: give it in parameters"):
        workspace(snippet, None, {})
    work = workspace(snippet, None, {"token": "t0k"})
    assert work.files["snippet.py"] == 'PATH = "data/orders.csv"\nTOKEN = "t0k"\n'
    work = workspace(snippet, None, {"token": "t0k", "path": "other.csv"})
    assert 'PATH = "other.csv"' in work.files["snippet.py"]


def test_fill_template_and_file_suffix() -> None:
    assert fill_template("a {{x}} b {{y}} {{x}}", {"x": "1"}) == ("a 1 b {{y}} 1", ("y",))
    assert (file_suffix("python"), file_suffix("bash"), file_suffix("nope")) == (
        ".py", ".sh", ".txt",
    )  # fmt: skip


@pytest.mark.parametrize(
    ("risk", "status", "refused"),
    [
        ("none", "unreviewed", False),
        ("medium", "pending", False),
        ("high", "pending", True),
        ("critical", "unreviewed", True),
        ("critical", "approved", False),
        ("none", "rejected", True),
    ],
)
def test_review_decides_what_may_run(risk: str, status: str, refused: bool) -> None:
    assert (review_refusal({"risk": risk, "review_status": status}) is not None) is refused
