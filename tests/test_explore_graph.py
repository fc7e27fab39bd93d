"""Browsing against the real Neo4j: errors ranked and paged, one error, a task, neighbourhoods."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest
from story import Story, module_story, numpy_error_key

from metisgraph.graph.explore import (
    ErrorOrder,
    error_detail,
    error_page,
    neighbourhood,
    nodes_by_ref,
    projects,
    task_chain,
)
from metisgraph.graph.refs import InvalidCursor, NodeRef, decode_id, encode_id

pytestmark = pytest.mark.anyio


@pytest.fixture(scope="module")
def story(neo4j_settings: Any, embedder: Any) -> Story:
    """One story for the module: every test here only reads it."""
    return module_story(neo4j_settings, embedder, "xg")


def test_global_ids_round_trip_and_refuse_what_is_not_ours() -> None:
    ref = NodeRef("Error", "team:a/b-1.x", "03a24ba4|b")
    assert decode_id(encode_id(ref)) == ref
    assert "|" not in encode_id(ref) and "=" not in encode_id(ref)
    for bad in ("", "abc", encode_id(ref)[:-3] + "!!", "MnxFcnJvcnxwfGs"):  # version 2
        with pytest.raises(ValueError):
            decode_id(bad)
    with pytest.raises(ValueError):
        NodeRef("Nope", "p", "k")
    with pytest.raises(ValueError):
        NodeRef("Error", "a|b", "k")


async def test_errors_ranked_by_count_recent_and_unresolved(store: Any, story: Story) -> None:
    by_count = await error_page(store, story.projects, ErrorOrder.COUNT, first=50)
    rows = [(r.project, r.kind, r.sightings) for r in by_count.rows]
    # shop: yaml, numpy, the pip conflict; billing: numpy. Two sightings each for numpy first.
    assert [r[2] for r in rows] == [2, 2, 1, 1] and by_count.total == len(rows) == 4
    numpy = [r for r in by_count.rows if r.key == numpy_error_key()]
    assert {r.project for r in numpy} == set(story.projects)
    shop = next(r for r in numpy if r.project == story.shop)
    billing = next(r for r in numpy if r.project == story.billing)
    # Fixed in March and May, last sighted in May before that fix: resolved. Billing: open.
    assert shop.fixes >= 2 and not shop.open and billing.open and billing.fixes == 0

    recent = await error_page(store, story.projects, ErrorOrder.RECENT, first=50)
    lasts = [r.last_seen for r in recent.rows]
    assert lasts == sorted(lasts, reverse=True)
    assert recent.rows[0].project == story.shop and recent.rows[0].key == numpy_error_key()

    unresolved = await error_page(store, story.projects, ErrorOrder.UNRESOLVED, first=50)
    # open: billing's numpy error, and shop's pip conflict — nothing acted on it (only its
    # task's end "fixed" it before fixes needed evidence)
    assert [(r.project, r.kind) for r in unresolved.rows] == [
        (story.billing, "python:AttributeError"),
        (story.shop, "log:error"),
    ]
    assert unresolved.rows[0].key == numpy_error_key()

    window = await error_page(
        store, story.projects, since=datetime(2026, 4, 1, tzinfo=UTC), first=50
    )
    assert {(r.project, r.sightings) for r in window.rows} == {(story.billing, 2), (story.shop, 1)}


async def test_error_pages_walk_every_row_once(store: Any, story: Story) -> None:
    for order in ErrorOrder:
        whole = await error_page(store, story.projects, order, first=50)
        walked, after = [], None
        for _ in range(10):
            page = await error_page(store, story.projects, order, first=2, after=after)
            walked.extend((r.project, r.key) for r in page.rows)
            after = page.end_cursor
            if not page.has_next:
                break
        assert walked == [(r.project, r.key) for r in whole.rows], order
    page = await error_page(store, story.projects, ErrorOrder.COUNT, first=2)
    assert page.end_cursor is not None
    with pytest.raises(InvalidCursor, match="COUNT"):
        await error_page(store, story.projects, ErrorOrder.RECENT, after=page.end_cursor)
    with pytest.raises(ValueError):
        await error_page(store, story.projects, first=10_000)


async def test_one_error_with_the_other_projects_that_met_it(store: Any, story: Story) -> None:
    detail = await error_detail(store, story.shop, numpy_error_key(), readable=story.projects)
    assert detail is not None and detail.sightings == 2 and detail.also_in == [story.billing]
    assert detail.frames == ["shop.report.build_totals"]
    hidden = await error_detail(store, story.shop, numpy_error_key(), readable=[story.shop])
    assert hidden is not None and hidden.also_in == []
    assert await error_detail(store, story.shop, "0000000000000000", readable=None) is None


async def test_task_chain_in_step_order(store: Any, story: Story) -> None:
    chain = await task_chain(store, story.shop, "shop-report-march")
    assert chain is not None and chain.step_count == 6 and chain.status == "resolved"
    assert [s.step for s in chain.steps] == [0, 1, 2, 3, 4, 5]
    assert chain.steps[2].errors[0].kind == "python:AttributeError"
    assert chain.steps[4].snippets[0].relation == "GENERATED"
    assert chain.steps[2].environment["runtime_version"] == "3.11.4"
    assert await task_chain(store, story.billing, "shop-report-march") is None
    short = await task_chain(store, story.shop, "shop-report-march", limit=2)
    assert short is not None and len(short.steps) == 2 and short.step_count == 6


async def test_neighbourhood_inside_the_project_bounded(store: Any, story: Story) -> None:
    error = NodeRef("Error", story.shop, numpy_error_key())
    around = await neighbourhood(store, error, depth=1, limit=100)
    assert around is not None and not around.truncated
    kinds = {n.ref.kind for n in around.nodes}
    assert kinds == {"Error", "Episode", "Snippet"}  # sightings, RESOLVED steps, FIXES code
    assert all(n.ref.project == story.shop for n in around.nodes)
    ids = {n.ref for n in around.nodes}
    assert all(e.source in ids and e.target in ids for e in around.edges)
    assert {e.type for e in around.edges} >= {"HIT", "FIXES"}

    wider = await neighbourhood(store, error, depth=2, limit=500)
    assert wider is not None and len(wider.nodes) > len(around.nodes)
    assert {n.depth for n in wider.nodes} == {0, 1, 2}
    assert all(n.ref.project == story.shop for n in wider.nodes)

    small = await neighbourhood(store, error, depth=2, limit=3)
    assert small is not None and small.truncated and len(small.nodes) == 4
    assert await neighbourhood(store, NodeRef("Error", story.shop, "nope"), 1, 10) is None


async def test_nodes_and_projects(store: Any, story: Story) -> None:
    refs = [
        NodeRef("Task", story.shop, "shop-report-march"),
        NodeRef("Project", story.billing, story.billing),
        NodeRef("Tool", story.shop, "pip"),
        NodeRef("Episode", story.billing, "shop-report-march-s1"),  # not in billing
    ]
    found = await nodes_by_ref(store, refs)
    assert set(found) == set(refs[:3])
    task = found[refs[0]]
    assert task.title.startswith("The nightly sales report")
    assert "embedding" not in task.properties
    listed = await projects(store, story.projects)
    assert [p.name for p in listed] == sorted(story.projects)
    assert next(p for p in listed if p.name == story.shop).episodes == 8
