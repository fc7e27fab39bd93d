"""Vectors as query parameters: stored as the plain list they are, shown as one short line."""

from __future__ import annotations

from typing import Any

import pytest

from metisgraph.graph.store import GraphStore
from metisgraph.graph.vectors import Vector

pytestmark = pytest.mark.anyio


def test_a_vector_is_its_floats_with_a_short_repr() -> None:
    values = [i / 384 for i in range(384)]
    vector = Vector(values)
    assert vector == values
    assert repr(vector) == "Vector(<384 floats>)"


async def test_a_vector_is_stored_as_a_list_of_floats(store: GraphStore, project: str) -> None:
    values = [i / 384 for i in range(384)]
    rows: list[dict[str, Any]] = await store.run_text(
        "CREATE (n:VectorProbe {project: $project, v: $v}) "
        "WITH n, n.v AS v DETACH DELETE n RETURN v, valueType(v) AS type",
        {"project": project, "v": Vector(values)},
    )
    assert rows[0]["v"] == values
    assert rows[0]["type"] == "LIST<FLOAT NOT NULL> NOT NULL"
