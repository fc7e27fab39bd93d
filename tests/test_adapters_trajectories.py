"""Trajectory readers on hand-written fixtures in each real format."""

from __future__ import annotations

import json
import shutil
from datetime import UTC, datetime
from pathlib import Path

import pytest

from metisgraph.ingest.adapters import Parsed, Refused, read_path
from metisgraph.ingest.records import EpisodeRecord, Outcome, SnippetKind, Source, TaskRecord

Items = list[Parsed | Refused]


@pytest.fixture
def trajectories(fixtures_dir: Path) -> Path:
    return fixtures_dir / "trajectories"


def _runs(items: Items) -> list[tuple[TaskRecord, list[EpisodeRecord]]]:
    """Group records into (task, its episodes); fails on any refusal."""
    runs: list[tuple[TaskRecord, list[EpisodeRecord]]] = []
    for item in items:
        assert isinstance(item, Parsed), item.describe()
        record = item.record
        if isinstance(record, TaskRecord):
            runs.append((record, []))
        else:
            assert isinstance(record, EpisodeRecord)
            assert runs and record.task_id == runs[-1][0].id
            runs[-1][1].append(record)
    return runs


def _one_run(path: Path) -> tuple[TaskRecord, list[EpisodeRecord]]:
    (run,) = _runs(list(read_path(path)))
    return run


def _chain_is_sound(task: TaskRecord, episodes: list[EpisodeRecord]) -> None:
    assert [e.step for e in episodes] == list(range(len(episodes)))
    assert [e.id for e in episodes] == [f"{task.id}:{i}" for i in range(len(episodes))]
    assert all(e.project == task.project for e in episodes)


def test_mini_swe_agent_v1_run(trajectories: Path) -> None:
    path = trajectories / "mini-swe-agent/run/trajs/acme__widgets-101.traj.json"
    task, episodes = _one_run(path)
    _chain_is_sound(task, episodes)
    assert task.project == "acme/widgets"
    assert task.goal.startswith("Widget.resize() accepts a negative width\nCalling")
    assert "instructions" not in task.goal.lower()
    assert task.agent == "mini-swe-agent"
    assert set(task.tags) == {
        "agent:mini-swe-agent",
        "model:acme/test-model-1",
        "instance:acme__widgets-101",
        "repo:acme/widgets",
    }
    assert task.started_at == datetime.fromtimestamp(1700000000, UTC)
    assert task.ended_at == datetime.fromtimestamp(1700000240, UTC)
    steps = [e for e in episodes if e.kind == "step"]
    assert len(steps) == 5  # one per assistant message
    assert [s.outcome for s in steps] == [
        Outcome.success,  # grep, returncode 0
        Outcome.failure,  # no command block: told off for the format
        Outcome.failure,  # returncode 1
        Outcome.success,
        Outcome.success,  # the submission command
    ]
    assert [s.source for s in steps] == [Source.executed, Source.inferred] + [Source.executed] * 3
    first = steps[0]
    assert first.summary == "First I need to find where Widget is defined."
    assert first.reasoning == first.summary
    assert first.action is not None and first.action.command == 'grep -rn "class Widget" src'
    assert first.observation == "src/widgets/core.py:12:class Widget:\n"
    assert first.facts["returncode"] == 0
    assert steps[1].action is not None and steps[1].action.type == "think"
    assert steps[1].summary == "I should reproduce the bug before changing anything."
    assert "EXACTLY ONE action" in (steps[1].observation or "")
    assert steps[4].action is not None and steps[4].action.type == "submit"


def test_submission_is_a_final_episode_with_the_patch(trajectories: Path) -> None:
    task, episodes = _one_run(trajectories / "mini-swe-agent/run/trajs/acme__widgets-101.traj.json")
    submission = episodes[-1]
    assert submission.kind == "submission"
    assert submission.action is not None and submission.action.type == "submit"
    assert submission.action.parameters == {"files": ["src/widgets/core.py"]}
    (patch,) = submission.snippets
    assert patch.kind is SnippetKind.patch and patch.language == "diff"
    assert patch.code.startswith("diff --git a/src/widgets/core.py")
    assert submission.outcome is task.outcome is Outcome.success


def test_outcome_from_a_per_instance_report(trajectories: Path) -> None:
    task, _ = _one_run(trajectories / "mini-swe-agent/run/trajs/acme__widgets-101.traj.json")
    assert (task.status.value, task.outcome) == ("resolved", Outcome.success)


def test_outcome_from_the_run_summary_and_a_run_that_gave_up(trajectories: Path) -> None:
    task, episodes = _one_run(trajectories / "mini-swe-agent/run/trajs/acme__widgets-102.traj.json")
    assert (task.status.value, task.outcome) == ("abandoned", Outcome.failure)
    assert [e.kind for e in episodes] == ["step", "step"]  # no submission to keep
    timed_out = episodes[1]
    assert timed_out.outcome is Outcome.failure and timed_out.source is Source.executed
    assert "timed out" in (timed_out.observation or "")


def test_labels_change_the_outcome(trajectories: Path, tmp_path: Path) -> None:
    run = tmp_path / "run"
    shutil.copytree(trajectories / "mini-swe-agent/run", run)
    report = run / "eval/acme__widgets-101.report.json"
    report.write_text(json.dumps({"resolved": False}))
    task, episodes = _one_run(run / "trajs/acme__widgets-101.traj.json")
    assert (task.status.value, task.outcome) == ("open", Outcome.failure)
    assert episodes[-1].outcome is Outcome.failure
    report.unlink()
    shutil.rmtree(run / "results")
    task, _ = _one_run(run / "trajs/acme__widgets-101.traj.json")
    assert (task.status.value, task.outcome) == ("open", Outcome.unknown)


def test_mini_swe_agent_tool_calls(trajectories: Path) -> None:
    task, episodes = _one_run(trajectories / "mini-swe-agent-tools/acme__widgets-103.traj.json")
    _chain_is_sound(task, episodes)
    assert task.goal == (
        "Widget.describe() crashes on an empty name\n"
        "`Widget(name='').describe()` raises IndexError."
    )
    assert "model:acme/tool-model" in task.tags
    assert task.outcome is Outcome.unknown  # no label beside this file
    steps = [e for e in episodes if e.kind == "step"]
    commands = [s.action.command if s.action else None for s in steps]
    assert commands == [
        "grep -n 'def describe' src/widgets/core.py",
        "sed -n '28,34p' src/widgets/core.py",
        "python -m pytest tests/test_core.py -q",
        None,
        "echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT && git add -A && git diff --cached",
    ]
    assert [s.outcome for s in steps] == [
        Outcome.success,
        Outcome.success,
        Outcome.failure,
        Outcome.failure,
        Outcome.success,
    ]
    assert (
        steps[2].observation
        == "FAILED tests/test_core.py::test_empty_name - IndexError\n1 failed, 4 passed\n"
    )
    assert steps[2].facts["tool_call_id"] == "call_3"
    assert steps[1].summary == "Read the method and run its tests."
    assert steps[4].action is not None and steps[4].action.type == "submit"
    assert steps[0].created_at == datetime.fromtimestamp(1700001000.5, UTC)
    assert episodes[-1].kind == "submission"


def test_swe_agent_run(trajectories: Path) -> None:
    task, episodes = _one_run(trajectories / "swe-agent/acme__widgets-104.traj")
    _chain_is_sound(task, episodes)
    assert (
        task.goal == "Widget.area() returns the perimeter\n`Widget(3, 4).area()` gives 14, not 12."
    )
    assert task.project == "acme/widgets"
    assert (task.status.value, task.outcome) == ("open", Outcome.unknown)
    steps = [e for e in episodes if e.kind == "step"]
    assert len(steps) == 6
    types = [s.action.type if s.action else None for s in steps]
    assert types == ["read", "read", "edit", "edit", "command", "submit"]
    assert steps[1].action is not None
    assert steps[1].action.parameters == {"tool": "open", "path": "src/widgets/core.py"}
    assert steps[2].action is not None
    assert steps[2].action.parameters["path"] == "/acme__widgets/src/widgets/core.py"
    assert steps[2].outcome is Outcome.failure  # the linter refused the edit
    assert steps[3].outcome is Outcome.unknown  # no return codes in this format
    assert steps[5].summary == "Submitted the changes"  # no thought was written
    assert episodes[-1].snippets[0].code.lstrip().startswith("diff --git")


def test_openhands_evaluation_run(trajectories: Path) -> None:
    task, episodes = _runs(list(read_path(trajectories / "openhands/output.jsonl")))[0]
    _chain_is_sound(task, episodes)
    assert task.goal.startswith("Widget.scale() loses precision")
    assert task.project == "acme/widgets"
    assert (task.status.value, task.outcome) == ("open", Outcome.failure)  # report.resolved false
    assert task.started_at == datetime(2025, 1, 2, 10, 0, tzinfo=UTC)
    steps = [e for e in episodes if e.kind == "step"]
    types = [s.action.type if s.action else None for s in steps]
    assert types == ["command", "read", "think", "edit", "think", "command", "finish"]
    outcomes = [s.outcome for s in steps]
    assert outcomes == [
        Outcome.success,  # exit code 0
        Outcome.unknown,  # a read says nothing either way
        Outcome.failure,  # an error no action answered
        Outcome.failure,  # ERROR: no replacement was performed
        Outcome.unknown,
        Outcome.failure,  # exit code 1
        Outcome.unknown,
    ]
    assert steps[1].summary == "Let me read scale() itself."  # from the model's text
    assert steps[3].action is not None
    assert steps[3].action.command == "str_replace /workspace/src/widgets/core.py"
    assert steps[3].action.parameters["new_str"] == "self.width * factor"
    assert steps[4].observation is None  # the fixed acknowledgement of a thought is dropped
    assert steps[5].summary == "Ran `python -m pytest tests -q`"
    assert steps[6].action is not None
    assert steps[6].action.parameters["task_completed"] == "partial"
    assert steps[0].created_at == datetime(2025, 1, 2, 10, 0, 5, tzinfo=UTC)


def test_openhands_resolver_and_abandoned_runs(trajectories: Path) -> None:
    runs = _runs(list(read_path(trajectories / "openhands/output.jsonl")))
    resolver_task, resolver_episodes = runs[1]
    assert resolver_task.project == "acme/gadgets"
    assert resolver_task.goal == "Add a LICENSE file\n\nPlease license this repository under MIT."
    assert resolver_task.outcome is Outcome.failure  # success: false
    types = [e.action.type if e.action else None for e in resolver_episodes]
    assert types == ["command", "command", "finish", "submit"]
    assert resolver_episodes[1].action is not None
    assert resolver_episodes[1].action.parameters == {"tool": "run_ipython", "language": "python"}
    abandoned, episodes = runs[2]
    assert (abandoned.status.value, abandoned.outcome) == ("abandoned", Outcome.failure)
    assert [e.kind for e in episodes] == ["step"]  # an empty patch is no submission


def test_ids_are_deterministic_and_content_addressed(trajectories: Path, tmp_path: Path) -> None:
    path = trajectories / "openhands/output.jsonl"
    first = [i.record.id for i in read_path(path) if isinstance(i, Parsed)]
    second = [i.record.id for i in read_path(path) if isinstance(i, Parsed)]
    assert first == second and len(set(first)) == len(first)
    changed = tmp_path / "output.jsonl"
    changed.write_text(path.read_text().replace("Find scale() first.", "Find scale()."))
    third = [i.record.id for i in read_path(changed) if isinstance(i, Parsed)]
    assert third[0] != first[0]  # the edited run is a different run
    untouched = [i for i in first if not i.startswith("openhands:acme__widgets-105:")]
    assert untouched and set(untouched) <= set(third)  # the other lines are not


def test_project_argument_decides_for_trajectories(trajectories: Path) -> None:
    items = list(read_path(trajectories / "swe-agent/acme__widgets-104.traj", project="team-a"))
    assert {i.record.project for i in items if isinstance(i, Parsed)} == {"team-a"}


def test_a_broken_openhands_line_is_refused_and_the_rest_go_on(
    trajectories: Path, tmp_path: Path
) -> None:
    lines = (trajectories / "openhands/output.jsonl").read_text().splitlines()
    path = tmp_path / "output.jsonl"
    path.write_text("\n".join([lines[0], lines[1][:200], lines[2]]) + "\n")
    items = list(read_path(path, format="openhands"))
    refused = [i for i in items if isinstance(i, Refused)]
    assert [r.ref.line for r in refused] == [2]
    assert refused[0].describe().startswith(f"{path}:2: invalid JSON")
    tasks = [i.record for i in items if isinstance(i, Parsed) and isinstance(i.record, TaskRecord)]
    assert len(tasks) == 2


def test_input_a_reader_does_not_expect_is_refused_and_the_rest_go_on(
    trajectories: Path, tmp_path: Path
) -> None:
    # A list where an event's action belongs, a line nested too deeply for the JSON parser:
    # each is one refusal naming its line; the lines around it still ingest.
    lines = (trajectories / "openhands/output.jsonl").read_text().splitlines()
    odd = json.loads(lines[1])
    for event in odd["history"]:
        if "action" in event:
            event["action"] = ["run"]
            break
    deep = "[" * 100_000 + "]" * 100_000
    path = tmp_path / "output.jsonl"
    path.write_text("\n".join([lines[0], json.dumps(odd), deep, lines[2]]) + "\n")
    items = list(read_path(path, format="openhands"))
    refused = [i for i in items if isinstance(i, Refused)]
    assert [r.ref.line for r in refused] == [2, 3]
    assert "malformed input (TypeError" in refused[0].describe()
    assert "nested too deeply" in refused[1].describe()
    tasks = [i.record for i in items if isinstance(i, Parsed) and isinstance(i.record, TaskRecord)]
    assert len(tasks) == 2


def test_a_non_object_openhands_event_is_refused_alone(trajectories: Path, tmp_path: Path) -> None:
    lines = (trajectories / "openhands/output.jsonl").read_text().splitlines()
    run = json.loads(lines[0])
    whole = [i for i in read_path_of(tmp_path, lines[0]) if isinstance(i, Parsed)]
    run["history"][3:3] = [None, "oops"]
    items = read_path_of(tmp_path, json.dumps(run))
    refused = [i for i in items if isinstance(i, Refused)]
    assert [r.errors[0].field for r in refused] == ["history[3]", "history[4]"]
    assert "expected an object, got null" in refused[0].describe()
    assert len([i for i in items if isinstance(i, Parsed)]) == len(whole)  # the rest of the run


def read_path_of(folder: Path, line: str) -> list[Parsed | Refused]:
    path = folder / "output.jsonl"
    path.write_text(line + "\n")
    return list(read_path(path, format="openhands"))


def test_a_malformed_step_is_refused_with_its_place(trajectories: Path, tmp_path: Path) -> None:
    doc = json.loads((trajectories / "swe-agent/acme__widgets-104.traj").read_text())
    doc["trajectory"][2]["action"] = ["not", "text"]
    path = tmp_path / "acme__widgets-104.traj"
    path.write_text(json.dumps(doc))
    items = list(read_path(path))
    refused = [i for i in items if isinstance(i, Refused)]
    assert len(refused) == 1
    assert refused[0].describe() == (
        f"{path}: trajectory[2]: field 'trajectory[2].action': expected a string, got a list"
    )
    assert refused[0].raw == doc["trajectory"][2]
    steps = [i.record for i in items if isinstance(i, Parsed) and i.record.record_type == "episode"]
    assert [s.step for s in steps] == [0, 1, 3, 4, 5, 6]  # the others keep their places


def test_a_file_without_its_core_field_is_refused_whole(trajectories: Path, tmp_path: Path) -> None:
    doc = json.loads(
        (trajectories / "mini-swe-agent-tools/acme__widgets-103.traj.json").read_text()
    )
    doc["messages"] = "gone"
    path = tmp_path / "acme__widgets-103.traj.json"
    path.write_text(json.dumps(doc))
    (refused,) = list(read_path(path, format="mini-swe-agent"))
    assert isinstance(refused, Refused)
    assert refused.describe() == f"{path}: field 'messages': expected a list, got a string"


def test_huge_observations_are_capped(trajectories: Path, tmp_path: Path) -> None:
    doc = json.loads((trajectories / "swe-agent/acme__widgets-104.traj").read_text())
    doc["trajectory"][4]["observation"] = "x" * 3_000_000 + "END"
    path = tmp_path / "acme__widgets-104.traj"
    path.write_text(json.dumps(doc))
    _, episodes = _one_run(path)
    step = episodes[4]
    assert step.observation is not None and len(step.observation) < 21_000
    assert step.observation.endswith("END")
    assert step.facts["observation_chars"] == 3_000_003
