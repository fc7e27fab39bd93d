"""Attribution from evidence: which step fixed, worked round or attempted an error, and why.

The rules are read on steps written here in the shapes the adapters store (a shell command,
an editor call with its parameters, a patch); none of the cases comes from the labelled
runs. No database: graph/lineage/derive.py feeds these from Neo4j (tests/test_lineage_graph.py).
"""

from __future__ import annotations

import json

from metisgraph.graph.lineage.attribution import Link, StepFacts, attribute
from metisgraph.graph.lineage.evidence import error_says, package_matches, step_did


def _step(
    i: int,
    command: str | None,
    outcome: str = "success",
    hits: tuple[str, ...] = (),
    action: str = "command",
    params: dict[str, object] | None = None,
    code: tuple[str, ...] = (),
) -> StepFacts:
    did = step_did(action, command, json.dumps(params) if params else None, code)
    return StepFacts(f"s{i}", outcome, did, frozenset(hits))


def _by_kind(links: list[Link]) -> dict[str, list[tuple[str, str]]]:
    out: dict[str, list[tuple[str, str]]] = {}
    for link in links:
        out.setdefault(link.kind, []).append((link.episode, link.rule))
    return out


def test_an_install_of_the_missing_module_fixes_it_not_the_next_script() -> None:
    says = {"m": error_says("python:ModuleNotFoundError", "No module named 'pytz'", [], [])}
    steps = [
        _step(0, "python run.py", "failure", ("m",)),
        _step(1, "pip install pytz -q"),
        _step(2, "cat > check.py <<'EOF'\nimport pytz\nEOF\npython check.py"),
    ]
    links = attribute(steps, says)
    assert [(k.episode, k.kind, k.rule) for k in links] == [("s1", "fixed", "module")]
    assert "pytz" in links[0].why and 0 < links[0].confidence <= 1


def test_a_failed_install_is_an_attempt_and_a_step_that_came_after_is_nothing() -> None:
    says = {"m": error_says("python:ModuleNotFoundError", "No module named 'yaml'", [], [])}
    steps = [
        _step(0, "python -m app", "failure", ("m",)),
        _step(1, "pip install pyyaml==6.0.1", "failure"),
        _step(2, "ls -la"),
    ]
    assert _by_kind(attribute(steps, says)) == {"attempt": [("s1", "module")]}


def test_an_edit_of_the_innermost_own_frame_fixes_it() -> None:
    sample = 'File "/srv/app/ledger/totals.py", line 4, in add\nTypeError: bad operand'
    says = {"t": error_says("python:TypeError", sample, ["ledger.totals.add"], ["ledger.totals"])}
    steps = [
        _step(0, "python -m ledger", "failure", ("t",)),
        _step(1, "vim notes.txt"),
        _step(2, "sed -i 's/a + b/int(a) + b/' ledger/totals.py"),
        _step(3, "python -m ledger"),
    ]
    assert _by_kind(attribute(steps, says)) == {"fixed": [("s2", "frame")]}


def test_a_patch_names_the_file_it_changes() -> None:
    says = {"t": error_says("python:TypeError", "TypeError: x", ["shop.report.build_totals"], [])}
    patch = (
        "diff --git a/shop/report.py b/shop/report.py\n--- a/shop/report.py\n+++ b/shop/report.py"
    )
    steps = [
        _step(0, "python -m shop.report", "failure", ("t",)),
        _step(1, "git apply fix.diff", code=(patch,)),
    ]
    assert _by_kind(attribute(steps, says)) == {"fixed": [("s1", "frame")]}


def test_an_error_that_comes_back_was_not_fixed_by_what_came_before() -> None:
    says = {"t": error_says("python:TypeError", "TypeError: x", ["app.core.run"], [])}
    steps = [
        _step(0, "python -m app", "failure", ("t",)),
        _step(1, "sed -i 's/x/y/' app/core.py"),  # acted on it …
        _step(2, "python -m app", "failure", ("t",)),  # … and it came back
    ]
    assert _by_kind(attribute(steps, says)) == {"attempt": [("s1", "frame")]}


def test_the_same_command_run_again_credits_the_change_before_it() -> None:
    says = {"f": error_says(None, "FAILED tests/test_api.py::test_get - assert 1 == 2", [], [])}
    steps = [
        _step(0, "cd /repo && python -m pytest tests/test_api.py -q", "failure", ("f",)),
        _step(1, "grep -n get src/api.py"),
        _step(2, "sed -i 's/1/2/' src/handlers.py"),
        _step(3, "python -m pytest tests/test_api.py"),
    ]
    links = attribute(steps, says)
    assert _by_kind(links) == {"fixed": [("s2", "rerun")]}
    assert "again" in links[0].why


def test_a_run_again_with_a_variable_set_is_the_fix_itself() -> None:
    sample = "UnicodeEncodeError: 'ascii' codec can't encode character"
    says = {"u": error_says("python:UnicodeEncodeError", sample, [], [])}
    steps = [
        _step(0, "python show.py", "failure", ("u",)),
        _step(1, "PYTHONIOENCODING=utf-8 python show.py"),
    ]
    assert _by_kind(attribute(steps, says)) == {"fixed": [("s1", "setting")]}


def test_the_same_tool_retried_on_the_same_file_fixes_a_refused_call() -> None:
    says = {
        "e": error_says(None, "No replacement was performed, old_str `foo` did not appear", [], [])
    }

    def editor(i: int, old: str, outcome: str = "success", hits: tuple[str, ...] = ()) -> StepFacts:
        params = {"tool": "str_replace_editor", "command": "str_replace", "path": "/w/a.c"}
        return _step(i, "str_replace /w/a.c", outcome, hits, "edit", {**params, "old_str": old})

    steps = [editor(0, "foo", "failure", ("e",)), editor(1, "foo ")]
    assert _by_kind(attribute(steps, says)) == {"fixed": [("s1", "retry")]}


def test_another_tool_on_the_same_file_is_a_workaround() -> None:
    says = {
        "e": error_says(None, "No replacement was performed, old_str `foo` did not appear", [], [])
    }
    params = {"tool": "str_replace_editor", "command": "str_replace", "path": "/w/a.c"}
    steps = [
        _step(0, "str_replace /w/a.c", "failure", ("e",), "edit", params),
        _step(1, "sed -i 's/foo/bar/' /w/a.c"),
    ]
    assert _by_kind(attribute(steps, says)) == {"workaround": [("s1", "other-means")]}


def test_creating_the_path_the_message_names_fixes_it() -> None:
    says = {"c": error_says(None, "/bin/sh: 1: cd: can't cd to /w/build/release", [], [])}
    steps = [
        _step(0, "cd /w/build/release && make", "failure", ("c",)),
        _step(1, "mkdir -p /w/build/release"),
    ]
    assert _by_kind(attribute(steps, says)) == {"fixed": [("s1", "path")]}


def test_nothing_addresses_it_nothing_is_claimed() -> None:
    says = {"k": error_says("python:KeyError", "KeyError: 'id'", ["forms.widgets.render"], [])}
    steps = [
        _step(0, "python check.py", "failure", ("k",)),
        _step(1, "cat > other.py <<'EOF'\nprint(1)\nEOF"),
        _step(2, "git diff"),
    ]
    assert attribute(steps, says) == []


def test_package_names() -> None:
    assert package_matches("pytz", "pytz==2024.1")
    assert package_matches("yaml", "pyyaml")
    assert package_matches("sklearn", "scikit-learn>=1.3")
    assert package_matches("llvm-dev", "llvm-14-dev")
    assert not package_matches("numpy", "pandas")
    assert not package_matches("requests", "requests-mock")


def test_a_retry_failing_on_another_error_got_further_but_the_same_refusal_did_not() -> None:
    first = "No replacement was performed, old_str `a` did not appear verbatim in /w/a.c."
    again = "No replacement was performed, old_str `b` did not appear verbatim in /w/a.c."
    says = {
        "e": error_says("tool:editor", first, [], []),
        "f": error_says("tool:editor", again, [], []),
        "s": error_says("python:SyntaxError", "E999 SyntaxError: invalid syntax", [], []),
    }
    params = {"tool": "str_replace_editor", "command": "str_replace", "path": "/w/a.c"}

    def call(i: int, old: str, outcome: str, hits: tuple[str, ...]) -> StepFacts:
        return _step(i, "str_replace /w/a.c", outcome, hits, "edit", {**params, "old_str": old})

    refused_again = [call(0, "a", "failure", ("e",)), call(1, "b", "failure", ("f",))]
    assert [k.error for k in attribute(refused_again, says) if k.kind == "fixed"] == []
    further = [call(0, "a", "failure", ("e",)), call(1, "a ", "failure", ("s",))]
    assert _by_kind(attribute(further, says))["fixed"] == [("s1", "retry")]
