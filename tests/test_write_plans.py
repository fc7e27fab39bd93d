"""Statements that work row by row start from what the rows name, never from a scan of the
whole project: the write path's cost per episode must not grow with the store, nor the
analytics' per error (issue 24; the write growth is measured by bench/write_growth.py).
Read from Neo4j's own plans (EXPLAIN, nothing runs)."""

from __future__ import annotations

from typing import Any

import pytest

from metisgraph.graph.cypher import query

pytestmark = pytest.mark.anyio

SCANS = {"NodeByLabelScan", "AllNodesScan", "NodeIndexScan", "DirectedRelationshipTypeScan",
         "UndirectedRelationshipTypeScan", "DirectedAllRelationshipsScan"}  # fmt: skip


def _operators(plan: Any) -> list[tuple[str, str]]:
    """(operator, details) of every step of a plan."""
    details = str((plan.get("args") or {}).get("Details", ""))
    found = [(str(plan["operatorType"]).split("@")[0], details)]
    for child in plan.get("children") or []:
        found += _operators(child)
    return found


async def _plan(store: Any, name: str, **params: Any) -> list[tuple[str, str]]:
    text = query(name).text.replace("CYPHER replan=skip", "CYPHER replan=force", 1)
    _, summary, _ = await store.driver.execute_query("EXPLAIN " + text, params)
    return _operators(summary.plan)


@pytest.mark.parametrize(
    ("name", "params"),
    [
        ("attribution_links", {"tasks": [{"project": "p", "id": "t", "links": []}]}),
        ("forget_tasks", {"project": "p", "ids": ["t"]}),
    ],
)
async def test_a_tasks_fix_links_are_found_by_their_task_not_by_every_snippet(
    store: Any, name: str, params: dict[str, Any]
) -> None:
    operators = await _plan(store, name, **params)
    assert not SCANS & {op for op, _ in operators}, operators
    # seeks on a node key, and on the FIXES links' task (schema.cypher fixes_task)
    assert any("RelationshipIndexSeek" in op for op, _ in operators), operators


async def test_analytics_reads_an_errors_fixes_from_the_error_not_every_snippet(
    store: Any,
) -> None:
    operators = await _plan(store, "analytics_errors", keys=[{"project": "p", "key": "k"}])
    assert not SCANS & {op for op, _ in operators}, operators
    # no snippet is looked up by its project: each is reached from an error's FIXES
    assert not [(op, d) for op, d in operators if ":Snippet" in d and "Seek" in op], operators


async def test_an_errors_most_recent_sightings_are_read_by_seek_not_by_every_sighting(
    store: Any,
) -> None:
    """relate_situations reads an error's others newest first from the sightings' indexes
    (schema.cypher hit_sighting, resolved_sighting), never expanding from the error."""
    keys = [{"project": "p", "id": "e"}]
    operators = await _plan(store, "relate_situations", keys=keys, per_error=50)
    assert not SCANS & {op for op, _ in operators}, operators
    seeks = " ".join(d for op, d in operators if op == "DirectedRelationshipIndexSeek")
    assert "HIT(project, error, at)" in seeks and "RESOLVED(project, error, at)" in seeks
    assert not [(op, d) for op, d in operators if op.startswith("Expand") and "<-[" in d]
