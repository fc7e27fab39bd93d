"""Every real trajectory in ../shared/trajectories reads into a task and a sound chain.

Step counts are counted here straight from the raw files, independently of the
readers, and outcomes are checked against the labels the runs came with.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from metisgraph.ingest.adapters import Parsed, Refused, detect_format, read_path
from metisgraph.ingest.records import EpisodeRecord, Outcome, TaskRecord, VerdictRecord

pytestmark = pytest.mark.shared

Run = tuple[TaskRecord, list[EpisodeRecord]]


@pytest.fixture(scope="module")
def trajectories(shared_dir: Path) -> Path:
    return shared_dir / "trajectories"


def _runs(path: Path) -> list[Run]:
    runs: list[Run] = []
    for item in read_path(path):
        assert not isinstance(item, Refused), item.describe()
        record = item.record
        if isinstance(record, TaskRecord):
            runs.append((record, []))
        else:
            assert isinstance(record, EpisodeRecord)
            assert record.task_id == runs[-1][0].id
            runs[-1][1].append(record)
    return runs


def _files(root: Path, pattern: str) -> list[Path]:
    files = sorted(root.rglob(pattern))
    assert files, f"no {pattern} under {root}"
    return files


def _steps(episodes: list[EpisodeRecord]) -> list[EpisodeRecord]:
    return [e for e in episodes if e.kind == "step"]


def _check_chain(task: TaskRecord, episodes: list[EpisodeRecord]) -> None:
    assert task.goal.strip() and len(task.goal) <= 4_200
    assert [e.step for e in episodes] == list(range(len(episodes)))
    assert len({e.id for e in episodes}) == len(episodes)
    for episode in episodes:
        assert episode.summary.strip()
        assert episode.observation is None or len(episode.observation) <= 21_000
    submissions = [e for e in episodes if e.kind == "submission"]
    assert len(submissions) <= 1
    if submissions:
        assert episodes[-1] is submissions[0]
        assert submissions[0].outcome is task.outcome


def test_every_sample_is_recognised(trajectories: Path) -> None:
    for path in _files(trajectories, "*.traj*"):
        expected = "swe-agent" if path.suffix == ".traj" else "mini-swe-agent"
        assert detect_format(path) == expected
    for path in _files(trajectories / "openhands_output_jsonl", "*.jsonl"):
        assert detect_format(path) == "openhands"


def test_mini_swe_agent_runs_match_their_labels(trajectories: Path) -> None:
    root = trajectories / "mini-swe-agent-v1_gemini-3-pro_verified"
    summary = json.loads((root / "results/results_summary.json").read_text())
    labels = {i["instance_id"]: i["resolved"] for i in summary["instances"]}
    for path in _files(root / "trajs", "*.traj.json"):
        raw = json.loads(path.read_text())
        task, episodes = _runs(path)[0]
        _check_chain(task, episodes)
        assistants = sum(1 for m in raw["messages"] if m["role"] == "assistant")
        assert len(_steps(episodes)) == assistants, path.name
        resolved = labels[raw["instance_id"]]
        assert task.outcome is (Outcome.success if resolved else Outcome.failure), path.name
        assert task.status.value == ("resolved" if resolved else "open")
        assert f"instance:{raw['instance_id']}" in task.tags
        assert episodes[-1].snippets[0].code == raw["info"]["submission"]


def test_swe_agent_runs(trajectories: Path) -> None:
    for path in _files(trajectories / "swe-agent_traj", "*.traj"):
        raw = json.loads(path.read_text())
        (task, episodes), *rest = _runs(path)
        assert not rest
        _check_chain(task, episodes)
        assert len(_steps(episodes)) == len(raw["trajectory"]), path.name
        assert task.outcome is Outcome.unknown  # these runs carry no test labels
        assert _steps(episodes)[-1].action is not None
        assert _steps(episodes)[-1].action.type == "submit"


def _openhands_steps(history: list[Any]) -> Iterator[object]:
    """Agent actions that are steps, and agent errors that answer no action."""
    ignored = {"system", "recall", "change_agent_state", "null", "condensation"}
    for position, event in enumerate(history):
        if "action" in event:
            if event["action"] in ignored or event.get("source", "agent") != "agent":
                continue
            if "source" not in event and position == 0:
                continue  # the task message of an old-style history
            yield event
        elif event.get("observation") == "error" and event.get("cause") is None:
            yield event


def test_openhands_runs(trajectories: Path) -> None:
    for path in _files(trajectories / "openhands_output_jsonl", "*.jsonl"):
        lines = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
        runs = _runs(path)
        assert len(runs) == len(lines), path.name
        for raw, (task, episodes) in zip(lines, runs, strict=True):
            _check_chain(task, episodes)
            assert len(_steps(episodes)) == len(list(_openhands_steps(raw["history"])))
            if isinstance(raw.get("success"), bool):
                assert task.outcome is (Outcome.success if raw["success"] else Outcome.failure)
            elif raw.get("error"):
                assert (task.status.value, task.outcome) == ("abandoned", Outcome.failure)
            else:
                assert task.outcome is Outcome.unknown


def _ids(trajectories: Path) -> list[str | None]:
    # Verdicts have no id of their own: a run's summary and an instance's report may judge
    # the same (run, instance), matched by those.
    items = [i for i in read_path(trajectories) if isinstance(i, Parsed)]
    return [i.record.id for i in items if not isinstance(i.record, VerdictRecord)]


def test_reading_twice_gives_the_same_ids(trajectories: Path) -> None:
    first, second = _ids(trajectories), _ids(trajectories)
    assert first == second
    assert len(set(first)) == len(first)


def test_the_whole_folder_reads_without_refusals(trajectories: Path) -> None:
    items = list(read_path(trajectories))
    assert items and not [i.describe() for i in items if isinstance(i, Refused)]
    tasks = [i for i in items if isinstance(i.record, TaskRecord)]  # type: ignore[union-attr]
    expected = len(_files(trajectories, "*.traj*")) + sum(
        1
        for path in _files(trajectories / "openhands_output_jsonl", "*.jsonl")
        for line in path.read_text().splitlines()
        if line.strip()
    )
    assert len(tasks) == expected
