"""An agent fixes a failing test in a throw-away Git repository, with metisgraph as its memory.

The agent is metisgraph-client's loop (``run_task``: plan context → model → executor →
record the step → … → close the task → outcome feedback for every memory it cited). Its
model is scripted and acts only on what its prompt holds: the tools listed, the steps taken
so far, and the numbered memories. Its executor runs the chosen command in a real Git
repository and then the repository's tests; a failed attempt is thrown away
(``git checkout``), a passing one committed.

Three runs on fresh copies of the same repository, in one project:

1. memory on, nothing remembered yet: it works through the tools in order until the test
   passes;
2. memory on again: the plan context holds run 1's success, the model follows it and cites
   it, and the task takes fewer steps;
3. control, memory off (``k=0``): the same model repeats run 1's steps.

Then the outcome feedback of run 2's citations is read back from the graph.

    python examples/fix_failing_test.py --url http://127.0.0.1:8000 [--token T] [--project P]

tests/test_example_fix_failing_test.py runs it against the real service and Neo4j.
"""

from __future__ import annotations

import argparse
import json
import re
import shlex
import subprocess
import sys
import tempfile
import uuid
from dataclasses import dataclass, field
from pathlib import Path

from metisgraph_client import Client, Executor, Observation, Step, TaskReport, run_task

GOAL = "make the failing slugify test pass in the slugs repository"
TEST = "python -m unittest -q"
TOOLS = (TEST, "git apply fixes/strip-edges.diff", "git apply fixes/words-only.diff")

SLUG = '''def slugify(title: str) -> str:
    """The URL slug of a title: lower case, words joined by hyphens."""
    return title.lower().replace(" ", "-")
'''
TESTS = """import unittest

from slug import slugify


class SlugTest(unittest.TestCase):
    def test_words_are_joined_by_hyphens(self) -> None:
        self.assertEqual(slugify("Hello, World!"), "hello-world")


if __name__ == "__main__":
    unittest.main()
"""
# Two candidate fixes, as patches in the repository: one trims the ends, one keeps words only.
FIXES = {
    "strip-edges": SLUG.replace("title.lower()", 'title.strip(" !?.,").lower()'),
    "words-only": "import re\n\n\n"
    + SLUG.replace(
        'title.lower().replace(" ", "-")', '"-".join(re.findall(r"[a-z0-9]+", title.lower()))'
    ),
}


def _git(repo: Path, *args: str) -> str:
    identity = ("-c", "user.name=example agent", "-c", "user.email=agent@example.invalid")
    done = subprocess.run(["git", *identity, *args], cwd=repo, capture_output=True, text=True,
                          check=True)  # fmt: skip
    return done.stdout


def new_repository(path: Path) -> Path:
    """A Git repository whose one test fails, with the candidate fixes as patches."""
    path.mkdir(parents=True)
    _git(path, "init", "-q")
    (path / "slug.py").write_text(SLUG)
    (path / "test_slug.py").write_text(TESTS)
    _git(path, "add", ".")
    _git(path, "commit", "-qm", "slugify, and a test that fails")
    (path / "fixes").mkdir()
    for name, fixed in FIXES.items():
        (path / "slug.py").write_text(fixed)
        (path / "fixes" / f"{name}.diff").write_text(_git(path, "diff", "--", "slug.py"))
    (path / "slug.py").write_text(SLUG)
    _git(path, "add", ".")
    _git(path, "commit", "-qm", "two candidate fixes, as patches")
    return path


def _run(command: str, repo: Path) -> subprocess.CompletedProcess[str]:
    argv = shlex.split(command)
    argv[0] = sys.executable if argv[0] == "python" else argv[0]
    return subprocess.run(argv, cwd=repo, capture_output=True, text=True, timeout=60)


def _failure(output: str) -> str:
    """The traceback of the failing test (what the test said), or the output's tail."""
    found = re.search(r"Traceback.*?^\w*Error:[^\n]*", output, re.DOTALL | re.MULTILINE)
    return found.group(0) if found else output.strip()[-400:]


def executor_for(repo: Path) -> Executor:
    """Run a step in the repository: the tool's command, then the tests. A failed attempt is
    thrown away; passing tests are committed and end the task."""

    def execute(step: Step) -> Observation:
        if step.action not in TOOLS:
            return Observation(f"not a tool of this task: {step.action}", False, done=True)
        if step.action != TEST:
            applied = _run(step.action, repo)
            if applied.returncode:
                return Observation(applied.stderr.strip(), False, error=applied.stderr.strip())
        tests = _run(TEST, repo)
        if tests.returncode == 0:
            _git(repo, "commit", "-qam", f"fix: {step.action}")
            return Observation("the tests pass; committed", True, done=True)
        _git(repo, "checkout", "-q", "--", ".")
        failure = _failure(tests.stderr)
        return Observation(f"the tests fail: {failure.splitlines()[-1]}", False, error=failure)

    return execute


_MEMORY = re.compile(r"^(M\d+) \[(\w+)\][^\n]*\n((?:   [^\n]*\n?)*)", re.MULTILINE)


def _section(prompt: str, title: str) -> str:
    found = re.search(rf"^## {title}\n(.*?)(?=^## |\Z)", prompt, re.DOTALL | re.MULTILINE)
    return found.group(1).strip() if found else ""


def scripted_model(prompt: str) -> str:
    """A stand-in model that knows only its prompt: it follows a remembered success (or an
    error's fix) that is one of its tools, else takes the first tool neither tried in this
    task nor remembered as a failure; it cites the memories that decided the step."""
    tools = [t.strip() for t in _section(prompt, "Tools").split(", ") if t.strip()]
    tried = set(re.findall(r"^step \d+: (.*?) → ", _section(prompt, "Current state"), re.M))
    memories = []
    for label, kind, body in _MEMORY.findall(_section(prompt, "Memories") + "\n"):
        if kind == "fix":  # "fixed by: `command`, in N runs": to follow, as a success
            kind, did = "success", re.search(r"fixed by: `(.*?)`", body)
        else:
            did = re.search(r"^\s+did: (.*)$", body, re.MULTILINE)
        memories.append((label, kind, did.group(1).strip() if did else None))
    for label, kind, did in memories:
        if kind == "success" and did in tools and did not in tried:
            return _reply(did, f"{label} made this test pass before", [label])
    failed = {did: label for label, kind, did in memories if kind == "failure"}
    for tool in tools:
        if tool not in tried and tool not in failed:
            avoided = [failed[t] for t in tools if t in failed and t not in tried]
            return _reply(tool, "the next tool not yet tried", avoided)
    return _reply("stop", "every tool was tried", [])


def _reply(action: str, why: str, cites: list[str]) -> str:
    reasoning = f"Fix the failing slugify test with `{action}`: {why}"
    return json.dumps({"action": action, "parameters": {}, "reasoning": reasoning,
                       "cites": cites})  # fmt: skip


@dataclass
class Demo:
    first: TaskReport
    second: TaskReport
    control: TaskReport
    repositories: dict[str, Path]
    feedback: dict[str, dict[str, int]] = field(default_factory=dict)  # memory id -> counts


def demo(client: Client, project: str, workdir: Path) -> Demo:
    """The three runs, each on a fresh repository under ``workdir``, and the feedback read
    back from the graph for every memory run 2 cited."""
    repos = {name: new_repository(workdir / name) for name in ("run-1", "run-2", "control")}

    def run(name: str, k: int) -> TaskReport:
        return run_task(client, project, GOAL, model=scripted_model, tools=list(TOOLS), k=k,
                        executor=executor_for(repos[name]), max_steps=6)  # fmt: skip

    found = Demo(run("run-1", 8), run("run-2", 8), run("control", 0), repos)
    for step in found.second.steps:
        for memory_id in step.cited:
            hits = client.recall(project, step.step.reasoning, k=10).hits
            episode = next(h.episode for h in hits if h.episode.id == memory_id)
            found.feedback[memory_id] = {"uses": episode.uses or 0,
                                         "successes": episode.successes or 0}  # fmt: skip
    return found


def describe(found: Demo) -> str:
    """The runs' steps, what each step cited, and the feedback read back."""
    where = {s.episode_id: (name, s.number) for name, report in
             (("run 1", found.first), ("run 2", found.second)) for s in report.steps}  # fmt: skip
    lines = []
    for name, report in (("run 1, memory on", found.first), ("run 2, memory on", found.second),
                         ("control, memory off", found.control)):  # fmt: skip
        ended = "resolved" if report.resolved else "not resolved"
        steps = f"{len(report.steps)} step{'' if len(report.steps) == 1 else 's'}"
        lines.append(f"{name}: {steps}, {ended} (task {report.task_id})")
        for s in report.steps:
            outcome = "worked" if s.observation.success else "failed"
            cited = [f"{m} ({where[m][0]} step {where[m][1]})" if m in where else m
                     for m in s.cited]  # fmt: skip
            cites = f"{', '.join(s.step.cites)} = {', '.join(cited)}" if s.cited else "none"
            lines.append(f"  {s.number}. {s.step.action} → {outcome}; cites {cites}")
    lines.append("outcome feedback, read back from the graph:")
    for memory, counts in found.feedback.items():
        lines.append(f"  {memory}: uses {counts['uses']}, successes {counts['successes']}")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--url", default="http://127.0.0.1:8000")
    parser.add_argument("--token", default=None)
    parser.add_argument("--project", default=f"example-{uuid.uuid4().hex[:8]}")
    args = parser.parse_args()
    with Client(args.url, token=args.token) as client, tempfile.TemporaryDirectory() as tmp:
        print(describe(demo(client, args.project, Path(tmp))))


if __name__ == "__main__":
    main()
