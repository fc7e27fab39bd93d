"""The `errors` pages without a window read the kept counts in index order (issue 24).

A page (cypher/explore.cypher explore_errors_by_count, _by_recent) reads the errors of each
project in the order of its index (schema.cypher error_rank_count, error_rank_recent) and
stops after the page; it must still walk every error once, in the order the list has always
had (rank desc, project, key) across projects, ties, ranks cut by a page and errors with no
sighting kept. Checked against an ordering in Python of the same nodes, and on Neo4j's own
plans (EXPLAIN) and db hits (PROFILE) against the number of errors.
"""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from profiles import db_hits

from metisgraph.graph.cypher import query
from metisgraph.graph.explore import ErrorOrder, error_page
from metisgraph.graph.refs import encode_cursor

pytestmark = pytest.mark.anyio

BASE = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
CREATE = """
UNWIND $rows AS row
CREATE (r:Error {project: row.project, key: row.key})
SET r += row.props"""


def _errors(project: str, count: int, rng: random.Random, tag: str = "k") -> list[dict[str, Any]]:
    """Errors with their kept counts as the write path leaves them: many equal sightings,
    last sightings in the same millisecond (a microsecond apart), some never counted (no
    kept property) or sighted none, some fixed before their last sighting, some after."""
    rows = []
    for i in rng.sample(range(10 * count), count):
        sightings = rng.choice([None, 0, 1, 1, 1, 2, 2, 3, 7])
        last = None
        if sightings:
            last = BASE + timedelta(milliseconds=rng.choice([0, 1, 1, 2, 9]),
                                    microseconds=rng.choice([0, 300, 700]))  # fmt: skip
        fixed = rng.choice([None, None, BASE - timedelta(days=1), BASE + timedelta(days=1)])
        props = {"sightings": sightings, "tasks": sightings, "last_sighting": last,
                 "first_sighting": last, "fixes": 0 if fixed is None else 1, "fixed_at": fixed,
                 "kind": "ModuleNotFoundError", "signature": f"sig {i}"}  # fmt: skip
        rows.append({"project": project, "key": f"{tag}{i:04d}", "props": props})
    return rows


def _rank(order: ErrorOrder, props: dict[str, Any]) -> int:
    if order is ErrorOrder.RECENT:
        last = props["last_sighting"]
        return -1 if last is None else (last - EPOCH) // timedelta(milliseconds=1)
    return props["sightings"] or 0


def _open(props: dict[str, Any]) -> bool:
    last, fixed = props["last_sighting"], props["fixed_at"]
    return fixed is None or (last is not None and last > fixed)


def _expected(order: ErrorOrder, rows: list[dict[str, Any]]) -> list[tuple[str, str]]:
    """The list as the page has always ranked it: rank desc, then project, then key."""
    shown = [r for r in rows if order is not ErrorOrder.UNRESOLVED or _open(r["props"])]
    shown.sort(key=lambda r: (-_rank(order, r["props"]), r["project"], r["key"]))
    return [(r["project"], r["key"]) for r in shown]


async def _walk(
    store: Any, projects: list[str], order: ErrorOrder, first: int
) -> tuple[int, list[Any]]:
    """Every page of the list, by its cursors; the total, the same on each page."""
    rows: list[Any] = []
    totals = set()
    after = None
    while True:
        page = await error_page(store, projects, order, first=first, after=after)
        totals.add(page.total)
        rows += page.rows
        if not page.has_next:
            assert len(totals) == 1
            return totals.pop(), rows
        assert len(page.rows) == first
        after = page.end_cursor


@pytest.mark.parametrize("order", list(ErrorOrder))
async def test_pages_walk_every_error_once_in_rank_order_across_projects(
    store: Any, project: str, order: ErrorOrder
) -> None:
    rng = random.Random(24)
    projects = [f"{project}-{suffix}" for suffix in "bac"]
    rows = [row for i, p in enumerate(projects) for row in _errors(p, 25 + 5 * i, rng)]
    await store.run_text(CREATE, {"rows": rows})
    expected = _expected(order, rows)
    assert 20 < len(expected) < len(rows) or order is not ErrorOrder.UNRESOLVED
    for first in (1, 2, 7, 50, 200):
        total, seen = await _walk(store, projects, order, first)
        assert [(r.project, r.key) for r in seen] == expected, first
        assert total == len(expected)
    # what a row shows is what its node keeps
    by_key = {(r["project"], r["key"]): r["props"] for r in rows}
    for row in seen:
        kept = by_key[(row.project, row.key)]
        assert row.sightings == (kept["sightings"] or 0)
        shown = (row.last_seen, row.fixed_at, row.open)
        assert shown == (kept["last_sighting"], kept["fixed_at"], _open(kept))
    # one project among them: its own errors only
    total, alone = await _walk(store, projects[1:2], order, 3)
    assert [(r.project, r.key) for r in alone] == [x for x in expected if x[0] == projects[1]]


@pytest.mark.parametrize("rank", [-2, 2**53 + 1, 10**20])
async def test_a_made_up_cursor_rank_is_refused_before_a_read(store: Any, rank: int) -> None:
    """A rank no list gives out (the datetime of a RECENT rank is built from it) is the
    caller's error, said as one, not the database's."""
    for order in ErrorOrder:
        after = encode_cursor(order.value, (rank, "p", "k"))
        with pytest.raises(ValueError, match="not a cursor of this list"):
            await error_page(store, ["p"], order, after=after)


def _operators(plan: Any, above: str = "") -> list[tuple[str, str, str]]:
    """(operator, details, the operator above it that is not a filter or projection)."""
    op = str(plan["operatorType"]).split("@")[0]
    details = str((plan.get("args") or {}).get("Details", ""))
    found = [(op, details, above)]
    passing = above if op in {"Filter", "Projection", "CacheProperties"} else op
    for child in plan.get("children") or []:
        found += _operators(child, passing)
    return found


@pytest.mark.parametrize(
    ("name", "index", "read", "params"),
    [
        ("explore_errors_by_count", "Error(project, sightings, key)", "sightings < below",
         {"open_only": True}),
        ("explore_errors_by_recent", "Error(project, last_sighting, key)",
         "last_sighting < before", {}),
    ],
)  # fmt: skip
async def test_the_page_is_read_in_index_order_and_stopped_not_sorted(
    store: Any, name: str, index: str, read: str, params: dict[str, Any]
) -> None:
    after = {"rank": 3, "project": "p", "key": "k"}
    _, summary, _ = await store.driver.execute_query(
        "EXPLAIN " + query(name).text,
        {"projects": ["p", "q"], "first": 50, "after": after, **params},
    )
    operators = _operators(summary.plan)
    # every read of a project's errors seeks one project in an index, none scans
    assert not [o for o in operators if "Scan" in o[0]], operators
    # the ranked rows: read from the rank's index in its order, stopped at the page's end
    [(_, _, parent)] = [o for o in operators if "Seek" in o[0] and index in o[1] and read in o[1]]
    assert parent == "Limit", operators


def _spread(project: str, count: int, tag: str) -> list[dict[str, Any]]:
    """Errors as a store of real runs holds them: sightings from 1 to 40, each last sighted
    at its own time, one in ten fixed."""
    rng = random.Random(tag)
    rows = []
    for i in range(count):
        last = BASE + timedelta(seconds=rng.randrange(10**6))
        fixed = last - timedelta(hours=rng.choice([-1, 1])) if i % 10 == 0 else None
        props = {"sightings": rng.randint(1, 40), "tasks": 1, "last_sighting": last,
                 "first_sighting": last, "fixes": int(fixed is not None),
                 "fixed_at": fixed}  # fmt: skip
        rows.append({"project": project, "key": f"{tag}{i:05d}", "props": props})
    return rows


async def _db_hits(store: Any, name: str, params: dict[str, Any]) -> int:
    _, summary, _ = await store.driver.execute_query("PROFILE " + query(name).text, params)
    return db_hits(summary.profile)


async def test_a_page_costs_its_rows_not_the_projects_errors(store: Any, project: str) -> None:
    """The page read before cost ~7 db hits an error of the project (each one's key and kept
    counts, to sort them all); now the page's rows and the total's count of the project's
    errors in an index (one hit an error; UNRESOLVED's also reads the fixed ones)."""
    pages = [("explore_errors_by_count", {"open_only": False}),
             ("explore_errors_by_count", {"open_only": True}),
             ("explore_errors_by_recent", {})]  # fmt: skip
    costs: list[list[int]] = []
    for size in (500, 2000):
        more = _spread(project, size - 500 * len(costs), f"k{size}-")
        await store.run_text(CREATE, {"rows": more})
        cost = []
        for name, params in pages:
            args = {"projects": [project], "first": 20, **params}
            [found] = await store.run(name, after=None, **args)
            last = found["page"][-2]
            after = {"rank": last["rank"], "project": project, "key": last["key"]}
            cost.append(await _db_hits(store, name, {**args, "after": after}))
        costs.append(cost)
    for (name, params), small, large in zip(pages, *costs, strict=True):
        per_error = (large - small) / 1500
        assert per_error < 2, (name, params, costs)


async def test_the_total_is_the_projects_kept_totals_whatever_its_errors(
    store: Any, project: str
) -> None:
    """With the project's totals kept on its node (cypher/error_counts.cypher), a page's
    total is one read: its db hits stay the same as the project's errors grow (before: one
    hit an error for the total, UNRESOLVED's also reading the fixed ones)."""
    await store.run("upsert_projects", projects=[project])
    pages = [("explore_errors_by_count", {"open_only": False}),
             ("explore_errors_by_count", {"open_only": True}),
             ("explore_errors_by_recent", {})]  # fmt: skip
    costs: list[list[int]] = []
    made: list[dict[str, Any]] = []
    for size in (500, 2000):
        more = _spread(project, size - len(made), f"k{size}-")
        made += more
        await store.run_text(CREATE, {"rows": more})
        await store.run("recount_error_totals", project=project)
        opened = sum(_open(r["props"]) for r in made)
        cost = []
        for name, params in pages:
            args = {"projects": [project], "first": 20, **params}
            [found] = await store.run(name, after=None, **args)
            assert found["total"] == (opened if params.get("open_only") else len(made))
            last = found["page"][-2]
            after = {"rank": last["rank"], "project": project, "key": last["key"]}
            cost.append(await _db_hits(store, name, {**args, "after": after}))
        costs.append(cost)
    for (name, params), small, large in zip(pages, *costs, strict=True):
        assert large - small < 30, (name, params, costs)  # 1,500 errors more
