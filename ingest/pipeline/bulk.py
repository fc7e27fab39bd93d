"""The bulk path: the pipeline's own batches, their stored rows written as import files.

`write_files` runs every batch through the pipeline's preparation (validate, sanitize,
extract, embed) and hands its `WriteBatch` to the bulk writer (graph/bulk/graph.py), which
turns the rows of the steps it carries (projects, tasks, episodes and their vectors,
errors and sightings, environments, tools, tags, symbols) into node and relationship files
for `neo4j-admin database import`; after the last batch, each chained task's context
vectors too (its texts kept for the derive to set). What each batch leaves to do — its
plan: chains, resolution, citations, verdicts, code, attribution links, situations,
families, staleness — is kept on disk, one file a batch. After the import `derive` runs
those plans in the same order through the pipeline's own write step (`write_batch`, the
imported steps left out), then recounts the errors' and tools' kept counts with their own
statements.

A record the pipeline would refuse is refused the same way (dead letter, reason); an
episode id met again in a later batch is refused too: the files hold one version of each
node (load it again through `metisgraph ingest`, which replaces it).
"""

from __future__ import annotations

import asyncio
import os
import pickle
from collections import defaultdict, deque
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, cast

import numpy as np

from metisgraph.graph import (
    IMPORTED,
    BulkChunks,
    BulkGraph,
    BulkTables,
    GraphStore,
    Vector,
    WriteBatch,
    apply_schema,
    in_turn,
    verdict_feedback_within,
    write_batch,
)
from metisgraph.ingest.adapters.base import Refused, refuse
from metisgraph.ingest.embeddings import Embedder
from metisgraph.ingest.pipeline.batches import Batch, Done, Item, batches
from metisgraph.ingest.pipeline.bulk_workers import Workers, last_versions
from metisgraph.ingest.pipeline.families import assign_families
from metisgraph.ingest.pipeline.ingestor import Ingestor, stage_snippets
from metisgraph.ingest.pipeline.neighbours import TEXT_CHARS, chain_order, context_rows
from metisgraph.ingest.pipeline.rows import error_row
from metisgraph.ingest.pipeline.summary import DeadLetter, IngestRun, IngestSummary
from metisgraph.ingest.prepare.episode import PreparedEpisode, PreparedTask
from metisgraph.ingest.records import TaskStatus
from metisgraph.ingest.snippets.batch import (
    PreparedSnippet,
    prepare_snippets,
)

__all__ = ["BulkFiles", "BulkIngestor"]

Row = dict[str, Any]
_RECOUNT_PAGE = 2000
_CONTEXT_PAGE = 20_000  # context rows a file of texts (and a formatting job) holds
# The vector indexes the derive never searches are not written into by it either: an HNSW
# insert into a populated index lands in a small segment of its own, and a search walks
# every segment (24 segments at 100k when the derive wrote the context vectors into
# episode_vectors: one search p50 6.5 ms against 3.0 for one; docs/benchmarks.md). Every
# vector of episode_vectors is in the import files (the context vectors too: `_Chains`),
# so it populates beside the derive, over all of them, merged into one segment, and is
# waited for at the derive's end; the merge holds writes while it runs (55 s at 100k, ~14
# min at 1M), which the derive's store must outlast (its timeout). The snippets' vectors
# are written by the derive: snippet_embedding is built after it, populated whole.
BESIDE_DERIVE = ("episode_vectors",)
AFTER_DERIVE = ("snippet_embedding",)


@dataclass
class BulkFiles:
    """What `write_files` made: the import's arguments, the plans, the counts."""

    folder: Path
    arguments: list[str]
    plans: list[Path]
    counts: dict[str, int]
    summary: IngestSummary
    seconds: float = 0.0
    tools: list[Row] = field(default_factory=list)
    empty_lists: dict[str, list[Row]] = field(default_factory=dict)
    # files of {project, id, text}: the context texts to set after the import (the vectors
    # are in the import files)
    contexts: list[Path] = field(default_factory=list)


class _Chains:
    """Each task's embedded episodes as the load meets them, for the context rows that
    `refresh_within` would compute after the last batch (the stored steps, in the graph's
    chain order): what the derive read back and wrote for every chained task of each batch
    (`task_neighbourhoods`, `set_context`), computed once here over the whole load. A step
    is held as its vector (float32, as `context_rows` reads it) and the head of its summary
    the context text keeps."""

    def __init__(self, now: datetime) -> None:
        self.now = now
        self.steps: defaultdict[tuple[str, str], list[tuple[Any, ...]]] = defaultdict(list)

    def add(self, episodes: list[Row]) -> None:
        for row in episodes:  # an episode row as upsert_episodes (graph/bulk/graph.py) reads it
            task, vector = row.get("task_id"), row.get("embedding")
            if task is None or vector is None:
                continue
            props = row["props"]
            when = row.get("created_at") or self.now
            summary = props.get("summary")
            self.steps[row["project"], task].append(
                (chain_order(props.get("step"), when, row["id"]), row["id"],
                 summary[:TEXT_CHARS] if summary else None, np.asarray(vector, np.float32))
            )  # fmt: skip

    def rows(self) -> Iterator[Row]:
        """The context rows of every chain of two steps or more, task by task."""
        for (project, _), steps in sorted(self.steps.items(), key=lambda kv: kv[0]):
            if len(steps) < 2:
                continue
            steps.sort(key=lambda step: step[0])
            chain = [{"project": project, "id": ident, "summary": summary, "embedding": vector}
                     for _, ident, summary, vector in steps]  # fmt: skip
            yield from context_rows(chain)


@dataclass
class _Plan:
    """One batch's work after the import (no vectors: they are in the files)."""

    projects: set[str]
    tasks: list[PreparedTask]
    episodes: list[Row]  # {project, id, props: {cites}} for situations and citations
    chained_tasks: list[Row]
    family_buckets: set[tuple[str, str]]
    new_environments: set[tuple[str, str]]
    snippets: list[PreparedSnippet]
    snippet_episodes: list[Row]
    batch: Batch  # its verdicts (the rest of its records are not kept)
    # {project, key, episode_ids}: where the batch's episodes ran, for `judged_where`
    environments: list[Row] = field(default_factory=list)


class BulkIngestor(Ingestor):
    """The pipeline's preparation, writing import files instead of transactions."""

    def __init__(
        self,
        embedder: Embedder,
        *,
        batch_size: int = 1024,
        keep_details: bool = False,
        workers: int | None = None,
    ) -> None:
        # No store until `derive`: the files are written while there is no database yet.
        super().__init__(cast("GraphStore", None), embedder, batch_size=batch_size,
                         keep_details=keep_details)  # fmt: skip
        # processes preparing batches and formatting rows (0: all in this one)
        self.workers = (os.cpu_count() or 1) if workers is None else workers

    async def write_files(
        self,
        items: Iterable[Item],
        folder: Path,
        *,
        dead_letter: DeadLetter | None = None,
        on_progress: Callable[[int], None] | None = None,
    ) -> BulkFiles:
        run = IngestRun(IngestSummary(), False, dead_letter, on_progress)
        graph = BulkGraph(BulkTables(folder / "import"))
        plans: list[Path] = []
        known_errors: set[tuple[str, str]] = set()
        known_envs: set[tuple[str, str]] = set()
        chains = _Chains(graph.now)
        workers = Workers(self.workers)
        formatting: deque[asyncio.Future[BulkChunks]] = deque()
        model = self.embedder.settings.model
        try:
            async for prepared in workers.prepared(
                batches(items, self.batch_size, run.refused), model
            ):
                batch, tasks, snippets = prepared.batch, prepared.tasks, prepared.snippets
                for item in prepared.unprepared:
                    run.refused(item)
                episodes = self._once(batch, prepared.episodes, graph.episodes, run)
                if len(episodes) != len(last_versions(prepared.episodes)):
                    snippets = prepare_snippets(episodes, batch.snippets)  # some refused
                write = WriteBatch(
                    projects={t.project for t in tasks} | {e.project for e in episodes}
                )
                write.tasks = [t.row() for t in tasks]
                await self._add_episodes(write, episodes)
                await self._bulk_errors(write, episodes, known_errors)
                keys = {(r["project"], r["key"]) for r in write.environments}
                write.new_environments = keys - known_envs
                known_envs |= keys
                write.projects |= {s.project for s in snippets}
                graph.add(write)
                formatting.append(workers.format(graph.tables.take()))
                while len(formatting) > 1 or (formatting and formatting[0].done()):
                    graph.tables.write(await formatting.popleft())
                plans.append(self._keep(folder, len(plans), write, tasks, snippets, batch))
                run.stored(Done(tasks, episodes, episodes, batch, snippets), write)
                chains.add(write.episodes)
            contexts = await self._chain_contexts(chains, graph, workers, formatting, folder)
            while formatting:
                graph.tables.write(await formatting.popleft())
        finally:
            for pending in formatting:
                pending.cancel()
            workers.close()
        counts = graph.finish()
        tools = [{"project": p, "name": n} for p, n in graph.tools]
        args = list(graph.tables.arguments())
        return BulkFiles(
            folder, args, plans, counts, run.summary, tools=tools, empty_lists=graph.empty_lists,
            contexts=contexts,
        )  # fmt: skip

    @staticmethod
    async def _chain_contexts(
        chains: _Chains, graph: BulkGraph, workers: Workers,
        formatting: deque[asyncio.Future[BulkChunks]], folder: Path,
    ) -> list[Path]:  # fmt: skip
        """The context vectors into the import files (formatted by the workers, a page at a
        time) and the context texts into files of their own, for the derive to set."""
        paths: list[Path] = []
        page: list[Row] = []

        async def flush() -> None:
            graph.add_contexts(page)
            formatting.append(workers.format(graph.tables.take()))
            while len(formatting) > 1:
                graph.tables.write(await formatting.popleft())
            path = folder / "contexts" / f"{len(paths):06d}.pickle"
            path.parent.mkdir(parents=True, exist_ok=True)
            texts = [{"project": r["project"], "id": r["id"], "text": r["text"]} for r in page]
            path.write_bytes(pickle.dumps(texts, protocol=pickle.HIGHEST_PROTOCOL))
            paths.append(path)
            page.clear()

        for row in chains.rows():
            page.append(row)
            if len(page) >= _CONTEXT_PAGE:
                await flush()
        if page:
            await flush()
        return paths

    @staticmethod
    def _once(
        batch: Batch, episodes: list[PreparedEpisode], stored: set[tuple[str, str]],
        run: IngestRun,
    ) -> list[PreparedEpisode]:  # fmt: skip
        """The batch's episodes, each id once (its last version, as the pipeline stores it);
        one an earlier batch of the load holds already is refused with the reason."""
        last = {(e.project, e.id): e for e in episodes}
        kept = []
        for key, episode in last.items():
            if key in stored:
                record = next(r for r in batch.episodes if r.id == episode.id)
                run.refused(_again(batch, record, episode))
                continue
            kept.append(episode)
        return kept

    async def _bulk_errors(
        self, write: WriteBatch, episodes: list[PreparedEpisode], known: set[tuple[str, str]]
    ) -> None:
        """As `Ingestor._add_errors`, with the errors of the load's earlier batches as the
        stored ones (the store is empty until the import)."""
        now = datetime.now(UTC)
        distinct: dict[tuple[str, str], tuple[Any, datetime]] = {}
        for ep in episodes:
            for error in ep.errors:
                distinct.setdefault((ep.project, error.key), (error, ep.created_at or now))
                write.error_links.append({"project": ep.project, "episode_id": ep.id,
                                          "key": error.key})  # fmt: skip
        fresh = [key for key in distinct if key not in known]
        known.update(fresh)
        write.family_buckets = {(p, distinct[p, k][0].family_shape().bucket) for p, k in fresh}
        vectors = await self.embedder.aencode(
            [f"{distinct[k][0].kind}: {distinct[k][0].template}" for k in fresh]
        )
        embedded = {k: Vector(v.tolist()) for k, v in zip(fresh, vectors, strict=True)}
        write.errors = [
            error_row(project, error, seen, embedded.get((project, key)))
            for (project, key), (error, seen) in distinct.items()
        ]

    @staticmethod
    def _keep(
        folder: Path, n: int, write: WriteBatch, tasks: list[PreparedTask],
        snippets: list[PreparedSnippet], batch: Batch,
    ) -> Path:  # fmt: skip
        records = [r for r in batch.snippets if r.episode_id]
        plan = _Plan(
            projects=write.projects,
            tasks=tasks,
            episodes=[
                {
                    "project": r["project"],
                    "id": r["id"],
                    "props": {"cites": r["props"].get("cites")},
                }
                for r in write.episodes
            ],
            chained_tasks=write.chained_tasks,
            family_buckets=write.family_buckets,
            new_environments=write.new_environments,
            snippets=snippets,
            snippet_episodes=[{"project": r.project, "id": r.episode_id} for r in records],
            batch=Batch(verdicts=batch.verdicts, snippets=batch.snippets),
            environments=[
                {"project": r["project"], "key": r["key"], "episode_ids": r["episode_ids"]}
                for r in write.environments
            ],
        )
        path = folder / "plans" / f"{n:06d}.pickle"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(pickle.dumps(plan, protocol=pickle.HIGHEST_PROTOCOL))
        return path

    # -- after the import ----------------------------------------------------------------
    async def derive(
        self,
        files: BulkFiles,
        store: GraphStore,
        after_plan: Callable[[int, int], None] | None = None,
    ) -> None:
        """The context texts, then every batch's plan in order over the imported graph
        (``store``), then the error families and the kept counts. ``after_plan(index,
        episodes)`` after each plan (a build's progress: the derive's cost per batch as the
        store fills).

        The schema is applied first, without waiting for BESIDE_DERIVE's indexes (they
        populate while the derive runs) and without AFTER_DERIVE's (built last, over
        everything the derive wrote); every index is online when it returns. ``store``'s
        timeout must outlast a vector index's final merge, which holds writes (~14 min at
        1M): the batch timeout."""
        from metisgraph.ingest.migrations import MIGRATIONS  # (it imports this package)

        self.store = store
        dimension = self.embedder.dimension
        await apply_schema(
            store, dimension, migrations=MIGRATIONS, later=AFTER_DERIVE, populating=BESIDE_DERIVE
        )
        for label, rows in files.empty_lists.items():
            for start in range(0, len(rows), _RECOUNT_PAGE):
                page = rows[start : start + _RECOUNT_PAGE]
                await store.run(f"bulk_empty_lists_{label.lower()}", rows=page)
        for path in files.contexts:
            texts: list[Row] = pickle.loads(path.read_bytes())  # noqa: S301 - written above
            for start in range(0, len(texts), _RECOUNT_PAGE):
                await store.run("bulk_context_text", rows=texts[start : start + _RECOUNT_PAGE])
        buckets: set[tuple[str, str]] = set()
        for index, path in enumerate(files.plans):
            plan: _Plan = pickle.loads(path.read_bytes())  # noqa: S301 - written by write_files
            await self._derive(plan, files.summary)
            buckets |= plan.family_buckets
            if after_plan is not None:
                after_plan(index, len(plan.episodes))
        # Families once, over every bucket: every error is imported already, so a bucket's
        # first batch found them all (the later ones read it whole again, 22 s at 100k), and
        # no write step reads a family (cypher/families.cypher alone writes them).
        if buckets:
            await assign_families(self.store, buckets)
        await self.store.run("migrate_error_counts")
        await self.store.run("migrate_error_totals")  # each project's totals, from the counts
        await self.store.run("migrate_project_sizes", project=None)  # and sizes, from the nodes
        for start in range(0, len(files.tools), _RECOUNT_PAGE):
            await self.store.run("recount_tools", rows=files.tools[start : start + _RECOUNT_PAGE])
        await apply_schema(store, dimension, migrations=MIGRATIONS)  # the rest, all online

    async def _derive(self, plan: _Plan, summary: IngestSummary) -> None:
        write = WriteBatch(projects=set(plan.projects), imported=IMPORTED)
        write.tasks = [t.row() for t in plan.tasks]
        write.episodes = plan.episodes
        write.chained_tasks = plan.chained_tasks
        write.contexts = []  # in the import files, and set before the plans
        write.family_buckets = plan.family_buckets
        write.new_environments = plan.new_environments
        await self._snippets(write, plan)
        done = Done(plan.tasks, [], [], plan.batch, plan.snippets)
        resolved = {(t.project, t.id) for t in plan.tasks
                    if t.props["status"] == TaskStatus.resolved}  # fmt: skip
        resolved |= {(k["project"], k["id"]) for k in write.chained_tasks}
        resolved |= await self._add_verdicts(write, done, summary)
        write.resolved_tasks = [{"project": p, "id": i} for p, i in sorted(resolved)]
        feedback = verdict_feedback_within(write.judged_runs) if write.judged_runs else None
        await write_batch(self.store, write, then=in_turn(feedback))
        await self._staleness(write)

    async def _snippets(self, write: WriteBatch, plan: _Plan) -> None:
        """As `Ingestor._add_snippets`, from the snippets prepared with the files; where they
        are judged again as the pipeline would have said with this batch's own rows (its
        episodes and their environments, which the import wrote: the write step's rows
        leave them out)."""
        rows = WriteBatch(projects=set(plan.projects))
        rows.episodes, rows.environments = plan.episodes, plan.environments
        await stage_snippets(
            self.store, self.embedder, write, plan.snippets, plan.snippet_episodes, rows
        )


def _again(batch: Batch, record: Any, episode: PreparedEpisode) -> Refused:
    raw = record.model_dump(mode="json", exclude_defaults=True)
    reason = (
        f"episode {episode.id} is in this bulk load twice: the files hold one version of "
        "each; ingest the later one through the pipeline (`metisgraph ingest`)"
    )
    return refuse(batch.ref(record), raw, "id", reason)


def plan_paths(folder: Path) -> Iterator[Path]:
    yield from sorted((folder / "plans").glob("*.pickle"))
