"""The bulk writer: a write batch's rows as import files, by the rules of cypher/write.cypher.

The pipeline builds one `WriteBatch` per batch and runs its steps as Cypher. A bulk load
builds the same batches; the steps named in `IMPORTED` are not run but turned into nodes
and relationships here, each method below mirroring its statement (what it MERGEs, what it
sets on creation, what a later row changes); the other steps (chains, context, resolution,
citations, verdicts, code, attribution, situations, families, staleness, the kept counts)
are run by the pipeline's own statements over the imported graph
(ingest/pipeline/bulk.py). `tests/test_bulk.py` holds the two to the same digest and checks
these names against the statements.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from metisgraph.graph.bulk.tables import BulkTables, node_id
from metisgraph.graph.writes import WriteBatch

__all__ = ["IMPORTED", "IMPORTED_LABELS", "IMPORTED_TYPES", "BulkGraph"]

Row = dict[str, Any]

# The write steps whose rows the files carry (cypher/write.cypher, error_counts.cypher for
# the HIT links; the counts are recounted after the import by migration 7's statement).
IMPORTED = frozenset(
    {
        "upsert_projects",
        "touch_project",
        "upsert_tasks",
        "upsert_episodes",
        "upsert_errors",
        "link_errors",
        "upsert_environments",
        "upsert_tools",
        "upsert_tags",
        "upsert_symbols",
    }
)
IMPORTED_LABELS = frozenset(
    {
        "Project",
        "Task",
        "Episode",
        "EpisodeVector",
        "Error",
        "Environment",
        "Package",
        "Tool",
        "Tag",
        "Symbol",
    }
)
IMPORTED_TYPES = frozenset(
    {
        "HAS_TASK",
        "HAS_EPISODE",
        "HIT",
        "IN_ENV",
        "HAS_PACKAGE",
        "USED_TOOL",
        "TAGGED",
        "MENTIONS",
    }
)


def _merge(props: Row, changes: Mapping[str, Any]) -> None:
    """`SET n += changes`: a null removes the property."""
    for key, value in changes.items():
        if value is None:
            props.pop(key, None)
        else:
            props[key] = value


@dataclass
class _Environment:
    props: Row
    packages: dict[str, str | None] = field(default_factory=dict)


@dataclass
class BulkGraph:
    """Write batches in, import files out. Episodes stream; the nodes many episodes share
    are held (merged as MERGE and SET would) and written by ``finish``."""

    tables: BulkTables
    now: datetime = field(default_factory=lambda: datetime.now(UTC))
    projects: set[str] = field(default_factory=set)
    tasks: dict[tuple[str, str], Row] = field(default_factory=dict)
    episodes: set[tuple[str, str]] = field(default_factory=set)
    errors: dict[tuple[str, str], Row] = field(default_factory=dict)
    environments: dict[tuple[str, str], _Environment] = field(default_factory=dict)
    tools: dict[tuple[str, str], Row] = field(default_factory=dict)
    tags: dict[tuple[str, str], Row] = field(default_factory=dict)
    symbols: set[tuple[str, str]] = field(default_factory=set)
    # label -> {project, key, props: {name: []}}: the empty lists to set after the import
    empty_lists: dict[str, list[Row]] = field(default_factory=dict)

    def add(self, batch: WriteBatch) -> None:
        """The imported steps of one batch, in the order `WriteBatch.steps` runs them."""
        if batch.replaced:
            raise ValueError("a bulk load writes new episodes only")
        self.projects |= batch.projects
        for row in batch.tasks:
            self._upsert_task(row)
        created: dict[tuple[str, str], datetime] = {}
        for row in batch.episodes:
            created[row["project"], row["id"]] = self._upsert_episode(row)
        for row in batch.errors:
            self._upsert_error(row)
        for row in batch.error_links:  # link_errors: the error and the episode's time on it
            project, key = row["project"], row["key"]
            self.tables.edge(
                "HIT",
                node_id("Episode", project, row["episode_id"]),
                node_id("Error", project, key),
                {"project": project, "error": key, "at": created[project, row["episode_id"]]},
            )
        for row in batch.environments:
            self._upsert_environment(row)
        for row in batch.tools:
            # ON CREATE SET t.kind; the statistics are recounted after the import
            self.tools.setdefault((row["project"], row["name"]), {"kind": row["kind"]})
            self._links("USED_TOOL", "Tool", row)
        for row in batch.tags:
            self.tags.setdefault((row["project"], row["name"]), {"value": row["value"]})
            self._links("TAGGED", "Tag", row)
        for row in batch.symbols:
            self.symbols.add((row["project"], row["name"]))
            self._links("MENTIONS", "Symbol", row)

    # -- upsert_tasks ------------------------------------------------------------------
    def _upsert_task(self, row: Row) -> None:
        props = self.tasks.setdefault((row["project"], row["id"]), {"recorded_at": self.now})
        _merge(props, row["props"])

    # -- upsert_episodes -----------------------------------------------------------------
    def _upsert_episode(self, row: Row) -> datetime:
        project, ident = row["project"], row["id"]
        if (project, ident) in self.episodes:
            raise ValueError(f"episode {ident} of {project} is in the load twice")
        self.episodes.add((project, ident))
        given: Row = row["props"]
        props: Row = {
            "recorded_at": self.now,
            "uses": 0,
            "successes": 0,
            "failures": 0,
            "review_status": row["review_status"],
            "active_at": self.now,
            "confidence": given.get("prior_confidence"),
        }
        _merge(props, given)
        props["cites"] = given.get("cites")
        props["details"] = row.get("details")
        props["created_at"] = row.get("created_at") or self.now
        props["embedding"] = row.get("embedding")
        review = props.get("review_status") or row["review_status"]
        props["recallable"] = review != "rejected"
        self._node("Episode", project, ident, props, "id")
        for of, vector in (("text", row.get("embedding")), ("title", row.get("title_embedding"))):
            if vector is not None:
                self._plain(
                    "EpisodeVector",
                    node_id("EpisodeVector", project, ident, of),
                    {"project": project, "episode": ident, "of": of, "embedding": vector},
                )
        task = row.get("task_id")
        if task is not None:
            self.tasks.setdefault((project, task), {"recorded_at": self.now, "status": "open"})
            self.tables.edge(
                "HAS_EPISODE", node_id("Task", project, task), node_id("Episode", project, ident)
            )
        created: datetime = props["created_at"]
        return created

    # -- set_context (its vector; the text is set after the import) ----------------------
    def add_contexts(self, rows: list[Row]) -> None:
        """Context rows (ingest/pipeline/neighbours.py) of the load's chains, computed once
        over every batch: each vector an EpisodeVector of 'context', as set_context MERGEs it."""
        for row in rows:
            project, ident = row["project"], row["id"]
            if (project, ident) not in self.episodes:
                raise ValueError(f"a context for episode {ident} of {project}, not in the load")
            self._plain(
                "EpisodeVector",
                node_id("EpisodeVector", project, ident, "context"),
                {"project": project, "episode": ident, "of": "context", "embedding": row["vector"]},
            )

    # -- upsert_errors -------------------------------------------------------------------
    _ON_CREATE = ("kind", "category", "signature", "template", "frames", "symbols",
                  "frames_text", "sample", "family_bucket", "family_tokens")  # fmt: skip

    def _upsert_error(self, row: Row) -> None:
        key = (row["project"], row["key"])
        props = self.errors.get(key)
        seen = row["seen"]
        if props is None:
            props = {name: row.get(name) for name in self._ON_CREATE}
            props.update(first_seen=seen, last_seen=seen)
            self.errors[key] = props
        if seen < props["first_seen"]:
            props["first_seen"] = seen
        if seen > props["last_seen"]:
            props["last_seen"] = seen
        if row.get("embedding") is not None:
            props["embedding"] = row["embedding"]

    # -- upsert_environments -------------------------------------------------------------
    def _upsert_environment(self, row: Row) -> None:
        key = (row["project"], row["key"])
        env = self.environments.setdefault(key, _Environment({}))
        env.props.update(
            {
                name: row.get(name)
                for name in ("os", "os_version", "arch", "runtime", "runtime_version")
            }
        )
        env.props["package_count"] = len(row["packages"])
        for package in row["packages"]:
            env.packages[package["name"]] = package.get("version")
        self._links("IN_ENV", "Environment", row, row["key"])

    def _node(self, label: str, project: str, key: str, props: Row, name: str) -> None:
        """A node keyed by (project, ``name``): written, its empty lists kept for after."""
        ident = node_id(label, project, key)
        empty = self.tables.node(label, ident, {**props, "project": project, name: key})
        if empty:
            self.empty_lists.setdefault(label, []).append(
                {"project": project, "key": key, "props": {n: [] for n in empty}}
            )

    def _plain(self, label: str, ident: str, props: Row) -> None:
        if self.tables.node(label, ident, props):
            raise ValueError(f"a {label} with an empty list: set it after the import")

    def _links(self, kind: str, label: str, row: Row, key: str | None = None) -> None:
        target = node_id(label, row["project"], key if key is not None else row["name"])
        for episode in row["episode_ids"]:
            self.tables.edge(kind, node_id("Episode", row["project"], episode), target)

    # -- the shared nodes, once ----------------------------------------------------------
    def finish(self) -> dict[str, int]:
        """Write the held nodes and their links, close the files; the counts per name."""
        t = self.tables
        for name in sorted(self.projects):
            self._plain("Project", node_id("Project", name),
                   {"name": name, "created_at": self.now, "active_at": self.now})  # fmt: skip
        for (project, ident), props in self.tasks.items():
            self._node("Task", project, ident, props, "id")
            t.edge("HAS_TASK", node_id("Project", project), node_id("Task", project, ident))
        for (project, key), props in self.errors.items():
            self._node("Error", project, key, props, "key")
        for (project, key), env in self.environments.items():
            ident = node_id("Environment", project, key)
            self._plain("Environment", ident, {**env.props, "project": project, "key": key})
            for name, version in env.packages.items():
                package = node_id("Package", project, name)
                t.edge("HAS_PACKAGE", ident, package, {"version": version})
        for project, name in self._packages():
            self._plain("Package", node_id("Package", project, name),
                   {"project": project, "name": name})  # fmt: skip
        for (project, name), props in self.tools.items():
            self._plain("Tool", node_id("Tool", project, name),
                   {**props, "project": project, "name": name})  # fmt: skip
        for (project, name), props in self.tags.items():
            self._plain("Tag", node_id("Tag", project, name),
                   {**props, "project": project, "name": name})  # fmt: skip
        for project, name in self.symbols:
            self._plain("Symbol", node_id("Symbol", project, name),
                   {"project": project, "name": name})  # fmt: skip
        t.close()
        return t.counts()

    def _packages(self) -> set[tuple[str, str]]:
        return {(p, name) for (p, _), env in self.environments.items() for name in env.packages}
