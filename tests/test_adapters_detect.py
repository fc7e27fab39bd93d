"""Recognising formats, and reading whole folders of mixed files."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from metisgraph.ingest.adapters import (
    Parsed,
    Refused,
    UnknownFormatError,
    detect_format,
    list_sources,
    read_path,
)
from metisgraph.ingest.records import TaskRecord


@pytest.mark.parametrize(
    ("relative", "expected"),
    [
        ("records/native.jsonl", "native"),
        ("records/native_list.json", "native"),
        ("records/corpus.jsonl", "corpus"),
        ("trajectories/swe-agent/acme__widgets-104.traj", "swe-agent"),
        ("trajectories/mini-swe-agent/run/trajs/acme__widgets-101.traj.json", "mini-swe-agent"),
        ("trajectories/mini-swe-agent-tools/acme__widgets-103.traj.json", "mini-swe-agent"),
        ("trajectories/openhands/output.jsonl", "openhands"),
    ],
)
def test_each_format_is_recognised(fixtures_dir: Path, relative: str, expected: str) -> None:
    assert detect_format(fixtures_dir / relative) == expected


def test_content_decides_not_the_name(fixtures_dir: Path, tmp_path: Path) -> None:
    renamed = tmp_path / "whatever.json"
    shutil.copy(fixtures_dir / "trajectories/swe-agent/acme__widgets-104.traj", renamed)
    assert detect_format(renamed) == "swe-agent"


def test_a_broken_first_line_does_not_hide_the_format(fixtures_dir: Path, tmp_path: Path) -> None:
    path = tmp_path / "corpus.jsonl"
    path.write_text("{not json\n" + (fixtures_dir / "records/corpus.jsonl").read_text())
    assert detect_format(path) == "corpus"


def test_a_record_with_a_typo_at_the_top_does_not_hide_the_format(
    fixtures_dir: Path, tmp_path: Path
) -> None:
    path = tmp_path / "records.jsonl"
    typo = '{"project": "p", "sumary": "a typo", "outcome": "success"}\n'
    path.write_text(typo + (fixtures_dir / "records/native.jsonl").read_text())
    assert detect_format(path) == "native"


def test_a_cut_off_traj_is_read_and_refused_not_skipped(fixtures_dir: Path, tmp_path: Path) -> None:
    whole = (fixtures_dir / "trajectories/swe-agent/acme__widgets-104.traj").read_text()
    path = tmp_path / "cut.traj"
    path.write_text(whole[: len(whole) // 2])
    assert detect_format(path) == "swe-agent"
    (refused,) = list(read_path(path))
    assert isinstance(refused, Refused) and "invalid JSON" in refused.describe()


@pytest.mark.parametrize(
    ("name", "content"),
    [
        ("notes.txt", "hello"),
        ("report.json", '{"resolved": true}'),
        ("preds.jsonl", '{"instance_id": "a__b-1", "model_patch": "diff"}\n'),
        ("empty.jsonl", ""),
        ("broken.json", "{"),
    ],
)
def test_unknown_files_get_a_clear_error(tmp_path: Path, name: str, content: str) -> None:
    path = tmp_path / name
    path.write_text(content)
    with pytest.raises(UnknownFormatError, match=r"cannot tell its format.*native, corpus"):
        detect_format(path)


def test_unknown_format_names_and_missing_paths_are_errors(fixtures_dir: Path) -> None:
    with pytest.raises(UnknownFormatError, match="unknown format 'aider'"):
        list(read_path(fixtures_dir / "records/native.jsonl", format="aider"))
    with pytest.raises(FileNotFoundError, match="no such file"):
        list(read_path(fixtures_dir / "does-not-exist.jsonl"))


def test_a_given_format_overrides_detection_for_a_file(fixtures_dir: Path) -> None:
    items = list(read_path(fixtures_dir / "records/corpus.jsonl", format="native"))
    # corpus lines are not native records: every one is refused, none silently dropped
    assert items and all(isinstance(i, Refused) for i in items)
    assert len(items) == 7


def test_a_folder_of_mixed_files(fixtures_dir: Path) -> None:
    sources = list_sources(fixtures_dir)
    formats = {s.path.relative_to(fixtures_dir).as_posix(): s.format for s in sources}
    # Harness reports are verdicts on the run's instances (issue 10, item 7).
    assert formats["trajectories/mini-swe-agent/run/results/results_summary.json"] == (
        "harness-report"
    )
    assert formats["trajectories/mini-swe-agent/run/eval/acme__widgets-101.report.json"] == (
        "harness-report"
    )
    assert formats["trajectories/openhands/output.jsonl"] == "openhands"
    assert [s.path for s in sources] == sorted(s.path for s in sources)
    # Only the adapters' own fixture folders: other suites add fixtures of their own.
    ours = ("trajectories", "records")
    items = [i for i in read_path(fixtures_dir)
             if Path(i.ref.file).relative_to(fixtures_dir).parts[0] in ours]  # fmt: skip
    tasks = [i.record for i in items if isinstance(i, Parsed) and isinstance(i.record, TaskRecord)]
    # native 2, mini-swe-agent 3, swe-agent 1, openhands 3, a corpus conversation 1
    assert len(tasks) == 10
    refused = [i for i in items if isinstance(i, Refused)]
    assert {Path(r.ref.file).name for r in refused} == {"native.jsonl", "corpus.jsonl"}


def test_a_folder_with_a_format_reads_only_that_format(fixtures_dir: Path) -> None:
    items = list(read_path(fixtures_dir / "trajectories", format="mini-swe-agent"))
    files = {Path(i.ref.file).name for i in items}
    assert files == {
        "acme__widgets-101.traj.json",
        "acme__widgets-102.traj.json",
        "acme__widgets-103.traj.json",
    }


def test_hidden_files_are_not_read(fixtures_dir: Path, tmp_path: Path) -> None:
    shutil.copy(fixtures_dir / "records/native_list.json", tmp_path / "visible.json")
    (tmp_path / ".cache").mkdir()
    shutil.copy(fixtures_dir / "records/native_list.json", tmp_path / ".cache/hidden.json")
    assert [s.path.name for s in list_sources(tmp_path)] == ["visible.json"]


def test_tasks_precede_their_episodes_in_every_file(fixtures_dir: Path) -> None:
    seen: set[str] = set()
    for item in read_path(fixtures_dir):
        if not isinstance(item, Parsed):
            continue
        record = item.record
        if isinstance(record, TaskRecord) and record.id:
            seen.add(record.id)
        elif record.record_type == "episode" and record.task_id:
            assert record.task_id in seen, f"{item.ref}: episode before its task"
