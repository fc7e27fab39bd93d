"""Recall's question prepared by ingest, as a record is: checked, sanitized, its links and the
texts to embed extracted, a judge for the snippets across the bridge. No database needed."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from metisgraph.graph import RecallFilters
from metisgraph.ingest.question import Question, QuestionError, prepare_question
from metisgraph.ingest.records import EnvironmentInput

TRACE = """java.lang.OutOfMemoryError: Java heap space
\tat com.acme.cache.Cache.put(Cache.java:42)"""


def test_the_question_is_sanitized_and_its_links_extracted() -> None:
    asked = Question(
        project="p",
        query="the cache on db-7.internal grows\nafter the deploy of 4f9a2c1",
        error=TRACE,
        tags=(" Area:Memory ",),
        tools=("JMAP",),
        projects=("q", "p"),
    )
    prepared = prepare_question(asked)
    request = prepared.request
    assert request.projects == ("p", "q")  # the asking project first, each once
    assert "db-7.internal" not in request.text  # placeholders meet placeholders
    assert request.error_keys and any("Cache" in s for s in request.symbols)
    # The whole question, its first line, its first error's signature: in that order.
    assert prepared.texts[0] == request.text and prepared.title_at == 1
    assert prepared.error_at == 2 and prepared.texts[2].startswith("java.lang.OutOfMemoryError")
    assert request.tools == ("jmap",) and request.tags


def test_times_without_a_zone_are_utc_and_the_filters_pass_through() -> None:
    naive = datetime(2024, 5, 1, 12, 0)
    filters = RecallFilters(outcomes=("failure",), since=naive)
    request = prepare_question(Question(project="p", query="leak", filters=filters)).request
    assert request.filters.since == naive.replace(tzinfo=UTC)
    assert request.filters.outcomes == ("failure",)


@pytest.mark.parametrize(
    ("question", "named"),
    [
        (Question(project="p", query=" "), "query must not be blank"),
        (Question(project="p", query="x", k=0), "k must be between"),
        (Question(project="p", query="x", preset="loud"), "unknown preset"),
        (
            Question(project="p", query="x", filters=RecallFilters(review=("rejected",))),
            "rejected memories never return",
        ),
        (
            Question(project="p", query="x", filters=RecallFilters(min_confidence=1.5)),
            "filter.minConfidence",
        ),
    ],
)
def test_a_question_that_cannot_be_asked_names_its_field(question: Question, named: str) -> None:
    with pytest.raises(QuestionError, match=named):
        prepare_question(question)


def test_the_judge_answers_for_the_callers_environment() -> None:
    loader = {"requires": [{"name": "pandas", "spec": ">=2", "specs": [">=2"]}]}
    old = EnvironmentInput(packages={"pandas": "1.5.3"})
    judge = prepare_question(Question(project="p", query="x", environment=old)).request.judge
    assert judge is not None and judge(loader).status == "incompatible"
    unknown = prepare_question(Question(project="p", query="x")).request.judge
    assert unknown is not None and unknown(loader).status == "unknown"
