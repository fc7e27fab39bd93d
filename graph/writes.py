"""Write prepared memory to the graph: one transaction per batch, idempotent MERGEs."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from metisgraph.graph.cypher import Query
from metisgraph.graph.lineage.derive import derive_within
from metisgraph.graph.outcomes import recount_steps
from metisgraph.graph.situations import situation_step
from metisgraph.graph.store import GraphStore, Transaction

__all__ = [
    "WriteBatch",
    "existing_environment_keys",
    "existing_episode_hashes",
    "existing_error_keys",
    "write_batch",
]

Row = dict[str, Any]


@dataclass
class WriteBatch:
    """Rows ready for the write queries in cypher/write.cypher (plain data, no models)."""

    projects: set[str] = field(default_factory=set)
    tasks: list[Row] = field(default_factory=list)
    episodes: list[Row] = field(default_factory=list)
    # {project, id} of stored episodes recorded again with other content: the links derived
    # from their old content are removed before they are derived again.
    replaced: list[Row] = field(default_factory=list)
    errors: list[Row] = field(default_factory=list)
    error_links: list[Row] = field(default_factory=list)
    environments: list[Row] = field(default_factory=list)
    tools: list[Row] = field(default_factory=list)
    tags: list[Row] = field(default_factory=list)
    symbols: list[Row] = field(default_factory=list)
    chained_tasks: list[Row] = field(
        default_factory=list
    )  # {project, id} whose NEXT chain to refresh
    # Context rows (ingest/pipeline/neighbours.py) computed before the write; None: refresh after.
    contexts: list[Row] | None = field(default_factory=list)
    resolved_tasks: list[Row] = field(default_factory=list)  # {project, id} to memorize
    # {project, id} of episodes snippet records link to: their tasks' fixes are derived again.
    snippet_episodes: list[Row] = field(default_factory=list)
    # (project, bucket) of the errors new in this batch: their families are found after the
    # write (ingest/pipeline/families.py), when the bucket can be read back whole.
    family_buckets: set[tuple[str, str]] = field(default_factory=set)
    # (project, id) of the snippets written that may have moved what they were verified
    # with: where they are stale is judged after the write, in every environment they have
    # evidence in, with the environments the batch stores first (graph/staleness.py).
    snippets: set[tuple[str, str]] = field(default_factory=set)
    # (project, id, environment key) of stored snippets the batch used where nothing they
    # were verified with moved: judged only in those environments (ingest/pipeline/ingestor.py
    # judged_where); `snippets` above are judged in every environment they have evidence in.
    stale_pairs: set[tuple[str, str, str]] = field(default_factory=set)
    # (project, key) of the batch's environments not stored before it. A key hashes every
    # field and package, so an environment seen again moved nothing: judging every snippet
    # that requires one of its packages again at each batch grew with the store (20,000
    # pairs a batch at 100k episodes) and changed nothing.
    new_environments: set[tuple[str, str]] = field(default_factory=set)
    # {project, run, instance} of the runs judged by harness verdicts in this batch: their
    # submitted code is told the verdict at the end of the transaction (graph/outcomes.py).
    judged_runs: list[Row] = field(default_factory=list)
    # Further queries, in order: named, or with their slots filled (graph/outcomes.py).
    extra: list[tuple[str | Query, Row]] = field(default_factory=list)
    # Steps whose rows a bulk import wrote already (graph/bulk/graph.py IMPORTED): left out
    # of the plan; their rows still say what the steps after them look at.
    imported: frozenset[str] = frozenset()

    def steps(self) -> list[tuple[str | Query, dict[str, Any]]]:
        if self.imported:
            return [
                (q, p) for q, p in self._plan() if not (isinstance(q, str) and q in self.imported)
            ]
        return self._plan()

    def _plan(self) -> list[tuple[str | Query, dict[str, Any]]]:
        plan: list[tuple[str | Query, dict[str, Any]]] = []
        if self.projects:
            plan.append(("upsert_projects", {"projects": sorted(self.projects)}))
            plan.append(("touch_project", {"projects": sorted(self.projects)}))
        for name, key, rows in (
            ("upsert_tasks", "rows", self.tasks),
            ("unlink_replaced_errors", "rows", self.replaced),
            ("unlink_replaced_tools", "rows", self.replaced),
            ("unlink_replaced_episodes", "rows", self.replaced),
            ("unlink_replaced_situations", "rows", self.replaced),
            ("upsert_episodes", "rows", self.episodes),
            ("upsert_errors", "rows", self.errors),
            ("link_errors", "rows", self.error_links),
            ("upsert_environments", "rows", self.environments),
            ("upsert_tools", "rows", self.tools),
            ("upsert_tags", "rows", self.tags),
            ("upsert_symbols", "rows", self.symbols),
            ("link_task_chains", "tasks", self.chained_tasks),
            ("set_context", "rows", self.contexts or []),
        ):
            if rows:
                plan.append((name, {key: rows}))
            if name == "upsert_episodes":  # a new prior: the confidence is recounted
                plan.extend(recount_steps("Episode", self.replaced))
        plan.extend(self.extra)
        if self.resolved_tasks:
            plan.append(("memorize_resolution", {"tasks": self.resolved_tasks}))
        cited = self._cited()
        if cited:  # after the outcomes a resolution may have changed
            plan.append(("count_cited", cited))
        # Last: the code across the bridge and what resolved what are written by then.
        plan.extend(
            situation_step([{"project": r["project"], "id": r["id"]} for r in self.episodes])
        )
        return plan

    def _cited(self) -> dict[str, list[Row]] | None:
        """The citing steps to look at: the batch's episodes that cite memories, and every
        step of its tasks that ended in success (such a task counts what its steps cited)."""
        episodes = [{"project": r["project"], "id": r["id"]} for r in self.episodes
                    if r.get("props", {}).get("cites")]  # fmt: skip
        tasks = [{"project": r["project"], "id": r["id"]} for r in self.tasks
                 if _ended_well(r.get("props", {}))]  # fmt: skip
        return {"episodes": episodes, "tasks": tasks} if episodes or tasks else None


def _ended_well(task: Row) -> bool:
    return task.get("status") == "resolved" or task.get("outcome") == "success"


def in_turn(
    *steps: Callable[[Transaction], Awaitable[object]] | None,
) -> Callable[[Transaction], Awaitable[object]] | None:
    """Several last steps of a write transaction as one ``then``, run in the order given."""
    present = [step for step in steps if step is not None]
    if not present:
        return None

    async def run(tx: Transaction) -> None:
        for step in present:
            await step(tx)

    return run


async def write_batch(
    store: GraphStore,
    batch: WriteBatch,
    then: Callable[[Transaction], Awaitable[object]] | None = None,
) -> None:
    """The batch in one transaction; then the attribution links of the tasks it touches
    (graph/lineage/derive.py) and ``then`` (work that reads the batch back), in it too."""
    steps = batch.steps()
    then = in_turn(derive_within(batch.chained_tasks, batch.snippet_episodes), then)
    if steps or then is not None:
        await store.write_many(steps, then)


async def existing_episode_hashes(store: GraphStore, keys: list[Row]) -> dict[tuple[str, str], str]:
    """(project, id) -> content hash for the episodes already stored."""
    if not keys:
        return {}
    rows = await store.run("existing_episode_hashes", keys=keys)
    return {(r["project"], r["id"]): r["content_hash"] for r in rows}


async def existing_error_keys(store: GraphStore, keys: list[Row]) -> set[tuple[str, str]]:
    """(project, key) of the errors already stored with an embedding."""
    if not keys:
        return set()
    rows = await store.run("existing_error_keys", keys=keys)
    return {(r["project"], r["key"]) for r in rows}


async def existing_environment_keys(store: GraphStore, keys: list[Row]) -> set[tuple[str, str]]:
    """(project, key) of the environments already stored."""
    if not keys:
        return set()
    rows = await store.run("existing_environment_keys", keys=keys)
    return {(r["project"], r["key"]) for r in rows}
