"""Migrations of the stored graph: run once, recorded, and the re-signing of errors."""

from __future__ import annotations

import json
import uuid
from datetime import UTC, datetime
from typing import Any

import pytest

from metisgraph.graph.migrations import (
    Migration,
    MigrationError,
    migrate,
    ordered,
    schema_version,
)
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
    found = [(r["source"], r["type"], r["key"], json.dumps(r["props"])) for r in rows]
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
           WITH r MATCH (o:Error {project: $p, key: $other}) SET o.count = 3""",
        {"p": project, "link": old_keys["s2"], "other": old_keys["s3"]},
    )
    return old_keys


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
