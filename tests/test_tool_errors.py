"""Tools' own failure messages are errors too: a shell utility refusing a path, Python run
with a module that is not installed, a linter's syntax error, an exception after a prefix,
an editor tool refusing a call. No database."""

from __future__ import annotations

import pytest

from metisgraph.ingest.errors.signatures import extract_errors


@pytest.mark.parametrize(
    ("text", "kind", "template"),
    [
        ("ls: cannot access 'docs/old': No such file or directory", "shell:ENOENT",
         "ls: docs/old: No such file or directory"),
        ("rm: cannot remove 'build/x.o': Permission denied", "shell:EACCES",
         "rm: build/x.o: Permission denied"),
        ("/bin/sh: 1: cd: can't cd to /srv/out", "shell:error", None),
        ("bash: ./tools/gen: No such file or directory", "shell:ENOENT",
         None),
        ("/usr/bin/python3: No module named tox", "python:ModuleNotFoundError",
         "No module named 'tox'"),
        ("ERRORS:\n- E999 SyntaxError: invalid syntax", "python:SyntaxError", "invalid syntax"),
        ("Caught exception: ValueError: bad width", "python:ValueError", "bad width"),
        ("Row 3 raised KeyError: 'name'", "python:KeyError", "'name'"),
        ("ERROR:\nParameter `path` is required for command: view.", "tool:editor",
         "Parameter `path` is required for command: view"),
        ("ERROR:\nNo replacement was performed, old_str `x = 1` did not appear verbatim in a.py.",
         "tool:editor", None),
    ],
)  # fmt: skip
def test_tool_messages_are_errors(text: str, kind: str, template: str | None) -> None:
    found = extract_errors(text)
    assert [e.kind for e in found] == [kind]
    if template is not None:
        assert found[0].template.rstrip(".") == template


@pytest.mark.parametrize(
    "text",
    [
        "raised the worker timeout to 60 s",
        "total 8\n-rw-r--r-- 1 root root 12 a.txt",
        "The file was removed; no such file is needed any more",
    ],
)
def test_ordinary_lines_are_not(text: str) -> None:
    assert extract_errors(text) == []
