"""What a verification runs: the snippet and its tests as files, and the command that checks.

The snippet is written to `snippet<ext>` (its template, each placeholder filled with the
caller's value, else the stored example, else the parameter's runnable default) and each
stored test to `test_<n><ext>`. A Python test starts with `from snippet import *`, so it can
call what the snippet defines. Without a check command, the tests are run one after the
other with the language's runner; a snippet without tests that came from a run is checked
with the test command that run used (`test_command`), the code also written where the run
wrote it (a relative path), so the command finds it.
"""

from __future__ import annotations

import json
import posixpath
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from metisgraph.ingest.code import file_suffix, fill_template, resolved_values

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
    values = resolved_values(_lifted(snippet), parameters)
    suffix = file_suffix(language)
    runner, prelude = RUNNERS.get(language, (None, ""))
    files = {f"snippet{suffix}": _filled(str(snippet.get("template") or ""), values)}
    tests = [t for t in snippet.get("tests") or [] if t.strip()]
    for n, test in enumerate(tests, start=1):
        files[f"test_{n}{suffix}"] = prelude + _filled(test, values)
    if command:
        return Workspace(files, command)
    run_used = str(snippet.get("test_command") or "").strip()
    if not tests and run_used:
        for path in _written_to(snippet):
            files.setdefault(path, files[f"snippet{suffix}"])
        return Workspace(files, run_used)
    if runner is None:
        raise Unrunnable(f"no runner for {language} snippets: give a check command")
    if not tests:
        raise Unrunnable("the snippet has no tests: give a check command")
    names = [f"test_{n}{suffix}" for n in range(1, len(tests) + 1)]
    return Workspace(files, " && ".join(runner.format(file=name) for name in names))


def _written_to(snippet: Mapping[str, Any]) -> list[str]:
    """The relative paths the code was written to in its run (never outside the workspace)."""
    if snippet.get("kind") == "patch":
        return []  # a patch's files are the project's, not the patch text
    out = []
    for raw in snippet.get("files") or []:
        path = posixpath.normpath(str(raw).removeprefix("./"))
        if path not in {"", "."} and not path.startswith(("/", "..", "<")) and "\\" not in path:
            out.append(path)
    return out


def _lifted(snippet: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The lifted values: each with its example (none for a private value or a credential)
    and the default that runs in its place."""
    raw = snippet.get("template_parameters")
    listed = json.loads(raw) if isinstance(raw, str) and raw else []
    return [p for p in listed if isinstance(p, dict) and p.get("name")]


def _filled(text: str, values: Mapping[str, str]) -> str:
    filled, missing = fill_template(text, values)
    if missing:
        names = ", ".join("{{" + name + "}}" for name in missing)
        raise Unrunnable(f"no value for {names}: give it in parameters")
    return filled
