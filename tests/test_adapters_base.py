"""The shared parts of the readers: validation, refusals, times, text, statements, projects."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

import metisgraph.ingest.adapters as adapters
from metisgraph.ingest.adapters import (
    FieldError,
    Parsed,
    Refused,
    SourceRef,
    derive_project,
    parse_datetime,
    validate_record,
)
from metisgraph.ingest.adapters.statement import from_template, problem_statement
from metisgraph.ingest.adapters.text import cap, cap_head, looks_like_diff, tag
from metisgraph.ingest.records import EpisodeRecord, SnippetRecord, TaskRecord

REF = SourceRef("notes.jsonl", 7)


def test_public_names_are_what_the_package_claims() -> None:
    expected = {
        "FORMATS", "MAX_DEPTH", "FieldError", "Parsed", "Record", "Refused", "SourceFile",
        "SourceRef", "UnknownFormatError", "corpus_episode", "derive_project", "detect_format",
        "hazards",
        "list_sources", "parse_datetime", "printable", "read_path", "validate_record",
    }  # fmt: skip
    assert set(adapters.__all__) == expected
    for name in expected:
        assert getattr(adapters, name) is not None
    assert adapters.FORMATS == (
        "native", "corpus", "swe-agent", "mini-swe-agent", "openhands", "harness-report",
    )  # fmt: skip


@pytest.mark.parametrize(
    ("raw", "model"),
    [
        ({"project": "p", "summary": "did a thing"}, EpisodeRecord),
        ({"record_type": "task", "project": "p", "goal": "fix it"}, TaskRecord),
        ({"record_type": "snippet", "project": "p", "code": "ls -la"}, SnippetRecord),
    ],
)
def test_record_type_picks_the_model_and_defaults_to_episode(
    raw: dict[str, str], model: type
) -> None:
    result = validate_record(raw, REF)
    assert isinstance(result, Parsed)
    assert isinstance(result.record, model)
    assert result.ref == REF


def test_defaults_fill_in_but_do_not_override() -> None:
    filled = validate_record({"summary": "x"}, REF, {"project": "fallback"})
    kept = validate_record({"summary": "x", "project": "own"}, REF, {"project": "fallback"})
    assert isinstance(filled, Parsed) and filled.record.project == "fallback"
    assert isinstance(kept, Parsed) and kept.record.project == "own"


def test_a_refusal_names_file_line_and_field() -> None:
    result = validate_record({"project": "p", "summary": "  "}, REF)
    assert isinstance(result, Refused)
    assert result.errors == (FieldError("summary", "summary must not be blank"),)
    assert result.describe() == "notes.jsonl:7: field 'summary': summary must not be blank"
    assert result.raw == {"project": "p", "summary": "  "}


def test_nested_fields_are_dotted_and_list_items_indexed() -> None:
    raw = {"project": "p", "summary": "s", "tags": ["a:1", "broken"], "action": {"command": 3}}
    result = validate_record(raw, REF)
    assert isinstance(result, Refused)
    fields = {error.field for error in result.errors}
    assert fields == {"tags[1]", "action.command"}
    assert len(result.describe().splitlines()) == 2


def test_unknown_record_type_and_non_objects_are_refused() -> None:
    unknown = validate_record({"record_type": "lesson", "project": "p"}, REF)
    assert isinstance(unknown, Refused) and unknown.errors[0].field == "record_type"
    not_object = validate_record(["a", "list"], REF)  # type: ignore[arg-type]
    assert isinstance(not_object, Refused)
    assert "expected a JSON object" in not_object.describe()


def test_extra_fields_are_refused_by_name() -> None:
    result = validate_record({"project": "p", "summary": "s", "colour": "red"}, REF)
    assert isinstance(result, Refused)
    assert result.errors[0].field == "colour"


def test_source_ref_reads_like_a_location() -> None:
    assert str(SourceRef("a.traj")) == "a.traj"
    assert str(SourceRef("a.jsonl", 3)) == "a.jsonl:3"
    assert str(SourceRef("a.jsonl", 3).at("history[4]")) == "a.jsonl:3: history[4]"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2021-09-30T17:20:00", datetime(2021, 9, 30, 17, 20, tzinfo=UTC)),
        ("2023-03-12T17:49:00Z", datetime(2023, 3, 12, 17, 49, tzinfo=UTC)),
        ("1:56 pm on 8 May, 2023", datetime(2023, 5, 8, 13, 56, tzinfo=UTC)),
        ("10:04 am on 19 January, 2024", datetime(2024, 1, 19, 10, 4, tzinfo=UTC)),
        ("May 8, 2023", datetime(2023, 5, 8, tzinfo=UTC)),
        ("2025-04-30 16:31:22", datetime(2025, 4, 30, 16, 31, 22, tzinfo=UTC)),
        ("1700000000", datetime(2023, 11, 14, 22, 13, 20, tzinfo=UTC)),
        ("Tue, 14 Nov 2023 22:13:20 +0000", datetime(2023, 11, 14, 22, 13, 20, tzinfo=UTC)),
    ],
)
def test_times_in_many_forms(text: str, expected: datetime) -> None:
    assert parse_datetime(text) == expected


@pytest.mark.parametrize("text", [None, "", "   ", "sometime last spring", "32 May 2023"])
def test_times_we_cannot_read_are_none(text: str | None) -> None:
    assert parse_datetime(text) is None


def test_a_zone_written_in_the_time_is_kept() -> None:
    moment = parse_datetime("2023-03-12T17:49:00+02:00")
    assert moment is not None and moment.utcoffset() is not None
    assert moment.astimezone(UTC).hour == 15


def test_cap_keeps_head_and_tail_with_a_marker() -> None:
    text = "H" * 30_000 + "T" * 30_000
    capped = cap(text)
    assert len(capped) < 20_100
    assert capped.startswith("HHHH") and capped.endswith("TTTT")
    assert "[... 40000 characters cut ...]" in capped
    assert cap("short") == "short"
    assert cap_head("abcdef", 3).startswith("abc") and "3 characters cut" in cap_head("abcdef", 3)


def test_diffs_are_told_from_code() -> None:
    assert looks_like_diff("diff --git a/x b/x\n--- a/x\n+++ b/x\n")
    assert looks_like_diff("--- a/x.py\n+++ b/x.py\n@@ -1,2 +1,2 @@\n-a\n+b\n")
    assert not looks_like_diff("def f():\n    return 1 - 2\n")


def test_tags_are_one_line_and_skip_empty_values() -> None:
    assert tag("model", "acme/m-1") == "model:acme/m-1"
    assert tag("model", "two\nlines") == "model:two lines"
    assert tag("model", None) is None
    assert tag("model", "  ") is None


def test_the_issue_is_cut_out_of_a_rendered_template() -> None:
    template = "Intro {{ config }}\n<pr>\nConsider this:\n{{task}}\n</pr>\n\nRules for {{x}}"
    prompt = "Intro yes\n<pr>\nConsider this:\nThe bug\nspans lines\n</pr>\n\nRules for y"
    assert from_template(prompt, template) == "The bug\nspans lines"
    assert from_template("unrelated text", template) is None


@pytest.mark.parametrize(
    ("prompt", "expected"),
    [
        (
            "<pr_description>\nConsider the following PR description:\nBug A\n</pr_description>",
            "Bug A",
        ),
        ("Context\n<issue_description>\nBug B\n</issue_description>\nMore", "Bug B"),
        ("Here is the issue:\nISSUE:\nBug C\nline 2\n\nINSTRUCTIONS:\nDo it", "Bug C\nline 2"),
        ("Just a task statement", "Just a task statement"),
    ],
)
def test_the_issue_is_found_in_common_wrappers(prompt: str, expected: str) -> None:
    assert problem_statement(prompt) == expected


@pytest.mark.parametrize(
    ("project", "instance", "repo", "stem", "expected"),
    [
        ("mine", "django__django-11099", "x/y", "f", "mine"),
        (None, "django__django-11099", None, "f", "django/django"),
        (None, "scikit-learn__scikit-learn-25747", None, "f", "scikit-learn/scikit-learn"),
        (None, "swe-agent__test-repo-i1", None, "f", "swe-agent/test-repo"),
        (None, "run-7", "acme/widgets", "f", "acme/widgets"),
        (None, "run-7", None, "my output (1)", "my-output-1"),
    ],
)
def test_project_is_given_or_derived(
    project: str | None, instance: str, repo: str | None, stem: str, expected: str
) -> None:
    assert derive_project(project, instance, repo, stem) == expected
