"""The write path adds to a snippet's statistics and `recorded` count from what its batch
wrote, and comes out where a full recount does (issue 24: recounting a reused snippet's
thousands of reports, and rereading its users, at each batch grew with the store).

Batches go through the snippets' own write steps (ingest/snippets/rows.py write_steps) on
the real graph; after each, the stored totals are compared with `recount_evidence` over all
the snippet's reports, and `recorded` with the full count."""

from __future__ import annotations

import random
from typing import Any

import pytest
from profiles import db_hits

from metisgraph.graph import OutcomeReport, record_outcome, recount_steps
from metisgraph.graph.cypher import query
from metisgraph.ingest.snippets.prepare import PreparedSnippet
from metisgraph.ingest.snippets.rows import write_steps

pytestmark = pytest.mark.anyio

TOTALS = ("uses", "successes", "failures", "evidence_for", "evidence_against", "contexts",
          "confidence", "success_rate", "prior_confidence", "prior_strength", "confirmed_at",
          "last_used_at", "active_at")  # fmt: skip
STORED = "MATCH (s:Snippet {project: $p, id: $id}) RETURN properties(s) AS props"
RECORDED = """
MATCH (s:Snippet {project: $p, id: $id})
RETURN s.recorded AS recorded,
       COUNT { MATCH (e:Episode)-[:GENERATED|USED|MODIFIED]->(s) RETURN DISTINCT e }
       + size(coalesce(s.record_keys, [])) AS full"""


def _occurrence(
    project: str, snippet: str, *, episode: str | None = None, relation: str | None = None,
    outcome: str | None = None, record: str | None = None, stored: bool = False,
) -> PreparedSnippet:  # fmt: skip
    props = {"template": f"def {snippet}(): pass", "imports": [], "calls": [], "symbols": [],
             "language": "python", "kind": "function"}  # fmt: skip
    return PreparedSnippet(
        project=project, id=snippet, text_for_embedding=snippet, props=props,
        review_status="unreviewed", requires=(), files=[], lineage=f"lineage-{snippet}",
        relation=relation, episode_id=episode, outcome=outcome, record_key=record,
        stored=stored, name=snippet,
    )  # fmt: skip


async def _episodes(store: Any, project: str, count: int) -> dict[str, str]:
    """Episodes of a few tasks (each task one agent), the task of each."""
    tasks = {f"e{i}": f"t{i % 5}" for i in range(count)}
    await store.run_text(
        """
        UNWIND range(0, 4) AS i
        CREATE (:Task {project: $p, id: 't' + i, agent: 'agent' + (i % 2)})
        WITH count(*) AS done
        UNWIND keys($tasks) AS id
        CREATE (:Episode {project: $p, id: id, task_id: $tasks[id], uses: 0})""",
        {"p": project, "tasks": tasks},
    )
    return tasks


async def _stored(store: Any, project: str, snippet: str) -> dict[str, Any]:
    rows = await store.run_text(STORED, {"p": project, "id": snippet}, read=True)
    return {k: rows[0]["props"].get(k) for k in TOTALS}


async def _same_as_recount(store: Any, project: str, snippet: str, when: str) -> None:
    """The stored totals are what recounting every report gives (then recounted)."""
    added = await _stored(store, project, snippet)
    await store.write_many(recount_steps("Snippet", [{"project": project, "id": snippet}]))
    full = await _stored(store, project, snippet)
    for name in TOTALS:
        got, want = added[name], full[name]
        if isinstance(want, float):
            assert isinstance(got, float) and abs(got - want) < 1e-9, (when, name, got, want)
        else:
            assert got == want and type(got) is type(want), (when, name, got, want)


async def test_added_evidence_equals_a_recount_after_every_batch(store: Any, project: str) -> None:
    rng = random.Random(24)
    tasks = await _episodes(store, project, 40)
    snippets = ["s-reused", "s-other", "s-late"]
    outcome = {e: rng.choice(["success", "failure"]) for e in tasks}
    seen: set[str] = set()
    for batch in range(14):
        if batch == 4:  # a report sent to the API (recounted in full), in a bridge's context
            report = OutcomeReport(project, "s-reused", True, key="api-1", applied_in="e3")
            assert await record_outcome(store, report) is not None
        if batch == 9:  # reports that were never counted: the next batch counts them all
            await store.run_text(
                """MATCH (s:Snippet {project: $p, id: 's-other'})
                   REMOVE s.uses, s.evidence_for, s.contexts""",
                {"p": project},
            )
        if batch == 7:  # an episode's outcome changes: the other outcome is reported too
            outcome["e1"] = "failure" if outcome["e1"] == "success" else "success"
        episodes = [*rng.sample(sorted(tasks), 9), "e1", "e3"]  # some again (re-ingested)
        occurrences = []
        for episode in episodes:
            for snippet in snippets[: 3 if batch > 5 else 2]:
                if snippet != "s-reused" and episode not in ("e1", "e3") and rng.random() < 0.4:
                    continue
                relation = (
                    "USED" if episode == "e3" else rng.choice(["GENERATED", "USED", "MODIFIED"])
                )
                occurrences.append(_occurrence(
                    project, snippet, episode=episode, outcome=outcome[episode],
                    relation=relation, stored=snippet in seen,
                ))  # fmt: skip
        seen |= {o.id for o in occurrences}
        await store.write_many(write_steps(occurrences, {}))
        for snippet in sorted(seen):
            await _same_as_recount(store, project, snippet, f"batch {batch}, {snippet}")
    reports = await store.run_text(
        """MATCH (o:OutcomeReport {project: $p})-[:ABOUT]->(s:Snippet {id: 's-reused'})
           RETURN count(o) AS n, count(DISTINCT o.context) AS contexts,
                  count(o.pending) AS pending""",
        {"p": project},
        read=True,
    )
    # repeats within contexts, several contexts, and nothing left marked
    assert reports[0]["n"] > reports[0]["contexts"] > 2 and reports[0]["pending"] == 0


async def test_recorded_counts_episodes_and_records_as_they_come(store: Any, project: str) -> None:
    await _episodes(store, project, 6)
    batches = [
        [_occurrence(project, "s1", episode="e0", relation="USED", outcome="success"),
         _occurrence(project, "s1", episode="e1", relation="GENERATED", outcome="failure"),
         _occurrence(project, "s1", record="record:r1")],
        # e0 again by another relation: one episode still; e1 again, the same way
        [_occurrence(project, "s1", episode="e0", relation="MODIFIED", stored=True),
         _occurrence(project, "s1", episode="e1", relation="GENERATED", outcome="failure",
                     stored=True),
         _occurrence(project, "s1", record="record:r1", stored=True),
         _occurrence(project, "s1", record="record:r2", stored=True)],
        # a new episode, and e0 a third way; s2 new, by two episodes and a record
        [_occurrence(project, "s1", episode="e2", relation="USED", outcome="success",
                     stored=True),
         _occurrence(project, "s1", episode="e0", relation="GENERATED", outcome="success",
                     stored=True),
         _occurrence(project, "s2", episode="e0", relation="USED"),
         _occurrence(project, "s2", episode="e3", relation="MODIFIED"),
         _occurrence(project, "s2", record="record:r3")],
        # the same batch again (re-ingested): nothing changes
        [_occurrence(project, "s1", episode="e2", relation="USED", outcome="success",
                     stored=True),
         _occurrence(project, "s2", episode="e3", relation="MODIFIED", stored=True)],
    ]  # fmt: skip
    want = [{"s1": 3}, {"s1": 4}, {"s1": 5, "s2": 3}, {"s1": 5, "s2": 3}]
    for n, (batch, counts) in enumerate(zip(batches, want, strict=True)):
        await store.write_many(write_steps(batch, {}))
        for snippet, count in counts.items():
            rows = await store.run_text(RECORDED, {"p": project, "id": snippet}, read=True)
            assert rows[0]["recorded"] == rows[0]["full"] == count, (n, snippet, rows)
    # a snippet without the count (stored before it) is counted in full, once
    await store.run_text(
        "MATCH (s:Snippet {project: $p, id: 's2'}) REMOVE s.recorded", {"p": project}
    )
    again = [_occurrence(project, "s2", episode="e4", relation="USED", stored=True)]
    await store.write_many(write_steps(again, {}))
    rows = await store.run_text(RECORDED, {"p": project, "id": "s2"}, read=True)
    assert rows[0]["recorded"] == rows[0]["full"] == 4, rows


async def test_a_batch_costs_the_same_for_a_snippet_of_ten_users_or_four_hundred(
    scratch_store: Any,
) -> None:
    """The snippet write steps of one episode reporting about a reused snippet, profiled
    (db hits): its earlier reports and users are not read again (before: recount_evidence
    read every report, count_snippet_recordings every user). Planned while the store is
    small, as a bulk derive's first batch plans them (replan=skip)."""
    from metisgraph.graph.indexes import apply_schema

    store = scratch_store
    await apply_schema(store, 384)
    await _episodes(store, "p", 420)
    cost: dict[int, dict[str, int]] = {}
    for users in (10, 400):
        snippet = f"s{users}"
        earlier = [_occurrence("p", snippet, episode=f"e{i}", relation="USED",
                               outcome="success", stored=i > 0) for i in range(users)]  # fmt: skip
        await store.write_many(write_steps(earlier, {}))
        probe = [_occurrence("p", snippet, episode="e410", relation="USED", outcome="failure",
                             stored=True)]  # fmt: skip
        cost[users] = {}
        for step, params in write_steps(probe, {}):
            text = (query(step) if isinstance(step, str) else step).text
            _, summary, _ = await store.driver.execute_query("PROFILE " + text, params)
            name = step if isinstance(step, str) else step.name
            cost[users][name] = cost[users].get(name, 0) + db_hits(summary.profile)
        rows = await store.run_text(STORED, {"p": "p", "id": snippet}, read=True)
        assert rows[0]["props"]["uses"] == users + 1 and rows[0]["props"]["recorded"] == users + 1
    grew = {k: cost[400][k] - cost[10].get(k, 0) for k in cost[400]}
    assert all(g < 10 for g in grew.values()), str(grew)
