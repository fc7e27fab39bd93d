"""The bridge's outcome reports read a link from the episode's side (issue 24, the derive).

`bridge_outcome_reports` (cypher/outcomes.cypher) is planned once (`replan=skip`). A bulk
load plans it on its first batch, when the store holds imported episodes and no snippet:
the planner then sought the snippet and expanded every episode that used it, and kept that
plan as reused snippets gained users — the statement's seconds grew ~linearly over the 100k
build's plans (0.063 → 0.25 s a plan) while the others stayed flat. Checked on a store of
its own with that shape (EXPLAIN), and by PROFILE: a report costs the same db hits for a
snippet of 10 users as for one of 400.
"""

from __future__ import annotations

from typing import Any

import pytest
from profiles import db_hits

from metisgraph.graph.cypher import query
from metisgraph.graph.indexes import apply_schema

pytestmark = pytest.mark.anyio

EPISODES = """
UNWIND range(1, $n) AS i
CREATE (:Episode {project: 'p', id: $tag + i, task_id: 't' + (i % 50)})"""
USERS = """
CREATE (s:Snippet {project: 'p', id: $id})
WITH s
UNWIND range(1, $n) AS i
MATCH (e:Episode {project: 'p', id: 'e' + i})
CREATE (e)-[:USED {outcome: 'success'}]->(s)"""
PROBE = """
MATCH (s:Snippet {project: 'p', id: $id})
CREATE (:Episode {project: 'p', id: $episode, task_id: 't1'})-[:USED {outcome: 'failure'}]->(s)"""


def _operators(plan: Any) -> list[tuple[str, str]]:
    found = [(plan["operatorType"].split("@")[0], str(plan.get("args", {}).get("Details", "")))]
    for child in plan.get("children") or []:
        found += _operators(child)
    return found


async def test_a_report_reads_the_link_from_the_episode_not_the_snippets_users(
    scratch_store: Any,
) -> None:
    store = scratch_store
    await apply_schema(store, 384)
    await store.run_text(EPISODES, {"n": 1000, "tag": "e"})
    text = query("bridge_outcome_reports").text
    # planned as a bulk load's first batch plans it: episodes, and not one snippet yet
    _, summary, _ = await store.driver.execute_query(
        "EXPLAIN " + text, {"rows": [], "pending": False}
    )
    operators = _operators(summary.plan)
    assert not [o for o in operators if o[0] == "Expand(All)" and o[1].startswith("(s)")], operators

    # and its run as profiled below planned then too (`replan=skip` keeps that plan)
    await store.driver.execute_query("PROFILE " + text, {"rows": [], "pending": False})
    cost = {}
    for users in (10, 400):
        snippet = f"s{users}"
        await store.run_text(USERS, {"id": snippet, "n": users})
        await store.run_text(PROBE, {"id": snippet, "episode": f"probe{users}"})
        row = {"project": "p", "id": snippet, "episode_id": f"probe{users}"}
        _, summary, _ = await store.driver.execute_query(
            "PROFILE " + text, {"rows": [row], "pending": False}
        )
        cost[users] = db_hits(summary.profile)
    reports = await store.run_text(
        "MATCH (o:OutcomeReport)-[:ABOUT]->(:Snippet) RETURN count(o) AS n", {}, read=True
    )
    assert reports[0]["n"] == 2  # each probe reported once
    assert cost[400] - cost[10] < 10, cost  # before: one link read per user of the snippet
