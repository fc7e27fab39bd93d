"""The database's constraints and indexes (cypher/schema.cypher): applied idempotently at
start-up, rebuilt where their definition changed, awaited until online.

(api/graphql/schema.py is the GraphQL schema; this is the graph's.)"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from metisgraph.graph.channel_registry import CHANNELS
from metisgraph.graph.cypher import schema_statements
from metisgraph.graph.lucene import project_scope
from metisgraph.graph.migrations import GRAPH_MIGRATIONS, Migration, MigrationReport, migrate
from metisgraph.graph.store import GraphStore

__all__ = [
    "SchemaMismatch",
    "SchemaReport",
    "apply_schema",
    "schema_for",
    "vector_index_statements",
]

_WITH_FILTERS = re.compile(r"\bWITH\s*\[[^\]]*\]\s*(?=OPTIONS)", re.IGNORECASE)
_INDEX = re.compile(
    r"CREATE\s+(?:VECTOR|FULLTEXT)\s+INDEX\s+(\w+)\s+IF NOT EXISTS\s+FOR\s+\(\w+:\w+\)\s+ON\s+"
    r"(?:EACH\s+)?\[?([^\]]+?)\]?\s*(?:WITH\s*\[([^\]]*)\])?\s*OPTIONS",
    re.IGNORECASE | re.DOTALL,
)


class SchemaMismatch(RuntimeError):
    """The database holds indexes built for another embedding dimension."""


@dataclass(frozen=True)
class SchemaReport:
    statements: int
    indexes: dict[str, str]  # name -> state
    vector_filters: bool
    migrations: MigrationReport | None = None


def schema_for(dimensions: int, *, vector_filters: bool) -> list[str]:
    """The schema statements for this embedding dimension and server capability."""
    if not isinstance(dimensions, int) or not 1 <= dimensions <= 4096:
        raise ValueError(f"embedding dimension must be an integer in 1..4096, got {dimensions!r}")
    out = []
    for statement in schema_statements():
        text = statement.replace("{{dimensions}}", str(dimensions))
        if not vector_filters:
            # Before 2026.02 vector indexes take no filter properties; recall over-fetches instead.
            text = _WITH_FILTERS.sub("", text).removeprefix("CYPHER 25").strip()
        out.append(text)
    missing = {c.index for c in CHANNELS if c.index} - set(_wanted_properties(out))
    if missing:  # a channel registered with an index nobody creates: a programming error
        raise ValueError(f"recall channels search indexes the schema lacks: {sorted(missing)}")
    return out


def vector_index_statements(dimensions: int, *, vector_filters: bool) -> dict[str, str]:
    """Our vector indexes, by name, each with the statement that creates it."""
    out = {}
    for statement in schema_for(dimensions, vector_filters=vector_filters):
        match = _INDEX.search(statement)
        if match and re.search(r"\bVECTOR\s+INDEX\b", statement, re.IGNORECASE):
            out[match.group(1)] = statement
    return out


async def _check_dimensions(store: GraphStore, dimensions: int) -> None:
    rows = await store.run("vector_indexes")
    wrong = {r["name"]: r["dimensions"] for r in rows if r["dimensions"] not in (None, dimensions)}
    if wrong:
        raise SchemaMismatch(
            f"vector indexes {wrong} were built for another embedding dimension than the "
            f"model's {dimensions}; use a fresh database or the model they were built with"
        )


def _wanted_properties(statements: list[str]) -> dict[str, list[str]]:
    """Index name -> the properties it should cover (vector filter properties included)."""
    wanted = {}
    for statement in statements:
        match = _INDEX.search(statement)
        if match:
            names = [p.strip().split(".")[-1] for p in match.group(2).split(",")]
            names += [
                p.strip().split(".")[-1] for p in (match.group(3) or "").split(",") if p.strip()
            ]
            wanted[match.group(1)] = names
    return wanted


async def _drop_changed_indexes(store: GraphStore, statements: list[str]) -> set[str]:
    """Indexes whose definition changed since they were created are dropped to be rebuilt.

    Returns the indexes the statements will build: the dropped ones and those not there.
    """
    wanted = _wanted_properties(statements)
    rows = await store.run("index_properties")
    present = {r["name"]: sorted(r["properties"] or []) for r in rows}
    changed = [n for n, props in present.items() if n in wanted and props != sorted(wanted[n])]
    for name in changed:
        await store.run("drop_index", index=name)
    return set(changed) | (wanted.keys() - present.keys())


async def _scope_old_snippets(store: GraphStore) -> None:
    """Snippets stored before they carried a scope token get it, so full-text finds them.

    Only while ``snippet_text`` is (re)built: a scan of every snippet, not for each start.
    """
    for row in await store.run("snippet_projects_unscoped"):
        await store.run(
            "scope_snippets", project=row["project"], scope=project_scope(row["project"])
        )


async def apply_schema(
    store: GraphStore,
    dimensions: int,
    timeout_s: int = 300,
    migrations: Sequence[Migration] = GRAPH_MIGRATIONS,
) -> SchemaReport:
    """Create missing constraints and indexes, wait until every index is online, then run
    the migrations the store has not had yet."""
    info = await store.server_info()
    await _check_dimensions(store, dimensions)
    statements = schema_for(dimensions, vector_filters=info.supports_vector_filters)
    building = await _drop_changed_indexes(store, statements)
    if "snippet_text" in building:  # built before snippets carried their scope, or not yet
        await _scope_old_snippets(store)
    for statement in statements:
        await store.run_text(statement)
    await store.run("await_indexes", timeout=timeout_s)
    migrated = await migrate(store, migrations)
    rows = await store.run("index_states")
    return SchemaReport(
        statements=len(statements),
        indexes={r["name"]: r["state"] for r in rows},
        vector_filters=info.supports_vector_filters,
        migrations=migrated,
    )
