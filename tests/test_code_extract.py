"""Extraction: fenced blocks, heredocs, sed -i, python -c, edit blocks and patches."""

from __future__ import annotations

from pathlib import Path

from metisgraph.ingest.code import (
    ExtractedSnippet,
    analyze_snippet,
    extract_command_snippets,
    extract_snippets,
)

FIXTURES = Path(__file__).parent / "fixtures" / "code"


def _kind(snippet: ExtractedSnippet) -> str:
    """The kind ingest stores for extracted code: the analysis decides it, once."""
    return analyze_snippet(snippet.code, snippet.language, path=snippet.path).kind


def _summary(snippets: list[ExtractedSnippet]) -> list[tuple[str, str | None, str, str | None]]:
    return [(s.origin, s.language, _kind(s), s.path) for s in snippets]


def test_assistant_message_yields_heredoc_sed_python_c_config_and_commands() -> None:
    snippets = extract_snippets((FIXTURES / "assistant_message.md").read_text())
    assert _summary(snippets) == [
        ("heredoc", "python", "function", "reproduce_issue.py"),
        ("sed", "bash", "shell", "src/shop/writer.py"),
        ("python-c", "python", "function", None),
        ("command", "bash", "shell", None),
        ("fence", "yaml", "config", None),
        ("command", "bash", "shell", None),
    ]
    heredoc, _sed, python_c, command, config, console = snippets
    assert heredoc.code.startswith("import sys\nfrom shop.cart import Cart")
    assert heredoc.code.endswith("print(cart.total())")
    assert python_c.code == "import shop; print(shop.__version__)"
    # The command keeps the sequence, without the file the heredoc wrote.
    assert "python -m pytest tests/test_cart.py -q" in command.code
    assert "EOF2" not in command.code
    assert config.code == "retries: 3\nendpoint: https://api.example.com/v1"
    # A console transcript keeps its commands and drops their output.
    assert console.code == "ls -la\npip install -e ."


def test_text_fences_are_not_code() -> None:
    snippets = extract_snippets("```text\nTraceback (most recent call last):\n```\n")
    assert snippets == []


def test_untagged_fences_of_output_are_not_code() -> None:
    # Issue reports and agents fence what a program printed as often as what they ran.
    outputs = [
        "===== ========\n wave response\n===== ========\n350.0      0.7\n===== ========",
        "Col1 Col2\n1    2\n3    4",
        "/opt/conda/lib/python3.5/site-packages/astropy/units/core.py in __eq__(self, other)\n"
        "   1699 \n-> 1700         other = Unit(other, parse_strict='silent')",
        'Traceback (most recent call last):\n  File "t.py", line 1, in <module>',
    ]
    for body in outputs:
        assert extract_snippets(f"```\n{body}\n```\n") == [], body
    commands = [
        "python3 reproduce.py",
        "export FOO=1\nmake build && ./build/server --port 80",
        "for f in *.py; do\n  black $f\ndone",
        "$ pip install -e .\n$ pytest -x",
    ]
    for body in commands:
        assert [s.language for s in extract_snippets(f"```\n{body}\n```\n")] == ["bash"], body


def test_bare_patch_in_free_text() -> None:
    snippets = extract_snippets((FIXTURES / "observation_with_patch.txt").read_text())
    assert _summary(snippets) == [("patch", "diff", "patch", None)]
    assert snippets[0].code.startswith("diff --git a/src/shop/cart.py")
    assert snippets[0].code.rstrip().endswith("return round(subtotal, 2)")
    assert "All tests pass" not in snippets[0].code


def test_heredoc_language_from_target_or_interpreter() -> None:
    command = (
        'cat > /tmp/app/config.json <<EOF\n{"debug": true}\nEOF\n'
        "python3 - <<'PY'\nimport json\nprint(json.load(open('/tmp/app/config.json')))\nPY\n"
        'psql "$DB" <<SQL\nSELECT count(*) FROM orders;\nSQL\n'
    )
    assert _summary(extract_command_snippets(command)) == [
        ("heredoc", "json", "config", "/tmp/app/config.json"),
        ("heredoc", "python", "function", None),
        ("heredoc", "sql", "sql", None),
    ]


def test_indented_heredoc_and_append() -> None:
    command = "cat <<-END >> notes.sh\n\techo one\n\techo two\n\tEND\n"
    (snippet,) = extract_command_snippets(command)
    assert (snippet.path, snippet.code) == ("notes.sh", "echo one\necho two")


def test_a_commit_message_heredoc_is_not_code() -> None:
    command = "git commit -F - <<EOF\nFix the cart total\nEOF\n"
    (snippet,) = extract_command_snippets(command)
    assert snippet.origin == "command"
    assert "Fix the cart total" in snippet.code


def test_inspection_only_commands_are_not_snippets() -> None:
    for command in (
        "ls -R src/shop",
        "grep -rn 'total' src | head -20",
        "nl -ba src/shop/cart.py | sed -n '10,40p'",
        "cd /testbed && git diff",
        "find . -name '*.py' -newer setup.py",
    ):
        assert extract_command_snippets(command) == [], command


def test_commands_that_change_things_are_snippets() -> None:
    for command in (
        "pip install -e . && python -m pytest -x",
        "find . -name '*.pyc' -delete",
        "echo 'x = 1' > settings_local.py",
        "git commit -am 'fix'",
    ):
        (snippet,) = extract_command_snippets(command)
        assert (snippet.origin, snippet.language) == ("command", "bash"), command


def test_swe_agent_edit_block() -> None:
    command = "edit 4:6\ndef division(a: float, b: float) -> float:\n    return a / b\nend_of_edit"
    (snippet,) = extract_command_snippets(command)
    assert (snippet.origin, snippet.language, _kind(snippet)) == ("edit", "python", "function")
    assert snippet.code.startswith("def division")


def test_curl_command_is_an_api_template() -> None:
    (snippet,) = extract_command_snippets(
        "curl -X POST https://api.example.com/v1/jobs -d @job.json"
    )
    assert _kind(snippet) == "api_template"


def test_one_shell_tokenizer_splits_where_a_simple_command_ends() -> None:
    from metisgraph.ingest.code.commands import heredocs, segments, words

    line = "a && b | c; d & e\nf $(g h) `i` 2>&1 # a comment; not a command\nj \\\n  --flag"
    expected = ["a", "b", "c", "d", "e", "f", "g h", "i", "2>&1", "j    --flag"]
    assert list(segments(line)) == expected
    assert words("python -c 'import x; x.run()' ''") == ["python", "-c", "import x; x.run()"]
    # a here-string (<<<) is no heredoc: the lines after it are commands
    assert heredocs("grep -q ok <<< ok\npytest -x\nok\n") == []
