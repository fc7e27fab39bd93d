"""Decay that counts use: a memory idle for long ranks below an equally relevant one in use;
a memory cited in a plan whose step (or task) ended in success counts as used — its decay
clock restarts, as with outcome feedback; the cold tier keeps a memory out of default recall
yet findable. On the real app, Neo4j and model."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest
from counting import CountingStore

from metisgraph.graph import (
    QuestionVectors,
    RecallFilters,
    RecallRequest,
    decay,
    recall,
)
from metisgraph.graph.cypher import query

RECORD = """
mutation($inputs: [EpisodeInput!]!) { recordEpisodes(inputs: $inputs) { written refused } }"""
TASK = """
mutation($input: TaskInput!) { recordTask(input: $input) { id status } }"""
RECALL = """
query($project: String!, $query: String!, $filter: RecallFilter) {
  recall(project: $project, query: $query, k: 10, filter: $filter) {
    hits { episode { id } score why { trust { factor value } evidence { idleDays } } }
  }
}"""
PLAN = """
query($project: String!, $task: PlanTaskInput!) {
  planContext(project: $project, task: $task, k: 5, budget: 4000) { memories { label id } }
}"""
QUESTION = "the nightly export job runs out of memory on the largest customer, what worked?"
FIX = ("The nightly export job ran out of memory on the largest customer; streaming the rows "
       "in batches of 10,000 kept it flat")  # fmt: skip
OTHERS = [
    "Report dates were off by one hour after the DST change; stored timestamps in UTC",
    "The Docker build failed: pg_config not found; installed libpq-dev",
    "Login redirected in a loop; the session cookie lacked SameSite=None",
    "Uploads over 10 MB were rejected; raised client_max_body_size in nginx",
    "Cron emails stopped; the mail relay password had expired",
]


def _record(gql: Any, inputs: list[dict[str, Any]]) -> None:
    body = gql(RECORD, {"inputs": inputs})
    assert body["data"]["recordEpisodes"]["refused"] == 0, body


def _hits(gql: Any, project: str, **variables: Any) -> dict[str, dict[str, Any]]:
    body = gql(RECALL, {"project": project, "query": QUESTION, **variables})
    assert "errors" not in body, body
    return {h["episode"]["id"]: h for h in body["data"]["recall"]["hits"]}


def _decay(hit: dict[str, Any]) -> float:
    return next(t["value"] for t in hit["why"]["trust"] if t["factor"] == "decay")


async def _idle(store: Any, project: str, ids: list[str], days: int) -> None:
    """Their last sign of life `days` before now (the project's clock is now)."""
    await store.run_text(
        "MATCH (e:Episode {project: $p}) WHERE e.id IN $ids "
        "SET e.active_at = datetime() - duration({days: $days})",
        {"p": project, "ids": ids, "days": days},
    )


@pytest.fixture
def fixes(gql: Any, project: str) -> str:
    """Two fixes as relevant as each other (the same words), among other memories."""
    _record(gql, [
        *({"project": project, "id": i, "summary": FIX, "outcome": "success",
           "source": "executed"} for i in ("fix-a", "fix-b")),
        *({"project": project, "id": f"other-{n}", "summary": s} for n, s in enumerate(OTHERS)),
    ])  # fmt: skip
    return project


@pytest.mark.anyio
@pytest.mark.slow
async def test_a_memory_cited_by_a_step_that_succeeded_counts_as_used(
    gql: Any, store: Any, fixes: str
) -> None:
    p = fixes
    await _idle(store, p, ["fix-a", "fix-b"], 700)
    hits = _hits(gql, p)
    assert hits["fix-a"]["why"]["evidence"]["idleDays"] > 699
    assert _decay(hits["fix-a"]) == pytest.approx(_decay(hits["fix-b"]))
    assert _decay(hits["fix-a"]) < 0.8
    # The plan shows both; the step relies on fix-a (cites it) and fails: no use yet.
    plan = gql(PLAN, {"project": p, "task": {"goal": QUESTION}})
    shown = {m["id"] for m in plan["data"]["planContext"]["memories"]}
    assert {"fix-a", "fix-b"} <= shown, plan
    gql(TASK, {"input": {"project": p, "id": "t1", "goal": QUESTION, "status": "open"}})
    step = {"project": p, "id": "s1", "taskId": "t1", "step": 1, "outcome": "failure",
            "summary": "streamed the export rows in batches", "cites": ["fix-a"]}  # fmt: skip
    _record(gql, [step])
    assert _hits(gql, p)["fix-a"]["why"]["evidence"]["idleDays"] > 699
    # The task then ends in success: what its steps cited counts as used — its decay clock
    # restarts, and decay now ranks the idle twin below it.
    done = {"project": p, "id": "t1", "goal": QUESTION, "status": "resolved", "outcome": "success"}
    gql(TASK, {"input": done})
    hits = _hits(gql, p)
    assert hits["fix-a"]["why"]["evidence"]["idleDays"] < 1
    assert _decay(hits["fix-a"]) == pytest.approx(1.0)
    assert hits["fix-a"]["score"] > hits["fix-b"]["score"]
    order = [i for i in _hits(gql, p) if i in ("fix-a", "fix-b")]
    assert order == ["fix-a", "fix-b"]
    # A step that succeeds counts at once; a cited id that names no memory is ignored.
    _record(gql, [{"project": p, "id": "s2", "outcome": "success", "summary": "it worked",
                   "cites": ["fix-b", "no-such-memory"]}])  # fmt: skip
    assert _hits(gql, p)["fix-b"]["why"]["evidence"]["idleDays"] < 1
    rows = await store.run_text(
        "MATCH (s:Episode {project: $p})-[c:CITED]->(m) RETURN s.id AS step, m.id AS memory, "
        "c.counted_at IS NOT NULL AS counted ORDER BY step",
        {"p": p},
        read=True,
    )
    assert rows == [{"step": "s1", "memory": "fix-a", "counted": True},
                    {"step": "s2", "memory": "fix-b", "counted": True}]  # fmt: skip


@pytest.mark.anyio
@pytest.mark.slow
async def test_decay_lowers_a_rank_and_the_cold_tier_keeps_memory_out_yet_findable(
    gql: Any, store: Any, fixes: str
) -> None:
    p = fixes
    first = next(i for i in _hits(gql, p) if i in ("fix-a", "fix-b"))
    other = "fix-b" if first == "fix-a" else "fix-a"
    # Idle a year: the one that ranked first falls below its twin, by decay alone.
    await _idle(store, p, [first], 365)
    hits = _hits(gql, p)
    assert _decay(hits[first]) < _decay(hits[other]) == pytest.approx(1.0)
    assert [i for i in hits if i in (first, other)] == [other, first]
    # Idle past two years: cold — not recalled by default, found when the cold tier is asked.
    await _idle(store, p, [first], 800)
    assert first not in _hits(gql, p)
    found = _hits(gql, p, filter={"tiers": ["warm", "cold"]})
    assert first in found and other in found
    assert list(_hits(gql, p, filter={"tiers": ["cold"]})) == [first]
    # Cited by a step that worked, it is in use again: back in default recall.
    _record(gql, [{"project": p, "id": "s1", "outcome": "success", "summary": "it worked",
                   "cites": [first]}])  # fmt: skip
    assert first in _hits(gql, p)


@pytest.mark.anyio
@pytest.mark.slow
async def test_the_warm_tier_reuses_a_clock_read_moments_ago_and_its_hits_stay_exact(
    store: Any, embedder: Any, fixes: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The warm tier's filter reuses a project's clock read seconds ago: one statement fewer
    a question. A clock moved on since makes the channels let in memory gone cold, and
    recall still returns none of it; the cold tier alone reads the clock as it is."""
    p = fixes
    counting = CountingStore(store)
    vectors = QuestionVectors(embedder.encode([QUESTION])[0].tolist())
    warm = RecallRequest(projects=(p,), text=QUESTION, k=10)

    fused: list[int] = []  # candidates fused, per question

    def clocks() -> int:  # the projects' clocks read by the last question
        return sum(query("project_clocks").text in t for t in counting.texts)

    async def ask(req: RecallRequest) -> set[str]:
        counting.reset()
        outcome = await recall(counting, req, vectors, speculate=False)
        fused.append(outcome.candidates)
        return {h.episode["id"] for h in outcome.hits}

    found = await ask(warm)
    assert {"fix-a", "fix-b"} <= found and clocks() == 1
    first = counting.sent
    assert await ask(warm) == found
    assert clocks() == 0 and counting.sent == first - 1
    # Every memory of the project idle 800 days by its clock: all cold.
    await store.run_text(
        "MATCH (p:Project {name: $p}) SET p.active_at = datetime() + duration({days: 800})",
        {"p": p},
    )
    assert await ask(warm) == set()
    # The channels found them on the clock read before; each hit checked on its own.
    assert clocks() == 0 and fused[-1] > 0
    cold = replace(warm, filters=RecallFilters(tiers=("cold",)))
    assert {"fix-a", "fix-b"} <= await ask(cold)
    assert clocks() == 1
    monkeypatch.setattr(decay, "CLOCK_REUSE_SECONDS", 0.0)
    assert await ask(warm) == set()
    assert clocks() == 1 and fused[-1] == 0  # read again once older than that
