"""The database's constraints and indexes: applied idempotently at start-up, rebuilt where
their definition changed, awaited until online. Constraints and range indexes are the
statements of cypher/schema.cypher; the vector and full-text indexes are declared here
(``VECTOR_INDEXES``, ``TEXT_INDEXES``: what each covers, said once) and created by the
named statements of cypher/indexes.cypher, one per kind and server capability.

(api/graphql/schema.py is the GraphQL schema; this is the graph's.)"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field
from typing import Any

import anyio
from neo4j.exceptions import ClientError

from metisgraph.graph.channel_registry import CHANNELS
from metisgraph.graph.cypher import query, schema_statements
from metisgraph.graph.lucene import project_scope
from metisgraph.graph.migrations import GRAPH_MIGRATIONS, Migration, MigrationReport, migrate
from metisgraph.graph.store import GraphStore

__all__ = [
    "RETIRED_INDEXES",
    "SNIPPET_NAME_CHARS",
    "TEXT_INDEXES",
    "VECTOR_INDEXES",
    "IndexSpec",
    "IndexWatch",
    "IndexesNotOnline",
    "SchemaMismatch",
    "SchemaReport",
    "SchemaStatement",
    "apply_schema",
    "await_indexes",
    "schema_for",
    "vector_index_statements",
]


@dataclass(frozen=True)
class IndexSpec:
    """One vector or full-text index: on which label, over which properties; for a vector
    index, ``properties`` is its vector and ``filters`` what a search may filter on inside
    it (servers from 2026.02)."""

    name: str
    label: str
    properties: tuple[str, ...]
    filters: tuple[str, ...] = ()

    @property
    def covered(self) -> list[str]:
        """Every property the index holds, as SHOW INDEXES lists them."""
        return [*self.properties, *self.filters]


VECTOR_INDEXES = (
    # Every vector of every episode (its text, its title alone, it with its neighbouring
    # steps) in ONE index, the only vector index over episodes: recall pays one search for
    # all three channels. Filtered in-index by project (and `of`); the episode's own filters
    # are checked on the episode after (graph/channels.py), so nothing but the vector and
    # the episode's key is on these nodes. The title and context vectors live only here;
    # the text vector is also the episode's `embedding` property (read, never searched).
    IndexSpec("episode_vectors", "EpisodeVector", ("embedding",), ("project", "of")),
    IndexSpec(
        "snippet_embedding",
        "Snippet",
        ("embedding",),
        ("project", "recallable", "language", "kind", "review_status"),
    ),
    IndexSpec("error_embedding", "Error", ("embedding",), ("project", "category")),
    IndexSpec("pattern_embedding", "Pattern", ("embedding",), ("project",)),
)

# Indexes of earlier versions that nothing searches any more, dropped at start-up: the
# episode's own vector (episode_embedding) and its title and context vectors, each once an
# index over Episode; all three are answered by episode_vectors since migration 5. And
# outcome_report_env (project, memory_id, env): outcome_report_env_at adds the report's time,
# so the last word from an environment is read newest first (cypher/schema.cypher). And
# snippet_parameters_text, a text index over the analysed parameters that main held for an
# hour: it refuses a value past ~32 KB, which would refuse a snippet whose defaults are long.
RETIRED_INDEXES = (
    "episode_embedding",
    "episode_title_embedding",
    "episode_context_embedding",
    "outcome_report_env",
    "snippet_parameters_text",
)

# A snippet's name as ingest keeps it (its end; ingest/snippets/prepare.py): under what the
# text index snippet_name_text holds (~32 KB), 4 bytes a character at most.
SNIPPET_NAME_CHARS = 4096

# Full-text over episode and snippet text. `keywords` holds identifiers split into their
# parts (FooBarException -> foo bar exception) so words inside code match. `scope` is one
# token standing for the project, so a query filters by project inside the index.
TEXT_INDEXES = (
    IndexSpec(
        "episode_text",
        "Episode",
        (
            "title",
            "summary",
            "reasoning",
            "observation",
            "error_text",
            "action_command",
            "keywords",
            "scope",
        ),
    ),
    IndexSpec("episode_context", "Episode", ("context_text", "scope")),
    IndexSpec(
        "snippet_text",
        "Snippet",
        ("name", "description", "signature", "template", "keywords", "scope"),
    ),
    IndexSpec("error_text", "Error", ("kind", "template", "frames_text")),
)


@dataclass(frozen=True)
class SchemaStatement:
    """One schema statement and its parameters (an index's dimension)."""

    text: str
    params: dict[str, Any] = field(default_factory=dict)


class SchemaMismatch(RuntimeError):
    """The database holds indexes built for another embedding dimension."""


@dataclass(frozen=True)
class SchemaReport:
    statements: int
    indexes: dict[str, str]  # name -> state
    vector_filters: bool
    migrations: MigrationReport | None = None


def _fields(names: Sequence[str]) -> str:
    return ", ".join(f"n.{name}" for name in names)


def _vector_statement(spec: IndexSpec, *, vector_filters: bool) -> str:
    names = {"index": spec.name, "label": spec.label, "property": spec.properties[0]}
    if not vector_filters:
        return query("create_vector_index_unfiltered").naming(**names).text
    statement = query("create_vector_index").naming(**names)
    return statement.filled(filters=_fields(spec.filters)).text


# IF NOT EXISTS is checked when a statement runs, not when it commits: two processes starting
# on one new store at once (API workers, a test run's workers) both create an index, and the
# later commit is refused as an equivalent of the first. What it asked for is there.
_ALREADY_THERE = "Neo.ClientError.Schema.EquivalentSchemaRuleAlreadyExists"


async def _create(store: GraphStore, text: str, params: dict[str, Any] | None) -> None:
    try:
        await store.run_text(text, params)
    except ClientError as error:
        if error.code != _ALREADY_THERE:
            raise


def schema_for(
    dimensions: int, *, vector_filters: bool, later: Collection[str] = ()
) -> list[SchemaStatement]:
    """The schema statements for this embedding dimension and server capability; ``later``:
    vector indexes left out (a bulk load builds episode_vectors after its derive)."""
    out = [SchemaStatement(text) for text in schema_statements()]
    vectors = vector_index_statements(dimensions, vector_filters=vector_filters)
    if unknown := set(later) - vectors.keys():
        raise ValueError(f"only vector indexes can be built later, not {sorted(unknown)}")
    out += [statement for name, statement in vectors.items() if name not in later]
    for spec in TEXT_INDEXES:
        text_index = query("create_text_index").naming(index=spec.name, label=spec.label)
        out.append(SchemaStatement(text_index.filled(properties=_fields(spec.properties)).text))
    missing = {c.index for c in CHANNELS if c.index} - set(_wanted_properties())
    if missing:  # a channel registered with an index nobody creates: a programming error
        raise ValueError(f"recall channels search indexes the schema lacks: {sorted(missing)}")
    return out


def vector_index_statements(dimensions: int, *, vector_filters: bool) -> dict[str, SchemaStatement]:
    """Our vector indexes, by name, each with the statement that creates it."""
    if not isinstance(dimensions, int) or not 1 <= dimensions <= 4096:
        raise ValueError(f"embedding dimension must be an integer in 1..4096, got {dimensions!r}")
    return {
        spec.name: SchemaStatement(
            _vector_statement(spec, vector_filters=vector_filters),
            {"dimensions": dimensions},
        )
        for spec in VECTOR_INDEXES
    }


async def _check_dimensions(store: GraphStore, dimensions: int) -> None:
    rows = await store.run("vector_indexes")
    wrong = {r["name"]: r["dimensions"] for r in rows if r["dimensions"] not in (None, dimensions)}
    if wrong:
        raise SchemaMismatch(
            f"vector indexes {wrong} were built for another embedding dimension than the "
            f"model's {dimensions}; use a fresh database or the model they were built with"
        )


def _wanted_properties() -> dict[str, list[str]]:
    """Index name -> the properties it should cover (vector filter properties included)."""
    return {spec.name: spec.covered for spec in (*VECTOR_INDEXES, *TEXT_INDEXES)}


async def _drop_changed_indexes(store: GraphStore) -> tuple[set[str], set[str]]:
    """Indexes whose definition changed since they were created are dropped to be rebuilt;
    retired ones are dropped for good.

    Returns the indexes the statements will build (the dropped ones and the declared ones
    not there), and the names of every index that was there.
    """
    wanted = _wanted_properties()
    rows = await store.run("index_properties")
    present = {r["name"]: sorted(r["properties"] or []) for r in rows}
    changed = [n for n, props in present.items() if n in wanted and props != sorted(wanted[n])]
    for name in [*changed, *(n for n in RETIRED_INDEXES if n in present)]:
        await store.run("drop_index", index=name)
    return set(changed) | (wanted.keys() - present.keys()), set(present)


async def _scope_old_snippets(store: GraphStore) -> None:
    """Snippets stored before they carried a scope token get it, so full-text finds them.

    Only while ``snippet_text`` is (re)built: a scan of every snippet, not for each start.
    """
    for row in await store.run("snippet_projects_unscoped"):
        await store.run(
            "scope_snippets", project=row["project"], scope=project_scope(row["project"])
        )


_log = logging.getLogger(__name__)


class IndexesNotOnline(RuntimeError):
    """An index failed, or stopped populating while not yet online."""


@dataclass
class IndexWatch:
    """Whether the indexes still populating are moving: a 1M-episode store's vector index
    populates for well over five minutes (db.awaitIndexes' fixed timeout gave up at 300 s on
    a healthy build), so the wait ends only when every index is online, one failed, or none
    moved for ``stall_s``."""

    stall_s: float
    last: dict[str, float] | None = None
    moved_at: float = 0.0

    def see(self, rows: list[dict[str, Any]], now: float) -> dict[str, float]:
        """The indexes still populating (name -> percent); raises when one failed or
        nothing moved for ``stall_s``. ``now``: when the rows were asked for — the time
        SHOW INDEXES spent answering (it waits while an index flips online) is not time
        standing still."""
        failed = sorted(r["name"] for r in rows if r["state"] == "FAILED")
        if failed:
            raise IndexesNotOnline(
                f"index {', '.join(failed)} FAILED to populate: the server's debug.log "
                "says why; drop it and start again to rebuild it"
            )
        pending = {
            r["name"]: round(float(r["percent"] or 0.0), 1) for r in rows if r["state"] != "ONLINE"
        }
        if pending != self.last:
            self.last, self.moved_at = pending, now
        elif pending and now - self.moved_at >= self.stall_s:
            stuck = ", ".join(f"{n} at {p} %" for n, p in sorted(pending.items()))
            raise IndexesNotOnline(
                f"indexes not online and not moving for {self.stall_s:.0f} s: {stuck}"
            )
        return pending


async def await_indexes(
    store: GraphStore,
    stall_s: float = 300.0,
    on_progress: Callable[[dict[str, float]], None] | None = None,
    leave: Collection[str] = (),
) -> None:
    """Wait until every index is online, for as long as population moves (see IndexWatch);
    the indexes named in ``leave`` are not waited for (one that failed still raises)."""
    watch, pause = IndexWatch(stall_s), 0.02
    while True:
        before, asked = watch.last, time.monotonic()
        rows = await store.run("index_progress")
        rows = [r for r in rows if r["name"] not in leave or r["state"] == "FAILED"]
        pending = watch.see(rows, asked)
        if not pending:
            return
        if pending != before:
            _log.info("indexes populating: %s", pending)
            if on_progress is not None:
                on_progress(pending)
        await anyio.sleep(pause)
        pause = min(pause * 2, 2.0)


async def apply_schema(
    store: GraphStore,
    dimensions: int,
    timeout_s: int = 300,
    migrations: Sequence[Migration] = GRAPH_MIGRATIONS,
    later: Collection[str] = (),
    populating: Collection[str] = (),
) -> SchemaReport:
    """Create missing constraints and indexes, wait until every index is online (for as long
    as their population moves: ``timeout_s`` is how long one may stand still), then run the
    migrations the store has not had yet. ``later``: vector indexes not created this time;
    ``populating``: vector indexes created but not waited for (a bulk load's derive runs
    while episode_vectors populates; the next apply_schema waits for it)."""
    info = await store.server_info()
    await _check_dimensions(store, dimensions)
    if unknown := set(populating) - {spec.name for spec in VECTOR_INDEXES}:
        raise ValueError(f"only vector indexes can be left populating, not {sorted(unknown)}")
    statements = schema_for(dimensions, vector_filters=info.supports_vector_filters, later=later)
    building, present = await _drop_changed_indexes(store)
    if "snippet_text" in building:  # built before snippets carried their scope, or not yet
        await _scope_old_snippets(store)
    if "snippet_name_text" not in present:
        # names stored before ingest kept them short: one could fail its population
        await store.run("trim_long_snippet_names", chars=SNIPPET_NAME_CHARS)
    for statement in statements:
        await _create(store, statement.text, statement.params)
    await await_indexes(store, stall_s=timeout_s, leave=populating)
    migrated = await migrate(store, migrations, new_store_needs_none=True)
    rows = await store.run("index_states")
    return SchemaReport(
        statements=len(statements),
        indexes={r["name"]: r["state"] for r in rows},
        vector_filters=info.supports_vector_filters,
        migrations=migrated,
    )
