"""Where a batch judges a snippet's staleness again (issue 24): a stored snippet used again,
when nothing it was verified with moved, is judged only in the environment of its new use,
not in every environment it has evidence in (that read all its reports: 3.9 ms an episode
at 59k). What is marked stale stays what the design says (graph/staleness.py): failing
where it used to work, a first success elsewhere, a later success clearing the flag — and a
full judgment afterwards changes nothing. Real Neo4j, fast embedder, the pipeline itself.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from embedders import HashEmbedder
from profiles import db_hits, plan_lines

from metisgraph.graph.cypher import query
from metisgraph.graph.migrations import cypher_step
from metisgraph.graph.staleness import refresh_staleness
from metisgraph.graph.store import GraphStore
from metisgraph.ingest.adapters import Parsed, SourceRef
from metisgraph.ingest.pipeline import Ingestor
from metisgraph.ingest.records import EpisodeRecord

pytestmark = pytest.mark.anyio
START = datetime(2026, 6, 1, 8, 0, tzinfo=UTC)
COMMAND = "make -C services/orders check-ledger"
RUNTIMES = {"A": "3.10.4", "B": "3.11.6", "C": "3.12.1", "D": "3.13.0"}


class JudgedStore(GraphStore):
    """The test store, noting every (snippet, environment) pair staleness is judged for."""

    def __init__(self, store: GraphStore) -> None:
        super().__init__(store.driver, store.database)
        self.judged: list[tuple[str, str]] = []

    async def run(self, name: str, **params: Any) -> list[dict[str, Any]]:
        if name == "stale_facts":
            self.judged += [(p["snippet"], p["env"]) for p in params["pairs"]]
        return await super().run(name, **params)


def _use(project: str, n: int, env: str, outcome: str) -> Parsed:
    record = EpisodeRecord(
        project=project, id=f"use{n}", summary=f"checked the ledger ({n})", outcome=outcome,
        action={"type": "command", "command": COMMAND}, created_at=START + timedelta(hours=n),
        environment={"os": "linux", "runtime": "python", "runtime_version": RUNTIMES[env]},
    )  # fmt: skip
    return Parsed(record, SourceRef("test"))


async def _state(store: Any, project: str) -> tuple[str, dict[str, str], dict[str, str]]:
    """The snippet's id, environment keys by name, and its STALE_IN reasons by name."""
    rows = await store.run_text(
        """MATCH (e:Episode {project: $p})-[:USED|GENERATED]->(s:Snippet)
           MATCH (e)-[:IN_ENV]->(v:Environment)
           RETURN DISTINCT s.id AS id, v.key AS key, v.runtime_version AS runtime""",
        {"p": project},
        read=True,
    )
    assert len({r["id"] for r in rows}) == 1, rows
    names = {version: name for name, version in RUNTIMES.items()}
    keys = {names[r["runtime"]]: r["key"] for r in rows}
    stale = await store.run_text(
        """MATCH (s:Snippet {project: $p, id: $id})-[x:STALE_IN]->(v:Environment)
           RETURN v.runtime_version AS runtime, x.reason AS reason""",
        {"p": project, "id": rows[0]["id"]},
        read=True,
    )
    return rows[0]["id"], keys, {names[r["runtime"]]: r["reason"] for r in stale}


async def test_a_reused_snippet_is_judged_where_it_was_used_and_flags_stay_true(
    store: Any, project: str
) -> None:
    judged = JudgedStore(store)
    ingestor = Ingestor(judged, HashEmbedder())
    await ingestor.ingest([_use(project, n, env, "failure") for n, env in enumerate("ABCD")])
    snippet, keys, stale = await _state(store, project)
    assert len(keys) == 4 and stale == {}  # it never worked: nothing to call stale

    # failed again in A: nothing it was verified with moved; only A has a new last word
    judged.judged.clear()
    await ingestor.ingest([_use(project, 4, "A", "failure")])
    assert [p for p in judged.judged if p[0] == snippet] == [(snippet, keys["A"])]

    # its first success (in B): every other environment whose last word is a failure
    judged.judged.clear()
    await ingestor.ingest([_use(project, 5, "B", "success")])
    assert {p for p in judged.judged if p[0] == snippet} == {(snippet, k) for k in keys.values()}
    assert (await _state(store, project))[2] == {"A": "failed", "C": "failed", "D": "failed"}

    # a later success in C clears C, judged there alone; a failure in B marks B
    judged.judged.clear()
    await ingestor.ingest([_use(project, 6, "C", "success")])
    await ingestor.ingest([_use(project, 7, "B", "failure")])
    assert [p for p in judged.judged if p[0] == snippet] == [
        (snippet, keys["C"]),
        (snippet, keys["B"]),
    ]
    after = (await _state(store, project))[2]
    assert after == {"A": "failed", "B": "failed", "D": "failed"}

    # judged everywhere from all its reports, nothing changes
    whole = await refresh_staleness(store, project, snippets=[snippet])
    assert whole.judged == 4 and whole.stale == 3
    assert (await _state(store, project))[2] == after


async def test_migration_10_places_the_reports_of_a_store_written_before(
    store: Any, project: str
) -> None:
    await Ingestor(store, HashEmbedder()).ingest(
        [_use(project, n, env, "failure") for n, env in enumerate("ABA")]
    )
    placed = """MATCH (o:OutcomeReport {project: $p})
                MATCH (:Episode {project: $p, id: o.applied_in})-[:IN_ENV]->(v:Environment)
                RETURN o.key AS key, o.env AS env, v.key AS truth ORDER BY key"""
    kept = await store.run_text(placed, {"p": project}, read=True)
    assert len(kept) == 3 and all(r["env"] == r["truth"] for r in kept)
    await store.run_text("MATCH (o:OutcomeReport {project: $p}) REMOVE o.env", {"p": project})
    assert all(r["env"] is None for r in await store.run_text(placed, {"p": project}, read=True))
    await cypher_step("migrate_report_environments")(store)
    assert await store.run_text(placed, {"p": project}, read=True) == kept


REPORTS = """
MERGE (s:Snippet {project: $p, id: $id})
MERGE (v:Environment {project: $p, key: $env})
WITH s, v
UNWIND $reports AS r
CREATE (o:OutcomeReport {project: $p, key: r.key, memory_id: s.id, label: 'Snippet',
                         success: r.success, context: r.context, env: v.key, at: r.at,
                         applied_project: r.applied, count: 1})
CREATE (o)-[:ABOUT]->(s)
"""


@pytest.mark.own_server  # db.prepareForReplanning: every statement planned again
async def test_the_last_word_from_an_environment_costs_the_same_after_ten_or_four_hundred(
    store: Any, project: str
) -> None:
    """stale_facts reads a snippet's last word from an environment newest first and stops
    there (issue 24: it read every report from there, 0.11 -> 0.34 s a plan over the 1M
    derive). The newest reports: one another project applied (not this environment's word),
    and two written by one transaction (one time: the greater key decides)."""
    cost: dict[int, int] = {}
    for earlier in (10, 400):
        snippet, env = f"s{earlier}", f"env{earlier}"
        reports = [
            {"key": f"{snippet}:r{i:04d}", "success": True, "context": f"{project}|t{i}|a",
             "at": START + timedelta(minutes=i), "applied": project}
            for i in range(earlier)
        ]  # fmt: skip
        last = START + timedelta(days=30)
        reports += [
            {"key": f"{snippet}:r-late-a", "success": True, "context": f"{project}|tl|a",
             "at": last, "applied": project},
            {"key": f"{snippet}:r-late-b", "success": False, "context": f"{project}|tl|a",
             "at": last, "applied": project},
            {"key": f"{snippet}:r-other", "success": True, "context": "other|t|a",
             "at": last + timedelta(hours=1), "applied": "other"},
        ]  # fmt: skip
        await store.run_text(REPORTS, {"p": project, "id": snippet, "env": env,
                                       "reports": reports})  # fmt: skip
        pairs = [{"snippet": snippet, "env": env}]
        facts = await store.run("stale_facts", project=project, pairs=pairs)
        assert [(f["snippet"], f["last_here"], f["worked"]) for f in facts] == [
            (snippet, False, False)  # no kept count of successes: never counted here
        ]
        # The plan as a store of this shape gets it: index statistics sampled after the
        # reports (a plan made while the shared test store held few reports sorted them all)
        await store.run_text("CALL db.prepareForReplanning()")
        _, summary, _ = await store.driver.execute_query(
            "PROFILE " + query("stale_facts").text, {"project": project, "pairs": pairs}
        )
        cost[earlier] = db_hits(summary.profile)
    assert cost[400] - cost[10] < 10, cost


async def test_where_a_snippet_requiring_a_package_worked_is_read_by_its_own_reports(
    store: Any, project: str
) -> None:
    """For a snippet that requires a package, stale_facts reads the environments it worked
    in from its own reports by the index, not by a scan of every report in the store (issue
    24: after outcome_report_env became outcome_report_env_at the predicates no longer
    matched an index: 0.2 -> 1.0 s a plan by 130k episodes of the 1M derive)."""
    other = [
        {"key": f"noise:r{i:04d}", "success": True, "context": f"{project}|n{i}|a",
         "at": START + timedelta(minutes=i), "applied": project}
        for i in range(300)
    ]  # fmt: skip
    await store.run_text(REPORTS, {"p": project, "id": "noise", "env": "envN",
                                   "reports": other})  # fmt: skip
    worked = [
        {"key": f"needs:r{i}", "success": True, "context": f"{project}|w{i}|a",
         "at": START + timedelta(hours=i), "applied": project}
        for i in range(3)
    ]  # fmt: skip
    await store.run_text(REPORTS, {"p": project, "id": "needs", "env": "envW",
                                   "reports": worked})  # fmt: skip
    await store.run_text(
        "MATCH (s:Snippet {project: $p, id: 'needs'}), (w:Environment {project: $p, key: 'envW'}) "
        "MERGE (k:Package {project: $p, name: 'requests'}) "
        "MERGE (s)-[:REQUIRES {specs: ['>=2']}]->(k) "
        "MERGE (w)-[:HAS_PACKAGE {version: '2.31.0'}]->(k) "
        "MERGE (:Environment {project: $p, key: 'envNew'})",
        {"p": project},
    )
    pairs = [{"snippet": "needs", "env": "envNew"}]
    facts = await store.run("stale_facts", project=project, pairs=pairs)
    assert [(f["worked"], f["packages"]) for f in facts] == [
        (True, [{"name": "requests", "specs": [">=2"], "found": None, "working": ["2.31.0"]}])
    ]
    _, summary, _ = await store.driver.execute_query(
        "PROFILE " + query("stale_facts").text, {"project": project, "pairs": pairs}
    )
    # 300+ reports scanned before
    assert db_hits(summary.profile) < 150, plan_lines(summary.profile)


async def test_a_store_with_the_old_report_index_gets_the_timed_one(scratch_store: Any) -> None:
    """outcome_report_env (project, memory_id, env) is retired at start-up for
    outcome_report_env_at, which stale_facts names in its hint."""
    from metisgraph.graph.indexes import apply_schema

    store = scratch_store
    await apply_schema(store, 384)
    await store.run_text(
        "CREATE INDEX outcome_report_env IF NOT EXISTS "
        "FOR (o:OutcomeReport) ON (o.project, o.memory_id, o.env)"
    )
    await apply_schema(store, 384)
    rows = await store.run_text(
        "SHOW INDEXES YIELD name, properties WHERE name STARTS WITH 'outcome_report_env' "
        "RETURN name, properties",
        read=True,
    )
    assert rows == [
        {"name": "outcome_report_env_at", "properties": ["project", "memory_id", "env", "at"]}
    ]
    assert await store.run("stale_facts", project="p", pairs=[{"snippet": "s", "env": "v"}]) == []


@pytest.mark.own_server  # scratch_store: its plan cache and statistics are this test's own
async def test_stale_facts_planned_before_any_report_still_seeks_the_snippets_own(
    scratch_store: Any,
) -> None:
    """A plan cached while the store held environments but no report (a fresh service's
    first batches, a test worker's first module) is kept until Neo4j replans it. A plain
    `USING INDEX` hint is met by a scan of the whole report index too, and such a plan read
    the snippet's last word so (916 db hits for 303 reports here; the test above failed
    once in CI on a cached plan, 693): `USING INDEX SEEK` leaves only seeks to choose."""
    from metisgraph.graph.indexes import apply_schema

    store, project = scratch_store, "p"
    await apply_schema(store, 384)
    await store.run_text(
        "UNWIND range(1, 2000) AS i CREATE (:Environment {project: 'o' + (i % 5), key: 'e' + i})"
    )
    await store.run_text("CALL db.prepareForReplanning()")
    await store.run("stale_facts", project="other", pairs=[{"snippet": "x", "env": "y"}])
    await test_where_a_snippet_requiring_a_package_worked_is_read_by_its_own_reports(store, project)
