"""analyze_snippet as a whole: identity, kinds, language detection, errors, public face."""

from __future__ import annotations

import signal
import time
from pathlib import Path

import pytest

import metisgraph.ingest.code as code_memory
from metisgraph.ingest.code import analyze_snippet, detect_language, normalize_language
from metisgraph.ingest.code.grammars import parse
from metisgraph.ingest.code.syntax import text

FIXTURES = Path(__file__).parent / "fixtures" / "code"


def test_the_same_code_on_another_machine_has_the_same_content_key() -> None:
    # Other host, other path, other password, a comment and different spacing: same code.
    first = analyze_snippet((FIXTURES / "hardcoded.py").read_text())
    second = analyze_snippet((FIXTURES / "hardcoded_other_host.py").read_text())
    assert first.content_key == second.content_key
    assert first.template != second.template


def test_a_real_change_changes_the_content_key() -> None:
    base = "def f(x):\n    return x + 1\n"
    assert (
        analyze_snippet(base).content_key != analyze_snippet(base.replace("+ 1", "+ 2")).content_key
    )
    assert analyze_snippet(base).content_key != analyze_snippet(base, "javascript").content_key


@pytest.mark.parametrize(
    ("first", "second", "language"),
    [
        ("ls -la   /srv/a  # list\n", "ls -la /srv/b\n", "bash"),
        ("const a = 1; // one\n", "const a=1;\n", "javascript"),
        ("SELECT id FROM users; -- all\n", "SELECT id\nFROM customers;", "sql"),
        ("key: 1\n# c\n", "key:   1\n", "yaml"),
    ],
)
def test_whitespace_comments_and_values_do_not_change_the_key(
    first: str, second: str, language: str
) -> None:
    assert (
        analyze_snippet(first, language).content_key
        == analyze_snippet(second, language).content_key
    )


@pytest.mark.parametrize(
    ("code", "path", "language"),
    [
        ("#!/usr/bin/env python3\nprint(1)\n", None, "python"),
        ("#!/bin/bash\necho hi\n", None, "bash"),
        ("anything at all", "deploy.sh", "bash"),
        ("{}", "settings.json", "json"),
        ("def f():\n    return 1\n", None, "python"),
        ("pytest -x tests/", None, "bash"),
        ("def division(a: float, b: float) -> float:", None, "python"),  # a fragment
        ("if [ -f x ]; then\n  echo hi\nfi\n", None, "bash"),
        ("make", None, "bash"),
        ("SELECT 1;", None, "sql"),
        ("package main\n\nfunc main() {}\n", None, "go"),
        ("const f = (a) => a * 2;\n", None, "javascript"),
        ("interface A { x: number }\nconst a: A = { x: 1 };\n", None, "typescript"),
        ("public class A {}\n", None, "java"),
        ("diff --git a/x b/x\n--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n", None, "diff"),
        ('{"a": [1, 2]}', None, "json"),
        ("name: app\nreplicas: 2\n", None, "yaml"),
        ("FROM python:3.11\nRUN pip install x\n", None, "dockerfile"),
    ],
)
def test_language_detection(code: str, path: str | None, language: str) -> None:
    assert detect_language(code, path) == language


def test_language_names_are_normalised() -> None:
    assert [normalize_language(n) for n in ("py", "Shell", "ts", "golang", "yml", "")] == [
        "python",
        "bash",
        "typescript",
        "go",
        "yaml",
        None,
    ]


def test_kinds_by_language() -> None:
    assert analyze_snippet("retries: 3\n", "yaml").kind == "config"
    assert analyze_snippet("UPDATE t SET a = 1 WHERE id = 2;", "sql").kind == "sql"
    assert analyze_snippet("make build && make test", "bash").kind == "shell"
    assert analyze_snippet("x = 1\n", "python", kind="config").kind == "config"


def test_bad_input_names_the_field() -> None:
    with pytest.raises(ValueError, match="snippet code"):
        analyze_snippet("   \n")
    with pytest.raises(ValueError, match="snippet kind: 'script'"):
        analyze_snippet("x = 1", "python", kind="script")


def test_size_counts_lines_without_surrounding_blank_lines() -> None:
    assert analyze_snippet("\n\nx = 1\n\ny = 2\n\n", "python").size == 3


def test_public_api_is_what_it_claims() -> None:
    exported = set(code_memory.__all__)
    assert {
        "analyze_snippet",
        "extract_snippets",
        "extract_command_snippets",
        "compatibility",
        "needs_review",
        "SnippetAnalysis",
        "Parameter",
        "Finding",
        "TemplateParameter",
        "PatchFile",
        "Requirement",
        "ExtractedSnippet",
        "Verdict",
    } <= exported
    for name in exported:
        assert getattr(code_memory, name) is not None
    public = {n for n in vars(code_memory) if not n.startswith("_")}
    modules = {n for n in public if type(getattr(code_memory, n)).__name__ == "module"}
    assert public - modules == exported


@pytest.mark.slow
def test_pathological_input_is_analysed_in_bounded_time() -> None:
    # Each of these once took minutes: a quadratic URL scheme scan, a grammar that backtracks,
    # an O(n²) overlap check and an O(n²) patch symbol scan.
    cases = [
        ('x = "' + "a" * 200_000 + '"\n', "python"),
        ("a@" * 30_000, "bash"),
        ('password = "x"\n' * 5_000, "python"),
        ("--- a/x\n+++ b/x\n@@ -1,5000 +1,5000 @@\n" + "-a\n+b\n" * 5_000, "diff"),
    ]
    for code, language in cases:
        started = time.monotonic()
        analyze_snippet(code, language)
        assert time.monotonic() - started < 10, language


def test_a_parse_that_overruns_its_budget_gives_no_tree() -> None:
    assert parse("bash", "a@" * 8_000, budget=0.01) is None
    assert parse("bash", "echo hi\n") is not None


def test_a_trees_text_is_read_after_its_parse_budget() -> None:
    # A node's text is read through the parse's input callback. Past the budget that
    # callback answered nothing, and tree-sitter asked again forever: an analysis that ran
    # past the budget hung its worker.
    source = "echo hello | grep h\n"
    tree = parse("bash", source, budget=0.05)
    assert tree is not None
    time.sleep(0.1)

    def hung(*_: object) -> None:
        raise AssertionError("the text of a node was still being read after 10 s")

    previous = signal.signal(signal.SIGALRM, hung)
    signal.alarm(10)
    try:
        assert text(tree.root_node) == source
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
