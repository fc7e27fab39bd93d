"""examples/fix_failing_test.py end to end: the SDK's loop, the real service over HTTP, the
real Neo4j and model, real Git repositories and their real tests; the model is scripted and
acts only on its prompt."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

from metisgraph_client import Client

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "fix_failing_test.py"


def _example() -> ModuleType:
    spec = importlib.util.spec_from_file_location("fix_failing_test", EXAMPLE)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


@pytest.mark.slow
def test_the_second_run_follows_the_first_and_the_control_repeats_it(
    api_url: str, project: str, tmp_path: Path
) -> None:
    example = _example()
    with Client(api_url) as client:
        found = example.demo(client, project, tmp_path)
    print(example.describe(found))  # the runs, as issue 11's closing note shows them (-s)
    first, second, control = found.first, found.second, found.control
    actions = [[s.step.action for s in r.steps] for r in (first, second, control)]
    # Run 1 has nothing to recall: every tool in turn, the last one fixes the test.
    assert first.resolved and actions[0] == list(example.TOOLS)
    assert [s.observation.success for s in first.steps] == [False, False, True]
    assert first.cited == []
    # Run 2: one step, the fix run 1 found, citing run 1's successful step by its label.
    fixed_by = first.steps[-1].episode_id
    assert second.resolved and actions[1] == [example.TOOLS[-1]]
    (step,) = second.steps
    assert step.cited == [fixed_by] and len(step.step.cites) == 1
    # The control, memory off in the same project, repeats run 1's steps and cites nothing.
    assert control.resolved and actions[2] == actions[0] and control.cited == []
    # Feedback: the memory run 2 cited was used once and helped once, read from the graph.
    assert found.feedback == {fixed_by: {"uses": 1, "successes": 1}}
    assert [f.memory_id for f in second.feedback] == [fixed_by]
    # The repositories are real: run 2's now passes its tests, with the fix committed.
    repo = found.repositories["run-2"]
    tests = subprocess.run([sys.executable, "-m", "unittest", "-q"], cwd=repo,
                           capture_output=True, text=True)  # fmt: skip
    assert tests.returncode == 0, tests.stderr
    log = subprocess.run(["git", "log", "--format=%s"], cwd=repo, capture_output=True, text=True)
    assert log.stdout.splitlines()[0] == "fix: git apply fixes/words-only.diff"
