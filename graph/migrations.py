"""Numbered migrations of the stored graph, each run once and recorded in the store.

The store keeps its place in one ``(:Metisgraph {name})`` node: ``schema_version`` is the
number of the last migration applied, and each applied migration leaves a
``(:SchemaMigration {ledger, version, name, applied_at, changes})`` record. ``migrate``
runs the pending ones in order at start-up (``apply_schema``) and from
``metisgraph schema migrate``; a second run finds nothing pending and changes nothing.

A migration is a number, a name and an async step that must be safe to run again (it
may be interrupted before it is recorded). Cypher-only steps name a query in
``cypher/migrations.cypher``; steps that need the signer or the model live in ``ingest``
and join the list there (``metisgraph.ingest.migrations.MIGRATIONS``). To add one, give
it the next number; numbers are never reused or reordered.

While one process migrates, it holds a lease on the ledger node; another process starting
at the same time waits for it instead of running the same steps twice.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Iterable, Sequence
from dataclasses import dataclass, field

from metisgraph.graph.lineage.derive import rederive_all
from metisgraph.graph.outcomes import migrate_outcomes
from metisgraph.graph.store import GraphStore

__all__ = [
    "GRAPH_MIGRATIONS",
    "LEDGER",
    "Migration",
    "MigrationError",
    "MigrationReport",
    "cypher_step",
    "migrate",
    "ordered",
    "record_current",
    "schema_version",
]

LEDGER = "metisgraph"
_LEASE_S = 600  # a lease older than this was left by a process that died
_POLL_S = 1.0

Step = Callable[[GraphStore], Awaitable[dict[str, int]]]


class MigrationError(RuntimeError):
    """Migrations that cannot run: numbers repeated, or another process never finished."""


@dataclass(frozen=True)
class Migration:
    version: int
    name: str
    step: Step


@dataclass
class MigrationReport:
    before: int
    after: int
    applied: list[tuple[int, str, dict[str, int]]] = field(default_factory=list)


def cypher_step(query_name: str, **params: object) -> Step:
    """A step that runs one named query of ``cypher/migrations.cypher``; it returns counts."""

    async def step(store: GraphStore) -> dict[str, int]:
        rows = await store.run(query_name, **params)
        return {k: int(v) for row in rows for k, v in row.items() if isinstance(v, int)}

    return step


# Migrations that need nothing but Cypher (the first, re-signing errors, needs the signer
# and lives in ingest).
GRAPH_MIGRATIONS: tuple[Migration, ...] = (
    Migration(
        3, "outcome reports, priors apart from confidence, active_at, clocks", migrate_outcomes
    ),
    Migration(4, "fix links from evidence: every task's lineage derived again", rederive_all),
    Migration(
        5,
        "an episode's vectors as EpisodeVector nodes, searched in one index",
        cypher_step("migrate_episode_vectors"),
    ),
    Migration(
        6,
        "instance details (the originals behind placeholders) no longer kept by default",
        cypher_step("forget_instance_details"),
    ),
    Migration(
        7,
        "the counts the errors pages rank by, kept on every Error node",
        cypher_step("migrate_error_counts"),
    ),
    Migration(
        8,
        "an episode's title and context vectors kept only on its EpisodeVector nodes",
        cypher_step("forget_episode_vector_copies"),
    ),
    Migration(
        9,
        "an error's sightings and fixes keep its key and their time, read newest first",
        cypher_step("migrate_sighting_keys"),
    ),
    Migration(
        10,
        "an outcome report keeps the environment it speaks for, read by an index",
        cypher_step("migrate_report_environments"),
    ),
    Migration(
        11,
        "each project keeps its errors' totals (all, open) for the errors pages",
        cypher_step("migrate_error_totals"),
    ),
    Migration(
        12,
        "each project keeps its sizes (tasks, episodes) for the projects list",
        cypher_step("migrate_project_sizes", project=None),
    ),
)


def ordered(*groups: Iterable[Migration]) -> tuple[Migration, ...]:
    """Migrations from several places in version order; a number used twice is an error."""
    found = sorted((m for group in groups for m in group), key=lambda m: m.version)
    versions = [m.version for m in found]
    if len(set(versions)) != len(versions) or any(v < 1 for v in versions):
        raise MigrationError(f"migration numbers must be distinct and positive: {versions}")
    return tuple(found)


async def schema_version(store: GraphStore, ledger: str = LEDGER) -> int:
    """The number of the last migration applied to the store (0 for none)."""
    rows = await store.run("schema_version", ledger=ledger)
    return int(rows[0]["version"]) if rows else 0


async def _take_lease(store: GraphStore, ledger: str, wait_s: float) -> None:
    deadline = time.monotonic() + wait_s
    while True:
        rows = await store.run("take_migration_lease", ledger=ledger, lease_s=_LEASE_S)
        if rows and rows[0]["taken"]:
            return
        if time.monotonic() > deadline:
            raise MigrationError(f"another process has been migrating {ledger!r} too long")
        await asyncio.sleep(_POLL_S)


async def migrate(
    store: GraphStore,
    migrations: Sequence[Migration] = GRAPH_MIGRATIONS,
    *,
    ledger: str = LEDGER,
    wait_s: float = 900,
    new_store_needs_none: bool = False,
) -> MigrationReport:
    """Run every migration newer than the store's version, in order, recording each.

    ``new_store_needs_none`` (``apply_schema``'s): a store that has never been migrated and
    holds nothing but the ledger has every migration recorded without running it: each
    rewrites data written before it, and there is none (on an empty store the steps cost
    ~5 s, nearly all of it Neo4j planning their statements)."""
    pending = ordered(migrations)
    await _take_lease(store, ledger, wait_s)
    try:
        before = await schema_version(store, ledger)
        report = MigrationReport(before=before, after=before)
        new = new_store_needs_none and before == 0 and not await _holds_data(store)
        for migration in pending:
            if migration.version <= report.after:
                continue
            if new:
                await _record(store, ledger, migration, ["a new store: nothing written before it"])
                changes: dict[str, int] = {}
            else:
                changes = await migration.step(store)
                await _record(
                    store, ledger, migration, [f"{k}={v}" for k, v in sorted(changes.items())]
                )
            report.after = migration.version
            report.applied.append((migration.version, migration.name, changes))
        return report
    finally:
        await store.run("release_migration_lease", ledger=ledger)


async def _record(store: GraphStore, ledger: str, migration: Migration, changes: list[str]) -> None:
    await store.run(
        "record_migration",
        ledger=ledger,
        version=migration.version,
        title=migration.name,
        changes=changes,
    )


async def _holds_data(store: GraphStore) -> bool:
    """Whether the store holds a node besides the migration ledger's own."""
    rows = await store.run("holds_data")
    return bool(rows and rows[0]["holds"])


async def record_current(
    store: GraphStore, migrations: Sequence[Migration], *, ledger: str = LEDGER
) -> int:
    """Record every migration as applied without running it: for a store whose graph this
    version wrote whole (a bulk load's import), so nothing in it is older than them.
    Returns the version recorded."""
    await _take_lease(store, ledger, 60)
    try:
        before = await schema_version(store, ledger)
        for migration in ordered(migrations):
            if migration.version > before:
                await _record(store, ledger, migration, ["written by a bulk load of this version"])
        return max([before, *(m.version for m in migrations)])
    finally:
        await store.run("release_migration_lease", ledger=ledger)
