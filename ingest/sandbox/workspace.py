"""What a verification runs: the snippet and its tests as files, and the command that checks.

The snippet is written to `snippet<ext>` (its template, each placeholder filled with the
caller's value or the stored example) and each stored test to `test_<n><ext>`. A Python
test starts with `from snippet import *`, so it can call what the snippet defines. Without a
check command, the tests are run one after the other with the language's runner.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from metisgraph.ingest.code import file_suffix, fill_template

__all__ = ["RUNNERS", "Unrunnable", "Workspace", "workspace"]

# language -> (how one test file is run, what a test file starts with)
RUNNERS = {
    "python": ("python3 -B {file}", "from snippet import *  # noqa: F403\n"),
    "bash": ("bash {file}", ""),
    "javascript": ("node {file}", ""),
}


class Unrunnable(ValueError):
    """The snippet cannot be run as asked; the message says what is missing."""


@dataclass(frozen=True)
class Workspace:
    files: dict[str, str]
    command: str


def workspace(
    snippet: Mapping[str, Any], command: str | None, parameters: Mapping[str, str]
) -> Workspace:
    """The files of `snippet` and the command to run on them (`command` when given)."""
    language = str(snippet.get("language") or "text")
    values = _examples(snippet) | dict(parameters)
    suffix = file_suffix(language)
    runner, prelude = RUNNERS.get(language, (None, ""))
    files = {f"snippet{suffix}": _filled(str(snippet.get("template") or ""), values)}
    tests = [t for t in snippet.get("tests") or [] if t.strip()]
    for n, test in enumerate(tests, start=1):
        files[f"test_{n}{suffix}"] = prelude + _filled(test, values)
    if command:
        return Workspace(files, command)
    if runner is None:
        raise Unrunnable(f"no runner for {language} snippets: give a check command")
    if not tests:
        raise Unrunnable("the snippet has no tests: give a check command")
    names = [f"test_{n}{suffix}" for n in range(1, len(tests) + 1)]
    return Workspace(files, " && ".join(runner.format(file=name) for name in names))


def _examples(snippet: Mapping[str, Any]) -> dict[str, str]:
    """The stored example of each lifted value (credentials never keep one)."""
    raw = snippet.get("template_parameters")
    listed = json.loads(raw) if isinstance(raw, str) and raw else []
    return {p["name"]: p["example"] for p in listed if p.get("example") is not None}


def _filled(text: str, values: Mapping[str, str]) -> str:
    filled, missing = fill_template(text, values)
    if missing:
        names = ", ".join("{{" + name + "}}" for name in missing)
        raise Unrunnable(f"no value for {names}: give it in parameters")
    return filled
