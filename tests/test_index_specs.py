"""The vector and full-text indexes: declared once (what each covers), created by named
statements of cypher/indexes.cypher per server capability, the dimension a parameter —
no statement text rewritten (issue 27, item 4)."""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from metisgraph.graph.cypher import query
from metisgraph.graph.indexes import (
    TEXT_INDEXES,
    VECTOR_INDEXES,
    IndexesNotOnline,
    IndexWatch,
    await_indexes,
    schema_for,
    vector_index_statements,
)
from metisgraph.graph.store import GraphStore


@pytest.mark.parametrize("vector_filters", [True, False])
def test_each_vector_index_statement_comes_from_its_declaration(vector_filters: bool) -> None:
    statements = vector_index_statements(384, vector_filters=vector_filters)
    assert list(statements) == [spec.name for spec in VECTOR_INDEXES]
    for spec in VECTOR_INDEXES:
        statement = statements[spec.name]
        assert statement.params == {"dimensions": 384}
        assert "{{" not in statement.text and "$dimensions" in statement.text
        assert f"INDEX {spec.name} IF NOT EXISTS" in statement.text
        assert f"(n:{spec.label}) ON n.{spec.properties[0]}" in statement.text
        # Only servers that filter inside a vector index are given the filter properties.
        assert ("WITH [" in statement.text) == vector_filters
        if vector_filters:
            assert ", ".join(f"n.{f}" for f in spec.filters) in statement.text


@pytest.mark.parametrize("dimensions", [0, 4097, 384.0, "384"])
def test_a_dimension_that_is_no_count_is_refused(dimensions: Any) -> None:
    with pytest.raises(ValueError, match="embedding dimension"):
        schema_for(dimensions, vector_filters=True)


@pytest.mark.anyio
async def test_the_store_builds_each_index_over_what_its_declaration_says(store: Any) -> None:
    """Were a declaration and the built index to differ, every start would drop and rebuild
    it (graph/indexes.py compares the two)."""
    rows = await store.run_text(
        "SHOW INDEXES YIELD name, type, labelsOrTypes, properties, options "
        "RETURN name, type, labelsOrTypes AS labels, properties, "
        "options.indexConfig AS config",
        read=True,
    )
    built = {r["name"]: r for r in rows}
    for spec in (*VECTOR_INDEXES, *TEXT_INDEXES):
        row = built[spec.name]
        assert row["labels"] == [spec.label], spec.name
        assert sorted(row["properties"]) == sorted(spec.covered), spec.name
    for spec in VECTOR_INDEXES:
        assert built[spec.name]["type"] == "VECTOR"
        assert built[spec.name]["config"]["vector.dimensions"] == 384
    for spec in TEXT_INDEXES:
        assert built[spec.name]["type"] == "FULLTEXT"
        assert built[spec.name]["config"]["fulltext.analyzer"] == "english"


def _rows(**percent: float | str) -> list[dict[str, Any]]:
    """SHOW INDEXES rows: a percent for a populating index, "ONLINE" for one that is."""
    return [
        {"name": n, "state": "ONLINE", "percent": 100.0}
        if p == "ONLINE"
        else {"name": n, "state": "POPULATING", "percent": p}
        for n, p in percent.items()
    ]


def test_a_populating_index_is_waited_for_while_it_moves_however_long() -> None:
    """The 1M bulk build: episode_vectors populated for ~14 min and db.awaitIndexes(300)
    gave up on a healthy store. Only an index that stopped moving ends the wait."""
    watch = IndexWatch(stall_s=300)
    assert watch.see(_rows(episode_vectors=10.0, error_text="ONLINE"), now=0) == {
        "episode_vectors": 10.0
    }
    for minute in range(1, 20):  # 19 minutes, moving all along: no error
        assert watch.see(_rows(episode_vectors=10.0 + 4 * minute), now=60 * minute)
    assert watch.see(_rows(episode_vectors="ONLINE", error_text="ONLINE"), now=1200) == {}


def test_an_index_standing_still_or_failed_ends_the_wait_with_its_name() -> None:
    watch = IndexWatch(stall_s=300)
    watch.see(_rows(episode_vectors=42.0), now=0)
    assert watch.see(_rows(episode_vectors=42.0), now=299) == {"episode_vectors": 42.0}
    with pytest.raises(IndexesNotOnline, match=r"not moving for 300 s: episode_vectors at 42.0 %"):
        watch.see(_rows(episode_vectors=42.0), now=300)
    failed = [{"name": "snippet_text", "state": "FAILED", "percent": 0.0}]
    with pytest.raises(IndexesNotOnline, match="snippet_text FAILED"):
        IndexWatch(stall_s=300).see(failed, now=0)


@pytest.mark.anyio
async def test_await_indexes_returns_once_the_store_s_indexes_are_online(store: Any) -> None:
    seen: list[dict[str, float]] = []
    await await_indexes(store, stall_s=60, on_progress=seen.append)
    rows = await store.run("index_progress")
    assert rows and all(r["state"] == "ONLINE" for r in rows)
    assert seen == []  # nothing was populating: no progress reported


class _Flipping(GraphStore):
    """The test store, its index_progress answered as a store whose episode_vectors is
    merging into one segment: POPULATING, then a poll Neo4j holds while the index flips
    (still POPULATING at the same percent when it answers), then the store's own rows."""

    def __init__(self, store: GraphStore, held_s: float) -> None:
        super().__init__(store.driver, store.database)
        self.held_s, self.polls = held_s, 0

    async def run(self, name: str, **params: Any) -> list[dict[str, Any]]:
        rows = await super().run(name, **params)
        if name != "index_progress" or self.polls >= 2:
            return rows
        self.polls += 1
        if self.polls == 2:
            await anyio.sleep(self.held_s)
        return [*rows, {"name": "episode_vectors_probe", "state": "POPULATING", "percent": 42.8}]


@pytest.mark.anyio
async def test_a_poll_held_while_an_index_flips_is_not_standing_still(store: Any) -> None:
    """The 100k store's episode_vectors rebuilt: 42.8 % at 79 s, then SHOW INDEXES answered
    only when it was ONLINE, at 135 s (the merge into one segment; ~14 min at 1M). The poll
    runs under the batch timeout, and the time it was held does not count as a stall."""
    assert query("index_progress").mode == "batch"
    flipping = _Flipping(store, held_s=0.6)
    await await_indexes(flipping, stall_s=0.3)
    assert flipping.polls == 2


def test_a_vector_index_can_be_left_for_later_and_only_a_vector_index() -> None:
    """The bulk path builds episode_vectors after its derive (ingest/pipeline/bulk.py)."""
    whole = schema_for(384, vector_filters=True)
    later = schema_for(384, vector_filters=True, later=("episode_vectors",))
    left = [s.text for s in whole if s not in later]
    assert len(left) == 1 and "episode_vectors" in left[0]
    with pytest.raises(ValueError, match="episode_text"):
        schema_for(384, vector_filters=True, later=("episode_text",))
