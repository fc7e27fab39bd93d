"""What fixed a hit's error (recall_expand's `fixed_by`) costs at most its cap of links,
however many fixes the error has (issue 24: at 1M a step of the largest error family read
and sorted all 37k of its error's fix links, 0.2-0.3 s of one recall's expansion). Real
Neo4j; the links in the shape the lineage writes them (RESOLVED {kind, task, confidence})."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest
from profiles import db_hits

from metisgraph.graph.cypher import query
from metisgraph.graph.snippets import with_episode_snippets

pytestmark = pytest.mark.anyio

START = datetime(2026, 11, 1, tzinfo=UTC)

FIXES = """
MERGE (r:Error {project: $p, key: $error})
MERGE (e:Episode {project: $p, id: $hit})
SET e.recallable = true, e.created_at = $at, e.summary = 'ran the tests', e.task_id = 'th'
MERGE (e)-[:HIT]->(r)
WITH r
UNWIND range(1, $n) AS i
CREATE (f:Episode {project: $p, id: $hit + '-fix-' + i, task_id: $hit + '-t' + i,
                   action_command: CASE WHEN i % 3 = 0 THEN 'pip install -U pytz'
                                        ELSE 'pip install pytz' END,
                   summary: 'installed the module', created_at: $at, recallable: true})
CREATE (f)-[:RESOLVED {kind: 'fixed', task: f.task_id, confidence: 0.9, at: $at}]->(r)
"""


@pytest.mark.own_server  # db.prepareForReplanning: every statement planned again
async def test_a_hit_reads_at_most_its_cap_of_fix_links(store: Any, project: str) -> None:
    expand = with_episode_snippets(
        "recall_expand", steps=query("recall_no_steps").text, keys=query("recall_keys").text
    )
    cost: dict[int, int] = {}
    for n in (300, 1200):
        hit = f"hit{n}"
        await store.run_text(FIXES, {"p": project, "error": f"err{n}", "hit": hit, "n": n,
                                     "at": START})  # fmt: skip
        params = {"keys": [{"project": project, "id": hit}], "linked": []}
        await store.run_text("CALL db.prepareForReplanning()")
        _, summary, _ = await store.driver.execute_query("PROFILE " + expand.text, params)
        cost[n] = db_hits(summary.profile)
        rows = await store.run_query(expand, params)
        fixed_by = rows[0]["fixed_by"]
        # the fix most runs took comes first, and a fix is not shown twice
        assert [f["action"] for f in fixed_by] == ["pip install pytz", "pip install -U pytz"]
        assert all(f["kind"] == "fixed" and 0 < f["runs"] <= 200 for f in fixed_by), fixed_by
    # four times the links, the same cost: each hit reads its cap (200), not every link
    assert cost[1200] - cost[300] < 100, cost
