"""Recall's query text: filters from a fixed set of clauses, user text only as escaped terms,
every channel in one query with its own parameters. No database needed."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from metisgraph.graph.channels import (
    ChannelQuery,
    RecallFilters,
    RecallRequest,
    combined,
    lucene_query,
    lucene_terms,
)


def test_default_filters_add_no_clause() -> None:
    assert RecallFilters().clause() == ""
    # Asking for every outcome, or every recallable review state, narrows nothing either.
    everything = RecallFilters(outcomes=("unknown", "partial", "failure", "success"))
    assert everything.clause() == ""


@pytest.mark.parametrize(
    ("filters", "clause"),
    [
        (RecallFilters(outcomes=("success",)), " AND e.outcome IN $outcomes"),
        (RecallFilters(review=("approved",)), " AND e.review_status IN $review"),
        (RecallFilters(since=datetime(2024, 1, 1, tzinfo=UTC)), " AND e.created_at >= $since"),
        (RecallFilters(until=datetime(2024, 1, 1, tzinfo=UTC)), " AND e.created_at <= $until"),
        (RecallFilters(min_confidence=0.5), " AND e.confidence >= $min_confidence"),
        (RecallFilters(kinds=("bug_report",)), " AND e.kind IN $kinds"),
        (RecallFilters(kinds=()), " AND e.kind IN $kinds"),  # no kind asked: nothing matches
    ],
)
def test_each_narrowing_filter_adds_its_clause(filters: RecallFilters, clause: str) -> None:
    assert filters.clause() == clause


def test_clauses_name_parameters_never_values() -> None:
    filters = RecallFilters(outcomes=("success') OR true //",), kinds=("x'",), min_confidence=0.9)
    assert "'" not in filters.clause() and "//" not in filters.clause()
    assert filters.params()["outcomes"] == ["success') OR true //"]


def test_lucene_terms_let_no_query_syntax_through() -> None:
    terms = lucene_terms('NullPointerException AND title:"x" (a OR b) foo* ~bar^2 c:\\d')
    words = terms.split(" OR ")
    assert "AND" not in words and "OR" not in words  # lower-cased: never operators
    assert {"nullpointerexception", "title", "foo", "bar"} <= set(words)
    for special in ':"()*~^':
        assert special not in terms.replace("\\" + special, "")
    assert "\\-" in lucene_terms("x-ray")  # a hyphen inside a word is kept, escaped


def test_lucene_query_restricts_to_the_projects_scope() -> None:
    assert lucene_query("  ", ("p_a",)) is None
    assert lucene_query("leak", ("p_a", "p_b")) == "+scope:(p_a OR p_b) +(leak)"


def _request(**filters: object) -> RecallRequest:
    return RecallRequest(
        projects=("alpha",),
        text="leak",
        vector=[0.1, 0.2],
        scopes=("s_alpha",),
        filters=RecallFilters(**filters),  # type: ignore[arg-type]
    )


def test_combined_gives_each_channel_its_own_parameters() -> None:
    plan = {
        "vector": ChannelQuery(
            "vector_episodes", "episode_embedding", {"vector": [1.0], "limit": 7}
        ),
        "title": ChannelQuery(
            "vector_episodes", "episode_title_embedding", {"vector": [2.0], "limit": 9}
        ),
        "tags": ChannelQuery("tag_episodes", None, {"tags": ["os:linux"], "words": [], "limit": 3}),
    }
    text, params = combined(plan, _request())
    assert text.startswith("CYPHER 25\n") and text.count("CYPHER 25") == 1
    assert text.count("UNION ALL") == 2
    assert params["vector_vector"] == [1.0] and params["title_vector"] == [2.0]
    assert params["vector_limit"] == 7 and params["title_limit"] == 9 and params["tags_limit"] == 3
    assert params["projects"] == ["alpha"]
    # Shared values keep their names; every channel's own value is renamed in its text.
    assert "$projects" in text and "$vector_vector" in text and "$title_vector" in text
    assert "$vector " not in text and "$limit" not in text and "$tags " not in text
    assert "VECTOR INDEX episode_title_embedding" in text and "{{" not in text


def test_combined_carries_the_callers_filters_as_clauses() -> None:
    plan = {"vector": ChannelQuery("vector_episodes", "episode_embedding", {"vector": [1.0]})}
    text, params = combined(plan, _request(outcomes=("failure",)))
    assert "e.outcome IN $outcomes" in text and params["outcomes"] == ["failure"]
    assert "e.outcome" not in combined(plan, _request())[0]


def test_combined_refuses_a_channel_name_that_is_not_a_plain_word() -> None:
    plan = {"x'} RETURN 1 //": ChannelQuery("tag_episodes", None, {"tags": []})}
    with pytest.raises(ValueError, match="channel name"):
        combined(plan, _request())


def test_combined_refuses_an_index_name_that_is_not_a_plain_word() -> None:
    plan = {"vector": ChannelQuery("vector_episodes", "idx) MATCH (n", {"vector": [1.0]})}
    with pytest.raises(ValueError, match="index name"):
        combined(plan, _request())
