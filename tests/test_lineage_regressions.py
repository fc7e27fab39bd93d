"""lineage_regressions pairs each sighting with the latest fix strictly before it, found by a
binary search of the fixes' sorted times (issue 24: counting the earlier fixes of every
sighting took 7.8 s for 17,964 sightings and 9,377 fixes at 1M); lineage_fixes reads the
code of the steps it keeps. Real Neo4j; every pairing checked against the same rule in
Python, ties and fixes at one instant included."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from profiles import db_hits

pytestmark = pytest.mark.anyio

START = datetime(2026, 3, 1, tzinfo=UTC)

WRITE = """
MERGE (r:Error {project: $p, key: 'E1'})
WITH r
UNWIND $fixes AS f
CREATE (x:Episode {project: $p, id: f.id, created_at: f.at, task_id: f.id, summary: 'fix'})
CREATE (x)-[:RESOLVED {kind: 'fixed', rule: 'module', why: 'it held', confidence: 0.9}]->(r)
WITH DISTINCT r
UNWIND $seen AS s
CREATE (e:Episode {project: $p, id: s.id, created_at: s.at, task_id: s.id, summary: 'hit'})
CREATE (e)-[:HIT]->(r)
"""


def _expected(fixes: list[dict[str, Any]], seen: list[dict[str, Any]]) -> dict[str, str]:
    ordered = sorted(fixes, key=lambda f: (f["at"], f["id"]))
    pairs = {}
    for s in seen:
        earlier = [f for f in ordered if f["at"] < s["at"]]
        if earlier:
            pairs[s["id"]] = earlier[-1]["id"]
    return pairs


async def test_each_recurrence_is_paired_with_the_latest_fix_strictly_before_it(
    store: Any, project: str
) -> None:
    minutes = [10, 20, 30, 50, 50, 60, 90, 100, 100, 100, 130]  # ties, and one after all
    fixes = [{"id": f"fix{n:02d}", "at": START + timedelta(minutes=m)}
             for n, m in enumerate(minutes)]  # fmt: skip
    at = [5, 10, 15, 20, 49, 50, 55, 99, 100, 101, 129, 130, 131, 500]
    seen = [{"id": f"seen{n:02d}", "at": START + timedelta(minutes=m)} for n, m in enumerate(at)]
    await store.run_text(WRITE, {"p": project, "fixes": fixes, "seen": seen})
    members = [{"project": project, "key": "E1"}]
    rows = await store.run(
        "lineage_regressions", members=members, since=None, until=None, limit=200
    )
    got = {r["episode"]["id"]: r["fix"]["id"] for r in rows[0]["rows"]}
    want = _expected(fixes, seen)
    assert got == want and rows[0]["total"] == len(want) == 12
    # a window keeps the fixes before it
    later = await store.run(
        "lineage_regressions", members=members, since=START + timedelta(minutes=100),
        until=None, limit=3,
    )  # fmt: skip
    assert later[0]["total"] == 6
    assert [(r["episode"]["id"], r["fix"]["id"]) for r in later[0]["rows"]] == [
        ("seen08", want["seen08"]), ("seen09", want["seen09"]), ("seen10", want["seen10"])
    ]  # fmt: skip
    assert want["seen09"] == "fix09" and want["seen08"] == "fix06"


async def test_one_fix_and_no_earlier_fix(store: Any, project: str) -> None:
    fixes = [{"id": "only", "at": START}]
    seen = [
        {"id": "before", "at": START - timedelta(days=1)},
        {"id": "same", "at": START},
        {"id": "after", "at": START + timedelta(seconds=1)},
    ]
    await store.run_text(WRITE, {"p": project, "fixes": fixes, "seen": seen})
    rows = await store.run("lineage_regressions", members=[{"project": project, "key": "E1"}],
                           since=None, until=None, limit=200)  # fmt: skip
    assert {r["episode"]["id"]: r["fix"]["id"] for r in rows[0]["rows"]} == {"after": "only"}


CODE = """
MERGE (r:Error {project: $p, key: $key})
WITH r
UNWIND range(1, $n) AS i
CREATE (x:Episode {project: $p, id: $key + '-fix' + i, task_id: $key + '-t' + i,
                   created_at: $at + duration({minutes: i}), summary: 'patched'})
CREATE (x)-[:RESOLVED {kind: 'fixed', rule: 'code', why: 'it held', confidence: 0.8}]->(r)
CREATE (s:Snippet {project: $p, id: $key + '-code' + i, name: 'patch', kind: 'function'})
CREATE (x)-[:GENERATED]->(s)
CREATE (s)-[:FIXES]->(r)
"""


@pytest.mark.own_server  # db.prepareForReplanning: every statement planned again
async def test_the_fixes_page_reads_the_code_of_its_own_steps_only(
    store: Any, project: str
) -> None:
    """The first $limit fixing steps in time order, each with the code that fixed it: the
    page costs the same whether the error has 150 or 600 fixes with code."""
    from metisgraph.graph.cypher import query

    cost = {}
    for n in (150, 600):
        key = f"E{n}"
        await store.run_text(CODE, {"p": project, "key": key, "n": n, "at": START})
        params = {"members": [{"project": project, "key": key}], "limit": 20}
        rows = (await store.run("lineage_fixes", **params))[0]["rows"]
        assert [r["episode"]["id"] for r in rows] == [f"{key}-fix{i}" for i in range(1, 21)]
        assert all(
            [s["id"] for s in r["snippets"]] == [r["episode"]["id"].replace("fix", "code")]
            and r["vias"] == ["RESOLVED", "FIXES"] for r in rows
        )  # fmt: skip
        await store.run_text("CALL db.prepareForReplanning()")
        _, summary, _ = await store.driver.execute_query(
            "PROFILE " + query("lineage_fixes").text, params
        )
        cost[n] = db_hits(summary.profile)
    # what grows is reading the fixing steps to order them (a few hits each), not their code
    assert cost[600] - cost[150] < 12 * 450, cost
