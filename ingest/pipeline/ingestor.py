"""The one ingest pipeline: validate → sanitize → extract → embed → write, in batches.

Files, the CLI and GraphQL all come through here. A refused record never stops a
batch; it is counted, reported with its file, line and field, and kept in the
dead-letter file when one is given.
"""

from __future__ import annotations

import asyncio
from collections import defaultdict
from collections.abc import Callable, Iterable
from datetime import UTC, datetime
from typing import Any

import anyio

from metisgraph.graph import (
    GraphStore,
    Vector,
    WriteBatch,
    existing_environment_keys,
    existing_episode_hashes,
    existing_error_keys,
    in_turn,
    refresh_staleness,
    refused_data,
    verdict_feedback_within,
    write_batch,
)
from metisgraph.ingest.embeddings import Embedder
from metisgraph.ingest.pipeline.batches import (
    Batch,
    Done,
    Item,
    PrepareAhead,
    batches,
    prepare_batch,
)
from metisgraph.ingest.pipeline.families import assign_families
from metisgraph.ingest.pipeline.neighbours import chain_contexts, refresh_within
from metisgraph.ingest.pipeline.rows import error_row, group_rows
from metisgraph.ingest.pipeline.summary import DeadLetter, IngestRun, IngestSummary
from metisgraph.ingest.prepare.episode import PreparedEpisode, PreparedTask
from metisgraph.ingest.prepare.verdicts import run_key, verdict_row
from metisgraph.ingest.records import SnippetRecord, TaskStatus
from metisgraph.ingest.snippets.batch import (
    PreparedSnippet,
    place_versions,
    prepare_snippets,
    snippet_write_steps,
    snippets_to_embed,
)

__all__ = ["Ingestor"]


class Ingestor:
    """Runs records through the pipeline and writes them, one transaction per batch."""

    def __init__(
        self,
        store: GraphStore,
        embedder: Embedder,
        *,
        batch_size: int = 256,
        keep_details: bool = False,
    ) -> None:
        self.store = store
        self.embedder = embedder
        self.batch_size = batch_size
        # Keep the originals behind placeholders (admin-only, never exported or embedded)?
        self.keep_details = keep_details

    async def ingest(
        self,
        items: Iterable[Item],
        *,
        dead_letter: DeadLetter | None = None,
        on_progress: Callable[[int], None] | None = None,
        keep_results: bool = False,
    ) -> IngestSummary:
        run = IngestRun(IngestSummary(), keep_results, dead_letter, on_progress)
        # A pipeline: while batch n is written, batch n+1 is embedded and batch n+2 prepared,
        # so the model, Neo4j and the Python work overlap. What must see batch n stored (error
        # and snippet state, versions, the neighbours of chained steps) waits for its write.
        writing: asyncio.Task[None] | None = None
        in_flight: set[tuple[str, str]] = set()
        ahead = PrepareAhead(batches(items, self.batch_size, run.refused), self.embedder)
        try:
            async for batch, tasks, episodes, unprepared in ahead:
                for item in unprepared:
                    run.refused(item)
                keys = {(e.project, e.id) for e in episodes}
                if writing is not None and keys & in_flight:
                    await writing  # the same episode again: compare with what was just written
                write, changed = await self._embed_episodes(tasks, episodes)
                if writing is not None:
                    await writing
                done = Done(tasks, episodes, changed, batch)
                await self._complete(write, done, run.summary)
                writing = asyncio.create_task(self._write(write, done, run))
                in_flight = keys
            if writing is not None:
                await writing
        finally:
            if writing is not None and not writing.done():
                writing.cancel()
            await ahead.aclose()
        return run.summary

    async def _embed_episodes(
        self, tasks: list[PreparedTask], episodes: list[PreparedEpisode]
    ) -> tuple[WriteBatch, list[PreparedEpisode]]:
        """The episodes that changed, embedded (runs while the previous batch is written).

        An id recorded several times in the batch is stored as its last version, alone: the
        earlier ones would leave their links (tools, tags, errors) beside it, and comparing
        each with the stored version would drop a last one equal to it (A stored; B, A)."""
        existing = await existing_episode_hashes(
            self.store, [{"project": e.project, "id": e.id} for e in episodes]
        )
        last = {(e.project, e.id): e for e in episodes}
        changed = [e for key, e in last.items() if existing.get(key) != e.content_hash]
        write = WriteBatch(projects={t.project for t in tasks} | {e.project for e in episodes})
        write.tasks = [t.row() for t in tasks]
        write.replaced = [
            {"project": e.project, "id": e.id} for e in changed if (e.project, e.id) in existing
        ]
        await self._add_episodes(write, changed)
        return write, changed

    async def _complete(self, write: WriteBatch, done: Done, summary: IngestSummary) -> None:
        """Errors, code and context: what depends on the batches before being stored."""
        await self._add_errors(write, done.changed)
        await self._add_new_environments(write)
        done.snippets = await self._add_snippets(write, done.changed, done.batch.snippets)
        # Memorize when a task ends resolved, whether the task or its last episodes come later:
        # the query itself only acts on tasks whose status is resolved.
        resolved = {
            (t.project, t.id) for t in done.tasks if t.props["status"] == TaskStatus.resolved
        }
        resolved |= {(k["project"], k["id"]) for k in write.chained_tasks}
        resolved |= await self._add_verdicts(write, done, summary)
        write.resolved_tasks = [{"project": p, "id": i} for p, i in sorted(resolved)]
        write.contexts = await self._contexts(write, done.changed)

    async def _add_new_environments(self, write: WriteBatch) -> None:
        keys = [{"project": r["project"], "key": r["key"]} for r in write.environments]
        known = await existing_environment_keys(self.store, keys)
        write.new_environments = {(k["project"], k["key"]) for k in keys} - known

    async def _add_verdicts(
        self, write: WriteBatch, done: Done, summary: IngestSummary
    ) -> set[tuple[str, str]]:
        """Harness verdicts and the tasks they judge, whichever came first: the verdicts are
        written and applied to the tasks of their run and instance (those of this batch
        too). Returns the judged tasks, whose resolution is memorized in the same write."""
        rows = [verdict_row(v) for v in done.batch.verdicts]
        keys = [{k: r[k] for k in ("project", "run", "instance")} for r in rows]
        keys += [
            run_key(t.project, t.props["run"], t.props["instance"])
            for t in done.tasks
            if t.props.get("run") and t.props.get("instance")
        ]
        if not keys:
            return set()
        if rows:
            write.extra.append(("upsert_verdicts", {"rows": rows}))
        write.extra.append(("apply_verdicts", {"keys": keys}))
        write.judged_runs = keys
        summary.saw("verdicts", ((r["project"], r["id"]) for r in rows))
        judged = await self.store.run("tasks_for_runs", keys=keys)
        found = {(r["project"], r["id"]) for r in judged}
        return found | {(t.project, t.id) for t in done.tasks if t.props.get("run")}

    async def _add_episodes(self, write: WriteBatch, episodes: list[PreparedEpisode]) -> None:
        if not episodes:
            return
        titled = [e for e in episodes if e.title_text]
        texts = [e.text_for_embedding for e in episodes] + [e.title_text or "" for e in titled]
        vectors = await self.embedder.aencode(texts)
        titles = {
            id(e): Vector(v.tolist()) for e, v in zip(titled, vectors[len(episodes) :], strict=True)
        }
        write.episodes = [
            e.row(Vector(v.tolist()), titles.get(id(e)), keep_details=self.keep_details)
            for e, v in zip(episodes, vectors[: len(episodes)], strict=True)
        ]
        write.environments, write.tools, write.tags, write.symbols = group_rows(episodes)
        write.chained_tasks = [
            {"project": p, "id": t}
            for p, t in sorted({(e.project, e.task_id) for e in episodes if e.task_id})
        ]

    async def _add_snippets(
        self, write: WriteBatch, episodes: list[PreparedEpisode], records: list[SnippetRecord]
    ) -> list[PreparedSnippet]:
        """Code from the episodes and snippet records: analysed, versioned, embedded once.

        Returns the prepared snippets (several may share an id).
        """
        snippets = await anyio.to_thread.run_sync(prepare_snippets, episodes, records)
        cited = [{"project": r.project, "id": r.episode_id} for r in records if r.episode_id]
        await stage_snippets(self.store, self.embedder, write, snippets, cited)
        return snippets

    async def _write(self, write: WriteBatch, done: Done, run: IngestRun) -> None:
        # Context read back from the graph (a step had no time to order by) is computed in
        # the batch's own transaction: never a batch committed with its context still to do.
        refresh = refresh_within(write.chained_tasks) if write.contexts is None else None
        feedback = verdict_feedback_within(write.judged_runs) if write.judged_runs else None
        try:
            await write_batch(self.store, write, then=in_turn(refresh, feedback))
        except Exception as exc:
            reason = refused_data(exc)
            if reason is None:
                raise  # Neo4j away or busy: not the records' fault
            await self._split(done.batch, reason, run)
            return
        if write.family_buckets:
            await assign_families(self.store, write.family_buckets)
        await self._staleness(write)
        run.stored(done, write)

    async def _split(self, batch: Batch, reason: str, run: IngestRun) -> None:
        """A batch Neo4j would not store: its records again in halves, one at a time, until
        the record at fault is alone and refused with Neo4j's reason; the others are written."""
        if len(batch) == 1:
            run.refused(batch.refusal(f"Neo4j would not store this record: {reason}"))
            return
        for half in batch.halves():
            model = self.embedder.settings.model
            tasks, episodes, unprepared = await anyio.to_thread.run_sync(prepare_batch, half, model)
            for item in unprepared:
                run.refused(item)
            write, changed = await self._embed_episodes(tasks, episodes)
            done = Done(tasks, episodes, changed, half)
            await self._complete(write, done, run.summary)
            await self._write(write, done, run)

    async def _staleness(self, write: WriteBatch) -> None:
        """Snippets judged again where the batch's new environments and its snippets are
        concerned: a newer environment may have moved a package past what a snippet was
        verified with, and a snippet's use in an episode may have failed or worked there."""
        envs: dict[str, set[str]] = defaultdict(set)
        snippets: dict[str, set[str]] = defaultdict(set)
        pairs: dict[str, set[tuple[str, str]]] = defaultdict(set)
        for project, key in write.new_environments:
            envs[project].add(key)
        for project, snippet_id in write.snippets:
            snippets[project].add(snippet_id)
        for project, snippet_id, key in write.stale_pairs:
            pairs[project].add((snippet_id, key))
        for project in sorted(envs.keys() | snippets.keys() | pairs.keys()):
            await refresh_staleness(
                self.store,
                project,
                envs=sorted(envs[project]),
                snippets=sorted(snippets[project]),
                pairs=sorted(pairs[project]),
            )

    async def _contexts(
        self, write: WriteBatch, changed: list[PreparedEpisode]
    ) -> list[dict[str, Any]] | None:
        """Context rows of the chained tasks, from this batch's vectors and the stored steps.

        The same rows `refresh_within` computes in the write, without reading this batch's
        vectors back; None (refresh after the write) when a step has no time yet to order by.
        """
        if not write.chained_tasks:
            return []
        chained = [e for e in changed if e.task_id]
        if any(e.created_at is None for e in chained):
            return None
        stored = await self.store.run("task_neighbourhoods", tasks=write.chained_tasks)
        vectors = {(r["project"], r["id"]): r["embedding"] for r in write.episodes}
        return chain_contexts(stored, chained, vectors)

    async def _add_errors(self, write: WriteBatch, episodes: list[PreparedEpisode]) -> None:
        now = datetime.now(UTC)
        distinct: dict[tuple[str, str], tuple[Any, datetime]] = {}
        for ep in episodes:
            for error in ep.errors:
                seen = ep.created_at or now
                distinct.setdefault((ep.project, error.key), (error, seen))
                write.error_links.append(
                    {"project": ep.project, "episode_id": ep.id, "key": error.key}
                )
        if not distinct:
            return
        known = await existing_error_keys(
            self.store, [{"project": p, "key": k} for p, k in distinct]
        )
        fresh = [key for key in distinct if key not in known]
        write.family_buckets = {(p, distinct[p, k][0].family_shape().bucket) for p, k in fresh}
        vectors = await self.embedder.aencode(
            [f"{distinct[k][0].kind}: {distinct[k][0].template}" for k in fresh]
        )
        embedded = {k: Vector(v.tolist()) for k, v in zip(fresh, vectors, strict=True)}
        write.errors = [
            error_row(project, error, seen, embedded.get((project, key)))
            for (project, key), (error, seen) in distinct.items()
        ]


async def stage_snippets(
    store: GraphStore,
    embedder: Embedder,
    write: WriteBatch,
    snippets: list[PreparedSnippet],
    snippet_episodes: list[dict[str, Any]],
    judged_by: WriteBatch | None = None,
) -> None:
    """Put prepared snippets into a batch's write: versions placed, the new ones embedded
    once, their write steps queued (the pipeline and the bulk path alike). Where they are
    judged again is read from `judged_by`'s episodes and environments (default: `write`'s;
    the bulk path's write leaves out the rows the import wrote and passes them here)."""
    if not snippets:
        return
    write.projects |= {s.project for s in snippets}
    todo = await snippets_to_embed(store, snippets)
    await place_versions(store, snippets)
    vectors = await embedder.aencode([s.text_for_embedding for s in todo])
    embedded = {(s.project, s.id): Vector(v.tolist()) for s, v in zip(todo, vectors, strict=True)}
    write.extra.extend(snippet_write_steps(snippets, embedded))
    write.snippets, write.stale_pairs = judged_where(snippets, judged_by or write)
    write.snippet_episodes = snippet_episodes


def judged_where(
    snippets: list[PreparedSnippet], write: WriteBatch
) -> tuple[set[tuple[str, str]], set[tuple[str, str, str]]]:
    """Where the batch's snippets are judged again after the write (graph/staleness.py):
    (project, id) of those judged in every environment they have evidence in, and
    (project, id, environment key) of those judged only where the batch used them.

    Every environment when the batch may move what a snippet was verified with: it is new,
    it requires packages (its ranges may widen), it worked for the first time (a failure
    elsewhere becomes `failed`), or it was used in an episode whose environment the batch
    does not write (stored before, or imported by the bulk path). Otherwise
    only the last word from its environments of this batch is new; judging it everywhere
    again read all its reports, which grew with its reuse (3.9 ms an episode at 59k)."""
    env_of = {(r["project"], e): r["key"] for r in write.environments for e in r["episode_ids"]}
    written = (
        set()
        if "upsert_environments" in write.imported
        else {(r["project"], r["id"]) for r in write.episodes}
    )  # episodes whose environment (or that they have none) this batch writes
    everywhere: set[tuple[str, str]] = set()
    pairs: set[tuple[str, str, str]] = set()
    for s in snippets:
        key = (s.project, s.id)
        episode = (s.project, s.episode_id)
        if (
            not s.stored
            or s.requires
            or (s.outcome == "success" and not s.worked)
            or (s.episode_id and episode not in written)
        ):
            everywhere.add(key)
        elif episode in env_of:
            pairs.add((*key, env_of[episode]))
    return everywhere, {p for p in pairs if p[:2] not in everywhere}
