"""The test command a run used: which step invoked a test runner, attached to the run's code.

An agent that changes code usually checks it the way the project does (``python -m pytest
tests/test_x.py -q``, ``tox -e py311``, ``mvn -Dtest=FooTest test``, ``go test ./...``). A
snippet taken from a trajectory keeps that invocation as its ``test_command``, so verifying
it without a command runs what the run ran: the first test run at or after the step that
holds the code, else the last one before it (a patch submitted after its tests ran). Code
the run wrote or changed gets it (a patch, an edit, a heredoc, a ``sed -i``), not the plain
command lines it ran.

Only the runner's own simple command is kept (``cd /testbed &&`` and ``| tail`` around it are
the run's plumbing); commands are read from the stored, already sanitised step, and one that
still holds an instance placeholder (``<HOME>``) is not kept: it could not run anywhere else.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import Protocol

from metisgraph.ingest.code.commands import segments, words

__all__ = ["attach_test_commands", "runner_invocation"]

MAX_CHARS = 500
_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")
_PLACEHOLDER = re.compile(r"<[A-Z]+>")
_TRAILING_REDIRECT = re.compile(r"\s+(?:\d?>&\d|\d?>>?\s*\S+)\s*$")
# A program that is a test runner whatever its arguments.
_RUNNERS = frozenset(
    {"pytest", "py.test", "tox", "nox", "jest", "mocha", "vitest", "rspec", "phpunit", "ctest",
     "nosetests", "trial"}
)  # fmt: skip
# A program whose sub-command runs the tests: `go test`, `cargo test`, `npm test` …
_SUBCOMMANDS = {
    "go": {"test"},
    "cargo": {"test", "nextest"},
    "npm": {"test", "t"},
    "yarn": {"test"},
    "pnpm": {"test"},
    "dotnet": {"test"},
    "make": {"test", "check", "tests"},
    "mvn": {"test", "verify"},
    "mvnw": {"test", "verify"},
    "gradle": {"test", "check"},
    "gradlew": {"test", "check"},
    "ant": {"test"},
    "sbt": {"test"},
    "bundle": {"rspec"},
}
_PYTHON_MODULES = frozenset({"pytest", "unittest", "doctest", "nose2", "tox", "nox"})


def runner_invocation(command: str) -> str | None:
    """The test runner's simple command in a step's command line, or None when it runs none."""
    if not command or "<<" in command:
        return None  # a heredoc writes code; its body is not a command line
    for segment in segments(command):
        if _is_test_run(words(segment)):
            kept = _TRAILING_REDIRECT.sub("", segment).strip()
            if kept and len(kept) <= MAX_CHARS and not _PLACEHOLDER.search(kept):
                return kept
    return None


def _is_test_run(parts: list[str]) -> bool:
    while parts and _ASSIGNMENT.match(parts[0]):
        parts = parts[1:]  # PYTHONPATH=src pytest …
    if parts[:1] in (["timeout"], ["xvfb-run"]) and len(parts) > 2:
        parts = parts[2:] if parts[0] == "timeout" else parts[1:]
    if parts[:1] == ["npx"]:
        parts = parts[1:]
    if not parts:
        return False
    program = parts[0].rsplit("/", 1)[-1]
    args = parts[1:]
    if program in _RUNNERS:
        return True
    if program.startswith("python"):
        if args[:1] == ["-m"] and len(args) > 1:
            return args[1] in _PYTHON_MODULES
        script = args[0].rsplit("/", 1)[-1] if args else ""
        return (script in {"manage.py", "runtests.py", "setup.py"} and "test" in args[1:]) or (
            script in {"runtests.py", "run_tests.py"}
        )
    wanted = _SUBCOMMANDS.get(program, set())
    return any(a in wanted for a in args if not a.startswith("-"))


class _Step(Protocol):
    id: str
    task_id: str | None
    props: dict[str, object]


class _Code(Protocol):
    episode_id: str | None
    test_command: str | None
    props: dict[str, object]


def attach_test_commands(steps: Sequence[_Step], snippets: Iterable[_Code]) -> None:
    """Give each snippet of a task's step the test command its run used around that step."""
    runs: dict[str, list[tuple[int, str]]] = {}
    where: dict[str, tuple[str, int]] = {}
    for step in steps:
        if not step.task_id:
            continue
        index = _step_number(step.props.get("step"))
        where[step.id] = (step.task_id, index)
        command = step.props.get("action_command")
        if step.props.get("action_type") == "command" and isinstance(command, str):
            found = runner_invocation(command)
            if found:
                runs.setdefault(step.task_id, []).append((index, found))
    for snippet in snippets:
        place = where.get(snippet.episode_id or "")
        if snippet.test_command or place is None or place[0] not in runs:
            continue
        if snippet.props.get("origin") == "command":
            continue  # a command line the run ran (a grep, the test run itself), not its code
        task, index = place
        ordered = sorted(runs[task])
        after = [c for n, c in ordered if n >= index]
        snippet.test_command = after[0] if after else ordered[-1][1]


def _step_number(value: object) -> int:
    try:
        return int(str(value))
    except ValueError:
        return 0
