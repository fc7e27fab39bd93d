"""Migrations of the stored graph: run once, recorded, and the re-signing of errors."""

from __future__ import annotations

import asyncio
import json
import uuid
from datetime import UTC, datetime
from typing import Any

import pytest
from neo4j.exceptions import ConstraintError

from metisgraph.graph.digest import digest_project
from metisgraph.graph.migrations import (
    Migration,
    MigrationError,
    migrate,
    ordered,
    schema_version,
)
from metisgraph.graph.outcomes import migrate_outcomes
from metisgraph.graph.store import GraphStore
from metisgraph.ingest.adapters import Parsed, SourceRef
from metisgraph.ingest.errors import logtemplate
from metisgraph.ingest.errors.signatures import extract_errors
from metisgraph.ingest.migrations import MIGRATIONS, resign_errors
from metisgraph.ingest.pipeline.ingestor import Ingestor
from metisgraph.ingest.records import EpisodeRecord, TaskRecord

pytestmark = pytest.mark.anyio


def _ledger() -> str:
    return f"test-{uuid.uuid4().hex[:8]}"


def _counting(calls: list[int], version: int) -> Migration:
    async def step(store: Any) -> dict[str, int]:
        calls.append(version)
        return {"touched": version}

    return Migration(version, f"step {version}", step)


async def test_a_new_store_has_its_migrations_recorded_not_run_one_with_data_runs_them(
    scratch_store: Any,
) -> None:
    """apply_schema's way (``new_store_needs_none``): a store holding nothing but the ledger
    has nothing written before any migration; once it holds data, a new one runs."""
    calls: list[int] = []
    first = await migrate(
        scratch_store, [_counting(calls, 1), _counting(calls, 2)], new_store_needs_none=True
    )
    assert calls == [] and [v for v, _, _ in first.applied] == [1, 2]
    assert await schema_version(scratch_store) == 2
    await scratch_store.run_text("CREATE (:Episode {project: 'p', id: 'e'})")
    later = await migrate(
        scratch_store, [_counting(calls, v) for v in (1, 2, 3)], new_store_needs_none=True
    )
    assert calls == [3] and [v for v, _, _ in later.applied] == [3]
    # never migrated, holding data (a store older than the ledger): every step runs
    fresh = await migrate(
        scratch_store, [_counting(calls, 1)], ledger=_ledger(), new_store_needs_none=True
    )
    assert calls == [3, 1] and [v for v, _, _ in fresh.applied] == [1]


async def test_pending_migrations_run_once_in_order_and_are_recorded(store: Any) -> None:
    ledger, calls = _ledger(), []
    first = await migrate(store, [_counting(calls, 2), _counting(calls, 1)], ledger=ledger)
    assert (first.before, first.after, calls) == (0, 2, [1, 2])
    again = await migrate(store, [_counting(calls, 1), _counting(calls, 2)], ledger=ledger)
    assert again.applied == [] and calls == [1, 2]
    later = await migrate(store, [_counting(calls, v) for v in (1, 2, 3)], ledger=ledger)
    assert [v for v, _, _ in later.applied] == [3] and calls == [1, 2, 3]
    assert await schema_version(store, ledger) == 3
    rows = await store.run_text(
        "MATCH (:Metisgraph {name: $l})-[:APPLIED]->(r:SchemaMigration) "
        "RETURN r.version AS v, r.changes AS changes ORDER BY v",
        {"l": ledger},
        read=True,
    )
    assert [(r["v"], r["changes"]) for r in rows] == [
        (1, ["touched=1"]),
        (2, ["touched=2"]),
        (3, ["touched=3"]),
    ]


async def test_a_failed_step_is_not_recorded_and_runs_again(store: Any) -> None:
    ledger = _ledger()

    async def broken(store: Any) -> dict[str, int]:
        raise RuntimeError("disk full")

    with pytest.raises(RuntimeError, match="disk full"):
        await migrate(store, [Migration(1, "broken", broken)], ledger=ledger)
    assert await schema_version(store, ledger) == 0
    calls: list[int] = []
    await migrate(store, [_counting(calls, 1)], ledger=ledger)  # the lease was given back
    assert calls == [1]


async def test_a_migration_held_by_another_process_is_waited_for(store: Any) -> None:
    ledger = _ledger()
    await store.run("take_migration_lease", ledger=ledger, lease_s=600)
    with pytest.raises(MigrationError, match="another process"):
        await migrate(store, [_counting([], 1)], ledger=ledger, wait_s=0.5)


def test_migration_numbers_are_distinct() -> None:
    with pytest.raises(MigrationError, match="distinct"):
        ordered([_counting([], 1)], [_counting([], 1)])
    assert [m.version for m in MIGRATIONS] == list(range(1, len(MIGRATIONS) + 1))


# --- re-signing errors --------------------------------------------------------------

# Under the old rules the account and "en0" were template words of their own; now the
# account is kept and "en0"/"en1" are one value.
OLD_RULES = logtemplate.ALL_RULES - {"user-strings"}
ERRORS = {
    "s0": "ERROR session opened for user ana by (uid=0)",
    "s1": "ERROR session opened for user bob by (uid=0)",
    "s2": "ERROR link down on en0",
    "s3": "ERROR link down on en1",
    "s4": "ERROR disk 3 full",
}


def _key(text: str) -> str:
    (error,) = extract_errors(text)
    return error.key


async def _links(store: Any, project: str) -> list[tuple[str, str, str, str]]:
    rows = await store.run_text(
        """MATCH (n {project: $p})-[r]->(x:Error {project: $p})
           RETURN coalesce(n.id, '') AS source, type(r) AS type, x.key AS key,
                  properties(r) AS props""",
        {"p": project},
        read=True,
    )
    found = [(r["source"], r["type"], r["key"], json.dumps(r["props"], default=str, sort_keys=True))
             for r in rows]  # fmt: skip
    return sorted(found)


async def _errors(store: Any, project: str) -> dict[str, dict[str, Any]]:
    rows = await store.run_text(
        "MATCH (r:Error {project: $p}) RETURN r.key AS key, properties(r) AS props",
        {"p": project},
        read=True,
    )
    return {r["key"]: r["props"] for r in rows}


async def _ingest_with_old_rules(
    store: Any, embedder: Any, project: str, monkeypatch: pytest.MonkeyPatch
) -> dict[str, str]:
    records: list[Any] = [TaskRecord(project=project, id="t", goal="ssh", status="resolved")]
    for step, (episode, text) in enumerate(ERRORS.items()):
        at = datetime(2026, 1, 1 + step, tzinfo=UTC)
        records.append(EpisodeRecord(project=project, id=episode, task_id="t", step=step,
                                     outcome="failure", summary=f"try {step}", error=text,
                                     created_at=at))  # fmt: skip
    records.append(EpisodeRecord(project=project, id="s5", task_id="t", step=5,
                                 outcome="success", summary="fixed"))  # fmt: skip
    with monkeypatch.context() as patch:
        patch.setattr(logtemplate, "DEFAULT_RULES", OLD_RULES)
        old_keys = {episode: _key(text) for episode, text in ERRORS.items()}
        await Ingestor(store, embedder).ingest([Parsed(r, SourceRef("test")) for r in records])
    await store.run_text(
        """MATCH (r:Error {project: $p, key: $link}) SET r.count = 2
           MERGE (s:Snippet {project: $p, id: 'fix'}) MERGE (s)-[:FIXES {via: 'patch'}]->(r)
           WITH r MATCH (o:Error {project: $p, key: $other}) SET o.count = 3
           // what the old resolution rule linked: the task's last step to every error
           WITH r MATCH (f:Episode {project: $p, id: 's5'}), (x:Error {project: $p})
           MERGE (f)-[:RESOLVED]->(x)""",
        {"p": project, "link": old_keys["s2"], "other": old_keys["s3"]},
    )
    return old_keys


@pytest.mark.slow
async def test_resigning_moves_every_link_to_the_new_keys_and_merges_what_now_agrees(
    store: Any, embedder: Any, project: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    old = await _ingest_with_old_rules(store, embedder, project, monkeypatch)
    assert old["s0"] == old["s1"] and old["s2"] != old["s3"]  # what the old rules did
    before = await _links(store, project)
    assert len(before) == 5 + 4 + 1  # five HIT, four RESOLVED (s0, s1 share), one FIXES

    ledger = _ledger()

    async def step(store: Any) -> dict[str, int]:
        return await resign_errors(store, project)

    report = await migrate(store, [Migration(1, "resign", step)], ledger=ledger)
    ana, link, disk = _key(ERRORS["s0"]), _key(ERRORS["s2"]), _key(ERRORS["s4"])
    assert report.applied[0][2] == {"resigned": 3, "merged": 1, "unchanged": 1, "unsignable": 0}
    errors = await _errors(store, project)
    assert set(errors) == {ana, link, disk}
    # One node per old node or group of merged ones; every link moved with its properties.
    # s1 hit the node whose sample is s0's: a node keeps one sample, so it moves whole.
    after = await _links(store, project)
    hits = {(s, k) for s, t, k, _ in after if t == "HIT"}
    assert hits == {("s0", ana), ("s1", ana), ("s2", link), ("s3", link), ("s4", disk)}
    assert {k for s, t, k, _ in after if t == "RESOLVED"} == {ana, link, disk}
    # a sighting names the error it moved to (read newest first by that key)
    assert all(json.loads(p)["error"] == k for _, t, k, p in after if t == "HIT")
    assert [(s, k, p) for s, t, k, p in after if t == "FIXES"] == [
        ("fix", link, '{"via": "patch"}')
    ]
    merged = errors[link]
    assert sorted(merged["former_keys"]) == sorted([old["s2"], old["s3"]])
    assert merged["count"] == 5
    assert merged["first_seen"].day == 3 and merged["last_seen"].day == 4
    assert "link down on <ID>" in merged["template"] and "~" not in merged["key"]

    again = await resign_errors(store, project)
    assert again == {"resigned": 0, "merged": 0, "unchanged": 3, "unsignable": 0}
    assert await _links(store, project) == after and await _errors(store, project) == errors
    assert (await migrate(store, [Migration(1, "resign", step)], ledger=ledger)).applied == []


async def test_errors_ingested_after_the_migration_land_on_the_migrated_nodes(
    store: Any, embedder: Any, project: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    await _ingest_with_old_rules(store, embedder, project, monkeypatch)
    await resign_errors(store, project)
    later = EpisodeRecord(project=project, id="s9", outcome="failure", summary="again",
                          error="ERROR link down on en7")  # fmt: skip
    await Ingestor(store, embedder).ingest([Parsed(later, SourceRef("test"))])
    rows = await store.run_text(
        "MATCH (:Episode {project: $p, id: 's9'})-[:HIT]->(r:Error) RETURN r.former_keys AS f",
        {"p": project},
        read=True,
    )
    assert len(rows) == 1 and len(rows[0]["f"]) == 2  # the node the two old ones became


class _CutShort(GraphStore):
    """The test store, failing when a migration reaches one named query: a process that
    died there, with everything before it committed."""

    def __init__(self, store: GraphStore, at: str) -> None:
        super().__init__(store.driver, store.database, timeout=store.timeout)
        self.at = at

    async def run(self, name: str, **params: Any) -> list[dict[str, Any]]:
        if name == self.at:
            raise RuntimeError(f"died before {name}")
        return await super().run(name, **params)


async def test_resigning_cut_short_after_parking_is_finished_by_the_next_run(
    store: Any, embedder: Any, project: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    clean = f"{project}-clean"
    await _ingest_with_old_rules(store, embedder, clean, monkeypatch)
    await resign_errors(store, clean)
    await _ingest_with_old_rules(store, embedder, project, monkeypatch)
    with pytest.raises(RuntimeError, match="died"):
        await resign_errors(_CutShort(store, "move_resigned_errors"), project)
    assert any(key.startswith("~") for key in await _errors(store, project))  # parked
    again = await resign_errors(store, project)
    assert again["resigned"] == 3 and again["merged"] == 1
    assert not any(key.startswith("~") for key in await _errors(store, project))
    assert await digest_project(store, project) == await digest_project(store, clean)


# --- migration 3: outcome reports, priors, clocks, in batches -----------------------

# Per episode: (successes, failures, confidence) as counted before reports were kept.
LEGACY = {f"e{i}": (i % 3, i % 2, round(0.4 + 0.05 * i, 2)) for i in range(7)}


async def _legacy_project(store: Any, embedder: Any, project: str) -> None:
    """A project as stored before migration 3: reuse counted on the memory, no reports, no
    priors apart from confidence, no `active_at`, no project clock."""
    records: list[Any] = [TaskRecord(project=project, id="t", goal="build", status="resolved")]
    records += [
        EpisodeRecord(project=project, id=episode, task_id="t", step=step, outcome="success",
                      summary=f"step {step}", created_at=datetime(2026, 1, 1 + step, tzinfo=UTC))
        for step, episode in enumerate(LEGACY)
    ]  # fmt: skip
    await Ingestor(store, embedder).ingest([Parsed(r, SourceRef("test")) for r in records])
    rows = [{"id": k, "s": s, "f": f, "c": c} for k, (s, f, c) in LEGACY.items()]
    await store.run_text(
        """UNWIND $rows AS row
           MATCH (m:Episode {project: $p, id: row.id})
           OPTIONAL MATCH (o:OutcomeReport)-[:ABOUT]->(m) DETACH DELETE o
           WITH DISTINCT m, row
           REMOVE m.prior_confidence, m.prior_strength, m.active_at, m.uses, m.contexts,
                  m.evidence_for, m.evidence_against, m.confirmed_at, m.success_rate
           SET m.successes = row.s, m.failures = row.f, m.confidence = row.c,
               m.last_used_at = datetime('2026-02-01T00:00:00Z')
           WITH count(*) AS n
           MATCH (p:Project {name: $p}) REMOVE p.active_at""",
        {"p": project, "rows": rows},
    )


async def _reports(store: Any, project: str) -> int:
    rows = await store.run_text(
        "MATCH (o:OutcomeReport {project: $p})-[:ABOUT]->() RETURN count(o) AS n",
        {"p": project},
        read=True,
    )
    return int(rows[0]["n"])


@pytest.mark.slow
async def test_migration_3_in_many_batches_gives_the_graph_of_one(
    store: Any, embedder: Any, project: str
) -> None:
    whole, batched = f"{project}-whole", f"{project}-batched"
    for name in (whole, batched):
        await _legacy_project(store, embedder, name)
    legacy = await digest_project(store, whole)
    assert legacy == await digest_project(store, batched)
    one = await migrate_outcomes(store, whole, batch=10_000)  # each part in one transaction
    many = await migrate_outcomes(store, batched, batch=2)  # 7 memories: 4 transactions a part
    assert one == many == {
        "memories": 7, "legacy": 5, "projects": 1, "recounted_episodes": 5,
    }  # fmt: skip
    assert await digest_project(store, batched) == await digest_project(store, whole) != legacy
    assert await _reports(store, batched) == sum((s > 0) + (f > 0) for s, f, _ in LEGACY.values())
    rows = await store.run_text(
        """MATCH (m:Episode {project: $p}) RETURN m.id AS id, m.successes AS s,
           m.failures AS f, m.prior_confidence AS prior, m.active_at IS NOT NULL AS active""",
        {"p": batched},
        read=True,
    )
    assert {r["id"]: (r["s"], r["f"], r["prior"]) for r in rows} == LEGACY
    assert all(r["active"] for r in rows)
    clock = await store.run_text(
        "MATCH (p:Project {name: $p}) RETURN p.active_at IS NOT NULL AS set", {"p": batched}
    )
    assert clock == [{"set": True}]
    again = await migrate_outcomes(store, batched, batch=2)
    assert again["memories"] == again["legacy"] == again["projects"] == 0
    assert await digest_project(store, batched) == await digest_project(store, whole)


@pytest.mark.slow
async def test_migration_3_cut_short_by_a_failed_batch_is_finished_by_the_next_run(
    store: Any, embedder: Any, project: str
) -> None:
    clean = f"{project}-clean"
    await _legacy_project(store, embedder, clean)
    await migrate_outcomes(store, clean, batch=2)
    await _legacy_project(store, embedder, project)
    # A report already holding the key the migration gives e5's successes: its batch fails
    # (the key is unique), the batches before it stay committed.
    await store.run_text(
        "CREATE (:OutcomeReport {project: $p, key: 'legacy:e5:true', label: 'Episode'})",
        {"p": project},
    )
    with pytest.raises(ConstraintError):
        await migrate_outcomes(store, project, batch=2)
    await store.run_text(
        "MATCH (o:OutcomeReport {project: $p, key: 'legacy:e5:true'}) "
        "WHERE NOT (o)-[:ABOUT]->() DELETE o",
        {"p": project},
    )
    assert await digest_project(store, project) != await digest_project(store, clean)
    await migrate_outcomes(store, project, batch=2)
    assert await digest_project(store, project) == await digest_project(store, clean)
    cut = _CutShort(store, "migrate_project_clocks")  # died after the reports, before clocks
    await _legacy_project(store, embedder, f"{project}-2")
    with pytest.raises(RuntimeError, match="died"):
        await migrate_outcomes(cut, f"{project}-2", batch=2)
    await migrate_outcomes(store, f"{project}-2", batch=2)
    assert await digest_project(store, f"{project}-2") == await digest_project(store, clean)


@pytest.mark.slow(10)
async def test_processes_applying_the_schema_to_a_new_store_at_once_all_succeed(
    scratch_neo4j: Any, scratch_store: Any
) -> None:
    """Starts on one new store at once (API workers, a test run's workers): IF NOT EXISTS
    is checked as a statement runs, so both create each index and the later commit is
    refused as an equivalent one; the start that met it failed. Each round empties the
    store's schema and applies it from four drivers at once."""
    from metisgraph.graph.indexes import apply_schema
    from metisgraph.graph.store import open_driver

    drivers = [open_driver(scratch_neo4j.uri, "neo4j", scratch_neo4j.password()) for _ in "abcd"]
    try:
        stores = [GraphStore(driver) for driver in drivers]
        for _ in range(5):
            for row in await scratch_store.run_text("SHOW CONSTRAINTS YIELD name", read=True):
                await scratch_store.run_text(f"DROP CONSTRAINT `{row['name']}`")
            shown = "SHOW INDEXES YIELD name, type WHERE type <> 'LOOKUP' RETURN name"
            for row in await scratch_store.run_text(shown, read=True):
                await scratch_store.run_text(f"DROP INDEX `{row['name']}`")
            reports = await asyncio.gather(*(apply_schema(s, 8) for s in stores))
            assert all(set(r.indexes.values()) == {"ONLINE"} for r in reports), reports
    finally:
        for driver in drivers:
            await driver.close()
