"""Native JSONL records and the neutral corpus format, from hand-written fixtures."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

from metisgraph.ingest.adapters import Parsed, Refused, SourceRef, corpus_episode, read_path
from metisgraph.ingest.records import EpisodeRecord, Outcome, SnippetKind, Source, TaskRecord


@pytest.fixture
def records_dir(fixtures_dir: Path) -> Path:
    return fixtures_dir / "records"


def _split(items: list[Parsed | Refused]) -> tuple[list[Parsed], list[Refused]]:
    return [i for i in items if isinstance(i, Parsed)], [i for i in items if isinstance(i, Refused)]


def test_native_tasks_come_before_their_episodes(records_dir: Path) -> None:
    parsed, _ = _split(list(read_path(records_dir / "native.jsonl")))
    ids = [p.record.id for p in parsed]
    assert ids == ["task-1", "ep-2", "ep-1", "snip-1"]
    assert isinstance(parsed[0].record, TaskRecord)
    assert parsed[1].ref.line == 1  # the episode keeps its own line number


def test_native_refusals_name_line_and_field(records_dir: Path) -> None:
    _, refused = _split(list(read_path(records_dir / "native.jsonl")))
    described = {r.ref.line: r.describe() for r in refused}
    path = str(records_dir / "native.jsonl")
    assert described[5] == f"{path}:5: field 'summary': summary must not be blank"
    assert described[7].startswith(f"{path}:7: field 'tags[1]': ")
    assert described[8].startswith(f"{path}:8: invalid JSON")
    assert "field 'record_type'" in described[9]
    assert described[10] == f"{path}:10: field 'project': Field required"
    assert sorted(described) == [5, 7, 8, 9, 10]


def test_a_broken_line_keeps_its_text_for_the_dead_letter_file(records_dir: Path) -> None:
    _, refused = _split(list(read_path(records_dir / "native.jsonl")))
    broken = next(r for r in refused if r.ref.line == 8)
    assert isinstance(broken.raw, str) and "cut off in the middle" in broken.raw
    letter = json.loads(json.dumps(broken.as_dead_letter()))
    assert letter["file"] == str(records_dir / "native.jsonl") and letter["line"] == 8
    assert letter["errors"][0]["message"].startswith("invalid JSON")
    assert letter["raw"] == broken.raw
    json.dumps([r.as_dead_letter() for r in refused])  # every refusal can be written out


def test_project_argument_fills_a_missing_project_only(records_dir: Path) -> None:
    parsed, refused = _split(list(read_path(records_dir / "native.jsonl", project="fallback")))
    by_id = {p.record.id: p.record for p in parsed}
    assert by_id["ep-1"].project == "demo"
    assert "fallback" in {p.record.project for p in parsed}
    assert 10 not in {r.ref.line for r in refused}


def test_native_json_list_is_read_with_pointers(records_dir: Path) -> None:
    parsed, refused = _split(list(read_path(records_dir / "native_list.json")))
    assert not refused
    assert [p.record.id for p in parsed] == ["task-10", "ep-10"]
    assert [p.ref.pointer for p in parsed] == ["[1]", "[0]"]
    assert parsed[0].ref.line is None


def _corpus(records_dir: Path) -> tuple[dict[str, EpisodeRecord], list[Refused]]:
    parsed, refused = _split(list(read_path(records_dir / "corpus.jsonl")))
    episodes = {}
    for item in parsed:
        if isinstance(item.record, TaskRecord):  # a conversation's session
            continue
        assert isinstance(item.record, EpisodeRecord)
        episodes[item.record.id or ""] = item.record
    return episodes, refused


def test_corpus_dialogue_turns_are_chained_as_one_session(tmp_path: Path) -> None:
    lines = [
        {"id": f"c:{n}", "project": "talk", "kind": "dialogue_turn", "text": f"turn {n}",
         "created_at": "1:56 pm on 8 May, 2023"} for n in range(3)
    ] + [{"id": "c:3", "project": "talk", "kind": "dialogue_turn", "text": "later",
          "created_at": "2:00 pm on 9 May, 2023"},
         {"id": "r:1", "project": "talk", "kind": "bug_report", "text": "not a turn",
          "created_at": "2:00 pm on 9 May, 2023"}]  # fmt: skip
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text("".join(json.dumps(line) + "\n" for line in lines))
    records = [i.record for i in read_path(corpus, format="corpus") if isinstance(i, Parsed)]
    tasks = [r for r in records if isinstance(r, TaskRecord)]
    turns = [r for r in records if isinstance(r, EpisodeRecord)]
    assert len(tasks) == 2 and records[0] is tasks[0]
    assert [(t.task_id == tasks[0].id, t.step) for t in turns[:3]] == [(True, 0), (True, 1),
                                                                         (True, 2)]  # fmt: skip
    assert (turns[3].task_id, turns[3].step) == (tasks[1].id, 0)
    assert turns[4].task_id is None


def test_corpus_items_become_user_episodes_with_their_ids(records_dir: Path) -> None:
    episodes, _ = _corpus(records_dir)
    report = episodes["acme-1"]
    assert report.project == "acme"
    assert report.summary == (
        "Worker dies with OutOfMemoryError\n\nAfter a day the worker is killed.\n"
        "Heap grows without bound."
    )
    assert report.title == "Worker dies with OutOfMemoryError"
    assert report.error == "java.lang.OutOfMemoryError: Java heap space"
    assert report.kind == "bug_report"
    assert report.source is Source.user
    assert report.outcome is Outcome.unknown
    assert report.tags == ["priority:major", "version:2.1"]
    assert report.created_at == datetime(2021, 9, 30, 17, 20, tzinfo=UTC)
    assert report.snippets == []


def test_corpus_fixes_succeed_and_carry_their_patch(records_dir: Path) -> None:
    episodes, _ = _corpus(records_dir)
    fix = episodes["acme-2"]
    assert fix.outcome is Outcome.success
    assert fix.created_at is None and "created_at_text" not in fix.facts
    (snippet,) = fix.snippets
    assert snippet.kind is SnippetKind.patch and snippet.language == "diff"
    assert snippet.relation.value == "GENERATED"
    plain = episodes["acme-3"]
    assert plain.outcome is Outcome.success
    assert plain.summary == "Slugs keep trailing dashes"
    assert plain.snippets[0].kind is None and plain.snippets[0].language is None


def test_corpus_free_form_and_unreadable_times(records_dir: Path) -> None:
    episodes, _ = _corpus(records_dir)
    assert episodes["talk-1:D1:1"].created_at == datetime(2023, 5, 8, 13, 56, tzinfo=UTC)
    assert episodes["talk-1:D1:1"].outcome is Outcome.unknown  # "fixed" in the text is no kind
    note = episodes["acme-4"]
    assert note.created_at is None
    assert note.facts == {"created_at_text": "sometime last spring", "source_url": "wiki/ops/logs"}


def test_corpus_refusals_name_the_corpus_fields(records_dir: Path) -> None:
    _, refused = _corpus(records_dir)
    described = {r.ref.line: r.describe() for r in refused}
    path = str(records_dir / "corpus.jsonl")
    assert described == {
        6: f"{path}:6: field 'text': title and text are both empty: nothing to remember",
        7: f"{path}:7: field 'tags': expected a list, got a string",
    }


def test_corpus_project_argument_is_a_default() -> None:
    ref = SourceRef("c.jsonl", 1)
    item = {
        "id": 5,
        "kind": "bug_fix",
        "text": "t",
        "code": "--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b",
    }
    result = corpus_episode(item, ref, project="given")
    assert isinstance(result, Parsed)
    assert result.record.project == "given" and result.record.id == "5"
    bad_code = corpus_episode({**item, "code": 7}, ref, project="given")
    assert isinstance(bad_code, Refused) and bad_code.errors[0].field == "code"


def test_a_plain_tag_and_an_oversized_step_are_explained(tmp_path: Path) -> None:
    path = tmp_path / "records.jsonl"
    record = {"project": "p", "summary": "x", "tags": ["python", "lang:go"], "step": 10**12}
    path.write_text(json.dumps(record) + "\n")
    (refused,) = _split(list(read_path(path)))[1]
    messages = {e.field: e.message for e in refused.errors}
    assert messages["tags[0]"] == "expected key:value (e.g. lang:python), got 'python'"
    assert "less than or equal to 2147483647" in messages["step"]


def test_code_too_long_to_analyse_is_refused_naming_the_snippet(tmp_path: Path) -> None:
    from metisgraph.ingest.records import MAX_CODE_CHARS

    path = tmp_path / "records.jsonl"
    fine = {"project": "p", "summary": "ok", "snippets": [{"code": "print(1)\n"}]}
    huge = {"project": "p", "summary": "x", "snippets": [{"code": "x = 1\n" * MAX_CODE_CHARS}]}
    path.write_text(json.dumps(fine) + "\n" + json.dumps(huge) + "\n")
    parsed, refused = _split(list(read_path(path)))
    assert len(parsed) == 1 and len(refused) == 1 and refused[0].ref.line == 2
    (error,) = refused[0].errors
    assert error.field == "snippets[0].code" and f"{MAX_CODE_CHARS}" in error.message
