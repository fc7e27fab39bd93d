"""Ids are held as project names are (issue 30, item 3): they start with a letter or digit,
every character is printable — no NUL, no bidi override, no zero-width — and they are
bounded, so the export never holds a raw control byte and node() takes every id's own
global id."""

from __future__ import annotations

from typing import Any

import pytest

from metisgraph.graph.refs import NodeRef
from metisgraph.ingest.adapters import Parsed, Refused, validate_record
from metisgraph.ingest.adapters.base import SourceRef

RECORD = """mutation($i: EpisodeInput!) {
  recordEpisode(input: $i) { id status errors { field message } } }"""
NODE = "query($id: ID!) { node(id: $id) { key project } }"


@pytest.mark.parametrize(
    ("given", "says"),
    [
        ("\u0000", "must start with a letter or a digit"),
        ("ep\u0000a1", "character 2 (U+0000) is not printable"),
        ("\u202eep-a1", "must start with a letter or a digit"),
        ("ep-\u202ea1", "character 3 (U+202E) is not printable"),
        ("ep\u200ba1", "character 2 (U+200B) is not printable"),
        ("ep\u2028a1", "character 2 (U+2028) is not printable"),
        ("ep-a1\n", "character 5 (U+000A) is not printable"),
        ("../../etc/passwd", "must start with a letter or a digit"),
        ("x" * 5_000, "at most 512 characters"),
    ],
    ids=["nul", "inner-nul", "rlo", "inner-rlo", "zero-width", "sep", "newline", "dots", "long"],
)
@pytest.mark.parametrize("field", ["id", "task_id"])
def test_an_id_that_is_no_name_is_refused_with_its_field(given: str, says: str, field: str) -> None:
    refused = validate_record(
        {"project": "p", "summary": "s", field: given}, SourceRef("ids.jsonl", 1)
    )
    assert isinstance(refused, Refused), given
    assert [e.field for e in refused.errors] == [field]
    assert says in refused.errors[0].message


@pytest.mark.parametrize(
    "given", ["ep-a1", "django__django-11099:3", "run 7/instance", "Étape-2", "42"]
)
def test_real_ids_pass(given: str) -> None:
    record = {"project": "p", "summary": "s", "id": given}
    assert isinstance(validate_record(record, SourceRef("ids.jsonl", 1)), Parsed)


def test_recorded_ids_are_refused_or_found_by_their_global_id(gql: Any, project: str) -> None:
    bidi = gql(RECORD, {"i": {"project": project, "id": "\u202eep-a1", "summary": "s"}})
    result = bidi["data"]["recordEpisode"]
    assert result["status"] == "refused" and result["errors"][0]["field"] == "id", bidi
    longest = "e" * 512
    written = gql(RECORD, {"i": {"project": project, "id": longest, "summary": "a lesson"}})
    assert written["data"]["recordEpisode"]["status"] == "written", written
    found = gql(NODE, {"id": NodeRef("Episode", project, longest).id})
    assert found["data"]["node"] == {"key": longest, "project": project}, found
