"""Recall's query text: filters from named pieces, user text only as escaped terms, every
channel a named query whose parameters are its own. No database needed."""

from __future__ import annotations

import re
from datetime import UTC, datetime

import pytest

from metisgraph.graph import QuestionVectors, RecallFilters, RecallRequest
from metisgraph.graph.channels import ChannelQuery, combined, filters_clause
from metisgraph.graph.cypher import load_queries
from metisgraph.graph.lucene import lucene_query, lucene_terms

RETURNED = re.compile(r"RETURN '(\w+)' AS channel, collect\(\[project, id, score\]\) AS found$")
SHARED = {"projects", "outcomes", "review", "since", "until", "min_confidence", "kinds"}


def test_default_filters_add_no_clause() -> None:
    assert filters_clause(RecallFilters()) == ""
    # Asking for every outcome, or every recallable review state, narrows nothing either.
    everything = RecallFilters(outcomes=("unknown", "partial", "failure", "success"))
    assert filters_clause(everything) == ""
    assert filters_clause(RecallFilters(review=("approved", "pending", "unreviewed"))) == ""


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
def test_each_narrowing_filter_adds_its_named_piece(filters: RecallFilters, clause: str) -> None:
    assert filters_clause(filters) == clause


def test_clauses_name_parameters_never_values() -> None:
    filters = RecallFilters(outcomes=("success') OR true //",), kinds=("x'",), min_confidence=0.9)
    assert "'" not in filters_clause(filters) and "//" not in filters_clause(filters)
    assert filters.narrowing()["outcomes"] == ["success') OR true //"]


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
        filters=RecallFilters(**filters),  # type: ignore[arg-type]
    )


def test_combined_gives_each_channel_its_own_parameters() -> None:
    plan = {
        "vector": ChannelQuery("channel_vector", {"vector": [1.0], "limit": 7, "fetch": 7}),
        "title": ChannelQuery("channel_title", {"vector": [2.0], "limit": 9, "fetch": 9}),
        "tags": ChannelQuery(
            "channel_tags", {"tags": ["os:linux"], "words": [], "limit": 3, "fanout": 100}
        ),
    }
    together, params = combined(plan, _request())
    assert together.mode == "read" and not together.slots
    assert together.text.startswith("CYPHER 25\n") and together.text.count("CYPHER 25") == 1
    assert together.text.count("UNION ALL") == 2
    assert params["vector_vector"] == [1.0] and params["title_vector"] == [2.0]
    assert params["vector_limit"] == 7 and params["title_limit"] == 9 and params["tags_limit"] == 3
    assert params["projects"] == ["alpha"]
    used = set(re.findall(r"\$(\w+)", together.text))
    assert used == set(params)  # every value sent is asked for, and every one asked is sent
    assert "VECTOR INDEX episode_vectors" in together.text and "v.of = 'title'" in together.text


def test_combined_carries_the_callers_filters_as_clauses() -> None:
    plan = {"vector": ChannelQuery("channel_vector", {"vector": [1.0], "limit": 3, "fetch": 3})}
    together, params = combined(plan, _request(outcomes=("failure",)))
    assert "e.outcome IN $outcomes" in together.text and params["outcomes"] == ["failure"]
    unfiltered, params = combined(plan, _request())
    assert "e.outcome" not in unfiltered.text and "outcomes" not in params


def test_every_channel_query_names_its_channel_and_its_own_parameters() -> None:
    """What lets channels share one query without renaming: each piece returns its channel
    and reads only shared values or values named for it."""
    channels = {n: q for n, q in load_queries().items() if n.startswith("channel_")}
    assert len(channels) >= 10
    for name, q in channels.items():
        returned = RETURNED.search(q.text)
        assert returned, name
        channel = returned[1]
        assert name == f"channel_{channel}" or name.startswith(f"channel_{channel}_"), name
        own = set(re.findall(r"\$(\w+)", q.text)) - SHARED
        assert own and all(p.startswith(f"{channel}_") for p in own), (name, own)
        assert q.mode == "read" and q.slots == {"filters"}, name


def test_the_dense_channels_take_their_vectors_from_the_question() -> None:
    from metisgraph.graph.channels import _dense_plan

    vectors = QuestionVectors([1.0], title=[2.0], error=[3.0])
    plan = _dense_plan(_request(), vectors, limit=5, in_index=True)
    shared = plan["episode_vectors"].params  # the vector channels' one search
    assert shared["vector"] == [1.0] and shared["title"] == [2.0]
    assert shared["channels"] == {"text": "vector", "title": "title", "context": "context"}
    assert plan["errors"].params["vector"] == [3.0]
    bare = _dense_plan(_request(), QuestionVectors([1.0]), limit=5, in_index=False)
    assert bare["episode_vectors"].params["title"] is None and "errors" not in bare
    assert bare["episode_vectors"].name == "search_episode_vectors_overfetch"
    used = set(re.findall(r"\$(\w+)", load_queries()["search_episode_vectors"].text)) - SHARED
    assert used == {f"episode_vectors_{p}" for p in shared}  # every value asked is sent
