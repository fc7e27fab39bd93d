"""The channel registry is the one place a recall channel is declared: its query, its index,
the presets and docs/architecture.md all agree with it. No database needed."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from metisgraph.graph import PRESETS, QuestionVectors, RecallRequest
from metisgraph.graph.channel_registry import CHANNELS, channel, weight
from metisgraph.graph.channels import SHARED_SEARCH, ChannelQuery, _dense_plan, _lexical_plan
from metisgraph.graph.cypher import load_queries
from metisgraph.graph.indexes import schema_for
from metisgraph.graph.recall_settings import ChannelWeights, RecallSettings

ROOT = Path(__file__).resolve().parents[1]
RETURNED = re.compile(r"RETURN '(\w+)' AS channel")
# docs/architecture.md: a row per channel, | `name` | kind | index | vector | weight | alone | …
DOC_ROW = re.compile(
    r"^\| `(\w+)` \| (\w+) \| ([`\w\-— ]+) \| (\w+|—) \| ([\d.]+) \| (yes|no) \|", re.M
)


def _asked(plan: dict[str, ChannelQuery]) -> set[str]:
    """The channels a plan asks, each planned query answering for its own."""
    return {c for key, q in plan.items() for c in (q.answers or (key,))}


def test_every_channel_query_belongs_to_a_registered_channel_and_back() -> None:
    queries = {n: q for n, q in load_queries().items() if n.startswith("channel_")}
    returned = {RETURNED.search(q.text)[1] for q in queries.values()}  # type: ignore[index]
    assert returned == {c.name for c in CHANNELS}
    for c in CHANNELS:
        assert c.query in queries, c.name
        if c.index:
            assert c.index in queries[c.query].text, c.name


def test_a_channel_reads_a_bounded_fanout_exactly_when_registered_so() -> None:
    """A graph channel that reaches episodes through a shared node (an error, a tag ...)
    reads at most $<name>_fanout of them a node, in every variant of its query, and is sent
    the setting's value; no other channel reads one."""
    queries = load_queries()
    settings = RecallSettings(fanout=7)
    req = RecallRequest(
        text="NullPointerException in Parser.parse with pytest",
        projects=("alpha",),
        settings=settings,
        error_keys=("k",),
        symbols=("Parser",),
        tags=("os:linux",),
        tools=("pytest",),
    )
    vectors = QuestionVectors([1.0], title=[2.0], error=[3.0])
    plan = _lexical_plan(req, limit=5) | _dense_plan(req, vectors, limit=5, in_index=True)
    for c in CHANNELS:
        variants = [q for n, q in queries.items() if n == c.query or n.startswith(f"{c.query}_")]
        for q in variants:
            assert (f"${c.name}_fanout" in q.text) == c.fans_out, q.name
            if c.fans_out:  # the episodes are read in a subquery cut at the fanout
                assert re.search(rf"RETURN e LIMIT \${c.name}_fanout", q.text), q.name
        if c.fans_out and c.name in plan:
            assert plan[c.name].params["fanout"] == 7, c.name
    assert {"errors", "symbols", "tags", "tools"} <= plan.keys()


def test_every_index_a_channel_searches_is_in_the_schema() -> None:
    statements = "\n".join(s.text for s in schema_for(384, vector_filters=True))
    for c in CHANNELS:
        if c.index:
            assert re.search(rf"INDEX {c.index} IF NOT EXISTS", statements), c.name
        if c.of:
            assert c.kind == "vector" and c.index == "episode_vectors"


def test_presets_weigh_only_registered_channels_and_keep_the_others_own() -> None:
    for settings in PRESETS.values():
        assert set(settings.weights.names()) <= {c.name for c in CHANNELS}
    semantic = PRESETS["semantic"]
    assert weight(semantic, "fulltext") == 0.5 and weight(semantic, "symbols") == 5.0
    assert weight(RecallSettings(), "context_text") == channel("context_text").weight
    off = RecallSettings(weights=ChannelWeights(title=0.0))
    vectors = QuestionVectors([1.0], title=[2.0])
    assert "title" in _asked(_dense_plan(RecallRequest(("p",), "leak"), vectors, 5, True))
    plan = _dense_plan(RecallRequest(("p",), "leak", settings=off), vectors, 5, True)
    assert "title" not in _asked(plan) and {"vector", "context"} <= _asked(plan)
    with pytest.raises(KeyError, match="known: vector"):
        channel("nope")


def test_a_channel_is_asked_in_the_round_trip_its_vector_says() -> None:
    req = RecallRequest(("p",), "leak in worker", symbols=("Worker",), tags=("os:linux",))
    lexical = _lexical_plan(req, 5)
    dense = _dense_plan(req, QuestionVectors([1.0]), 5, True)
    # tools named nothing: asked anyway, matching nothing (one query text for every question)
    assert set(lexical) == {"fulltext", "context_text", "symbols", "tags", "tools"}
    assert _asked(dense) == {"vector", "title", "context"}  # no error: no errors channel
    for name in (*lexical, *_asked(dense)):
        assert (channel(name).vector is None) == (name in lexical)


def test_the_vector_channels_of_one_index_are_one_search_per_question() -> None:
    """Issue 23: every channel over episode_vectors is answered by one vector search (the
    search's cost, which grows with the store, is paid once per question)."""
    by_index: dict[str, set[str]] = {}
    for c in CHANNELS:
        if c.kind == "vector" and c.index:
            by_index.setdefault(c.index, set()).add(c.name)
    assert by_index == {"episode_vectors": {"vector", "title", "context"}}
    req = RecallRequest(("p",), "leak in worker", error_keys=("k",))
    for in_index in (True, False):
        dense = _dense_plan(req, QuestionVectors([1.0], title=[2.0], error=[3.0]), 5, in_index)
        shared = [q for q in dense.values() if q.answers]
        assert len(shared) == 1 and set(shared[0].answers) == by_index["episode_vectors"]
        assert shared[0].name.startswith(SHARED_SEARCH)
        assert set(dense) == {"episode_vectors", "errors"}
    queries = load_queries()
    search = queries[SHARED_SEARCH].text
    assert search.count("VECTOR INDEX") == 1 and "episode_vectors" in search
    assert queries[f"{SHARED_SEARCH}_overfetch"].text.count("queryNodes") == 1


def test_the_architecture_doc_shows_every_registered_channel_as_registered() -> None:
    doc = (ROOT / "docs" / "architecture.md").read_text()
    rows = {m[0]: m for m in DOC_ROW.findall(doc)}
    assert set(rows) == {c.name for c in CHANNELS}
    for c in CHANNELS:
        _, kind, index, vector, weighs, alone = rows[c.name]
        assert kind == c.kind, c.name
        assert (c.index or "—") == index.strip("`"), c.name
        assert (c.vector or "—") == vector, c.name
        assert float(weighs) == c.weight, c.name
        assert (alone == "yes") == c.alone, c.name


def test_a_question_sends_one_lexical_query_text_whatever_names_it_holds() -> None:
    """Symbols, tags and tools are asked whatever the question names (their lists filled
    with a value no node holds): each combination was a query text of its own, planned by
    Neo4j on its first use. The environment, stated or not, still switches its channel."""
    from metisgraph.graph.channels import combined
    from metisgraph.graph.recall_request import EnvironmentQuery

    plain = RecallRequest(("p",), "leak in worker")
    named = RecallRequest(
        ("p",), "leak in worker", symbols=("Worker",), tags=("os:linux",), tools=("pytest",)
    )
    texts = {combined(_lexical_plan(req, 5), req)[0].text for req in (plain, named)}
    assert len(texts) == 1
    params = combined(_lexical_plan(plain, 5), plain)[1]
    assert len(params["tools_tools"]) == len(params["symbols_symbols"]) == 11  # one size group
    stated = RecallRequest(("p",), "leak", environment=EnvironmentQuery(os="linux"))
    assert combined(_lexical_plan(stated, 5), stated)[0].text not in texts
