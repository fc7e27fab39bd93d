"""The vector and full-text indexes: declared once (what each covers), created by named
statements of cypher/indexes.cypher per server capability, the dimension a parameter —
no statement text rewritten (issue 27, item 4)."""

from __future__ import annotations

from typing import Any

import pytest

from metisgraph.graph.indexes import (
    TEXT_INDEXES,
    VECTOR_INDEXES,
    schema_for,
    vector_index_statements,
)


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
