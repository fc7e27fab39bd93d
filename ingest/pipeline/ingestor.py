"""The one ingest pipeline: validate → sanitize → extract → embed → write, in batches.

Files, the CLI and GraphQL all come through here. A refused record never stops a
batch; it is counted, reported with its file, line and field, and kept in the
dead-letter file when one is given.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, Any

import anyio

from metisgraph.graph.store import GraphStore
from metisgraph.graph.vectors import Vector
from metisgraph.graph.writes import (
    WriteBatch,
    existing_episode_hashes,
    existing_error_keys,
    write_batch,
)
from metisgraph.ingest.adapters.base import Parsed, Refused
from metisgraph.ingest.embeddings import Embedder
from metisgraph.ingest.environment.fingerprint import environment_row
from metisgraph.ingest.pipeline.context import context_rows, refresh_context
from metisgraph.ingest.prepare.episode import (
    PreparedEpisode,
    PreparedTask,
    prepare_episode,
    prepare_task,
)
from metisgraph.ingest.prepare.keywords import tag_value
from metisgraph.ingest.records import EpisodeRecord, SnippetRecord, TaskRecord, TaskStatus
from metisgraph.ingest.snippets.batch import (
    PreparedSnippet,
    place_versions,
    prepare_snippets,
    snippet_record_results,
    snippet_write_steps,
    snippets_to_embed,
)

__all__ = ["DeadLetter", "IngestSummary", "Ingestor", "RecordResult"]

Item = Parsed | Refused


@dataclass
class RecordResult:
    """What happened to one record: its id and whether it was written, unchanged or refused."""

    kind: str
    id: str | None
    status: str  # written | unchanged | refused
    errors: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # stored, but not whole (e.g. a long log cut)


@dataclass
class IngestSummary:
    read: int = 0
    tasks: int = 0
    written: int = 0
    unchanged: int = 0
    refused: int = 0
    errors: int = 0
    environments: int = 0
    tools: int = 0
    snippets: int = 0
    cut: int = 0  # episodes stored with a text cut to its head and tail
    refusals: list[Refused] = field(default_factory=list)
    results: list[RecordResult] = field(default_factory=list)
    # What was linked, by key: an error seen in every batch is still one error.
    seen: dict[str, set[tuple[str, str]]] = field(default_factory=dict, repr=False)

    def saw(self, what: str, keys: Iterable[tuple[str, str]]) -> None:
        """Count distinct errors, environments, tools or snippets across every batch."""
        known = self.seen.setdefault(what, set())
        known.update(keys)
        setattr(self, what, len(known))

    def as_dict(self) -> dict[str, int]:
        keys = (
            "read",
            "tasks",
            "written",
            "unchanged",
            "refused",
            "errors",
            "environments",
            "tools",
            "snippets",
            "cut",
        )
        return {k: getattr(self, k) for k in keys}


class DeadLetter:
    """Refused records, one JSON object a line, with where they came from and why."""

    def __init__(self, handle: IO[str]) -> None:
        self._handle = handle

    @classmethod
    def open(cls, path: Path) -> DeadLetter:
        return cls(path.open("a", encoding="utf-8"))

    def keep(self, refused: Refused) -> None:
        entry = refused.as_dead_letter()
        self._handle.write(json.dumps(entry, default=str, ensure_ascii=False) + "\n")
        self._handle.flush()

    def close(self) -> None:
        self._handle.close()


@dataclass
class _Batch:
    tasks: list[TaskRecord] = field(default_factory=list)
    episodes: list[EpisodeRecord] = field(default_factory=list)
    snippets: list[SnippetRecord] = field(default_factory=list)

    def __len__(self) -> int:
        return len(self.tasks) + len(self.episodes) + len(self.snippets)


def _batches(
    items: Iterable[Item], size: int, on_refused: Callable[[Refused], None]
) -> Iterator[_Batch]:
    batch = _Batch()
    for item in items:
        if isinstance(item, Refused):
            on_refused(item)
            continue
        record = item.record
        if isinstance(record, TaskRecord):
            batch.tasks.append(record)
        elif isinstance(record, EpisodeRecord):
            batch.episodes.append(record)
        else:
            batch.snippets.append(record)
        if len(batch) >= size:
            yield batch
            batch = _Batch()
    if len(batch):
        yield batch


def _error_row(
    project: str, error: Any, seen: datetime, embedding: list[float] | None
) -> dict[str, Any]:
    return {
        "project": project,
        "key": error.key,
        "kind": error.kind,
        "category": error.category,
        "signature": error.signature,
        "template": error.template,
        "frames": list(error.frames),
        "symbols": list(error.symbols),
        "frames_text": " ".join(error.frames + error.symbols),
        "sample": error.sample,
        "seen": seen,
        "embedding": embedding,
    }


def _group_rows(episodes: list[PreparedEpisode]) -> tuple[list[dict[str, Any]], ...]:
    environments: dict[tuple[str, str], dict[str, Any]] = {}
    tools: dict[tuple[str, str], dict[str, Any]] = {}
    tags: dict[tuple[str, str], dict[str, Any]] = {}
    symbols: dict[tuple[str, str], dict[str, Any]] = {}
    for ep in episodes:
        env = ep.environment
        if env is not None:
            row = environments.setdefault(
                (ep.project, env.key), environment_row(ep.project, env, [])
            )
            row["episode_ids"].append(ep.id)
        for tool in ep.tools:
            row = tools.setdefault(
                (ep.project, tool.name),
                {"project": ep.project, "name": tool.name, "kind": tool.kind, "episode_ids": []},
            )
            row["episode_ids"].append(ep.id)
        for tag in ep.tags:
            row = tags.setdefault(
                (ep.project, tag),
                {"project": ep.project, "name": tag, "value": tag_value(tag), "episode_ids": []},
            )
            row["episode_ids"].append(ep.id)
        for name in ep.symbols:
            row = symbols.setdefault(
                (ep.project, name), {"project": ep.project, "name": name, "episode_ids": []}
            )
            row["episode_ids"].append(ep.id)
    return (
        list(environments.values()),
        list(tools.values()),
        list(tags.values()),
        list(symbols.values()),
    )


class Ingestor:
    """Runs records through the pipeline and writes them, one transaction per batch."""

    def __init__(self, store: GraphStore, embedder: Embedder, *, batch_size: int = 256) -> None:
        self.store = store
        self.embedder = embedder
        self.batch_size = batch_size

    async def ingest(
        self,
        items: Iterable[Item],
        *,
        dead_letter: DeadLetter | None = None,
        on_progress: Callable[[int], None] | None = None,
        keep_results: bool = False,
    ) -> IngestSummary:
        summary = IngestSummary()

        def refused(item: Refused) -> None:
            summary.read += 1
            summary.refused += 1
            summary.refusals.append(item)
            if keep_results:
                summary.results.append(RecordResult("record", None, "refused", [item.describe()]))
            if dead_letter is not None:
                dead_letter.keep(item)
            if on_progress:
                on_progress(1)

        # A pipeline: while batch n is written, batch n+1 is embedded and batch n+2 prepared,
        # so the model, Neo4j and the Python work overlap. What must see batch n stored (error
        # and snippet state, versions, the neighbours of chained steps) waits for its write.
        writing: asyncio.Task[None] | None = None
        in_flight: set[tuple[str, str]] = set()
        ahead = _PrepareAhead(_batches(items, self.batch_size, refused), self.embedder)
        try:
            async for batch, tasks, episodes in ahead:
                summary.read += len(batch)
                keys = {(e.project, e.id) for e in episodes}
                if writing is not None and keys & in_flight:
                    await writing  # the same episode again: compare with what was just written
                write, changed = await self._embed_episodes(tasks, episodes, summary)
                if writing is not None:
                    await writing
                done = _Done(tasks, episodes, changed, batch)
                await self._complete(write, done, summary, keep_results)
                writing = asyncio.create_task(self._write(write, on_progress, len(batch)))
                in_flight = keys
            if writing is not None:
                await writing
        finally:
            if writing is not None and not writing.done():
                writing.cancel()
            await ahead.aclose()
        return summary

    async def _embed_episodes(
        self, tasks: list[PreparedTask], episodes: list[PreparedEpisode], summary: IngestSummary
    ) -> tuple[WriteBatch, list[PreparedEpisode]]:
        """The episodes that changed, embedded (runs while the previous batch is written)."""
        existing = await existing_episode_hashes(
            self.store, [{"project": e.project, "id": e.id} for e in episodes]
        )
        changed = [e for e in episodes if existing.get((e.project, e.id)) != e.content_hash]
        summary.unchanged += len(episodes) - len(changed)
        write = WriteBatch(projects={t.project for t in tasks} | {e.project for e in episodes})
        write.tasks = [t.row() for t in tasks]
        write.replaced = [
            {"project": e.project, "id": e.id} for e in changed if (e.project, e.id) in existing
        ]
        await self._add_episodes(write, changed)
        return write, changed

    async def _complete(
        self, write: WriteBatch, done: _Done, summary: IngestSummary, keep: bool
    ) -> None:
        """Errors, code and context: what depends on the batches before being stored."""
        tasks, episodes, changed, batch = done.tasks, done.episodes, done.changed, done.batch
        await self._add_errors(write, changed)
        snippets = await self._add_snippets(write, changed, batch.snippets)
        summary.saw("snippets", ((s.project, s.id) for s in snippets))
        # Memorize when a task ends resolved, whether the task or its last episodes come later:
        # the query itself only acts on tasks whose status is resolved.
        resolved = {(t.project, t.id) for t in tasks if t.props["status"] == TaskStatus.resolved}
        resolved |= {(k["project"], k["id"]) for k in write.chained_tasks}
        write.resolved_tasks = [{"project": p, "id": i} for p, i in sorted(resolved)]
        write.contexts = await self._contexts(write, changed)
        summary.tasks += len(tasks)
        summary.written += len(changed)
        summary.saw("errors", ((r["project"], r["key"]) for r in write.errors))
        summary.saw("environments", ((r["project"], r["key"]) for r in write.environments))
        summary.saw("tools", ((r["project"], r["name"]) for r in write.tools))
        summary.cut += sum(bool(e.cut) for e in changed)
        if keep:
            summary.results.extend(RecordResult("task", t.id, "written") for t in tasks)
            changed_ids = {(e.project, e.id) for e in changed}
            summary.results.extend(
                RecordResult(
                    "episode",
                    e.id,
                    "written" if (e.project, e.id) in changed_ids else "unchanged",
                    notes=e.notes(),
                )
                for e in episodes
            )
            summary.results.extend(
                RecordResult("snippet", sid, status, errors)
                for sid, status, errors in snippet_record_results(batch.snippets, snippets)
            )

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
            e.row(Vector(v.tolist()), titles.get(id(e)))
            for e, v in zip(episodes, vectors[: len(episodes)], strict=True)
        ]
        write.environments, write.tools, write.tags, write.symbols = _group_rows(episodes)
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
        if not snippets:
            return []
        write.projects |= {s.project for s in snippets}
        todo = await snippets_to_embed(self.store, snippets)
        await place_versions(self.store, snippets)
        vectors = await self.embedder.aencode([s.text_for_embedding for s in todo])
        embedded = {
            (s.project, s.id): Vector(v.tolist()) for s, v in zip(todo, vectors, strict=True)
        }
        write.extra.extend(snippet_write_steps(snippets, embedded))
        return snippets

    async def _write(
        self, write: WriteBatch, on_progress: Callable[[int], None] | None, size: int
    ) -> None:
        await write_batch(self.store, write)
        if write.contexts is None:
            await refresh_context(self.store, write.chained_tasks)
        if on_progress:
            on_progress(size)

    async def _contexts(
        self, write: WriteBatch, changed: list[PreparedEpisode]
    ) -> list[dict[str, Any]] | None:
        """Context rows of the chained tasks, from this batch's vectors and the stored steps.

        The same rows `refresh_context` computes after the write, without reading this batch's
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
        vectors = await self.embedder.aencode(
            [f"{distinct[k][0].kind}: {distinct[k][0].template}" for k in fresh]
        )
        embedded = {k: Vector(v.tolist()) for k, v in zip(fresh, vectors, strict=True)}
        write.errors = [
            _error_row(project, error, seen, embedded.get((project, key)))
            for (project, key), (error, seen) in distinct.items()
        ]


def _prepare(batch: _Batch, model: str) -> tuple[list[PreparedTask], list[PreparedEpisode]]:
    tasks = [prepare_task(t) for t in batch.tasks]
    episodes = [prepare_episode(e, model) for e in batch.episodes]
    return tasks, episodes


Prepared = tuple[_Batch, list[PreparedTask], list[PreparedEpisode]]


@dataclass
class _Done:
    """A batch prepared and embedded: what its completion and accounting need."""

    tasks: list[PreparedTask]
    episodes: list[PreparedEpisode]
    changed: list[PreparedEpisode]
    batch: _Batch


class _PrepareAhead:
    """Batches, each prepared in a worker thread while the one before it is being used.

    Records are read (and refusals reported) on the event loop, in order; only the
    preparation — sanitizing, extraction, hashing — runs in the thread.
    """

    def __init__(self, batches: Iterator[_Batch], embedder: Embedder) -> None:
        self._batches = batches
        self._model = embedder.settings.model
        self._next: asyncio.Task[Prepared] | None = None

    def _start(self) -> None:
        batch = next(self._batches, None)
        if batch is None:
            self._next = None
            return

        async def prepare(batch: _Batch = batch) -> Prepared:
            tasks, episodes = await anyio.to_thread.run_sync(_prepare, batch, self._model)
            return batch, tasks, episodes

        self._next = asyncio.create_task(prepare())

    def __aiter__(self) -> _PrepareAhead:
        self._start()
        return self

    async def __anext__(self) -> Prepared:
        if self._next is None:
            raise StopAsyncIteration
        prepared = await self._next
        self._start()
        return prepared

    async def aclose(self) -> None:
        if self._next is not None and not self._next.done():
            self._next.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._next


def chain_contexts(
    stored: list[dict[str, Any]],
    episodes: list[PreparedEpisode],
    vectors: dict[tuple[str, str], list[float]],
) -> list[dict[str, Any]]:
    """Context rows for whole chains: the stored steps with this batch's steps in their place.

    Orders steps as the graph does (step, then time, then id; missing ones last).
    """
    chains: dict[tuple[str, str], dict[str, dict[str, Any]]] = {}
    for row in stored:
        stored_at: Any = row.get("created_at")
        when = stored_at.to_native() if hasattr(stored_at, "to_native") else stored_at
        chains.setdefault((row["project"], row["task"]), {})[row["id"]] = {
            **row,
            "order": _order(row.get("step"), when, row["id"]),
        }
    for e in episodes:
        assert e.task_id is not None
        chains.setdefault((e.project, e.task_id), {})[e.id] = {
            "project": e.project,
            "id": e.id,
            "summary": e.props.get("summary"),
            "embedding": vectors[(e.project, e.id)],
            "order": _order(e.props.get("step"), e.created_at, e.id),
        }
    rows: list[dict[str, Any]] = []
    for key in sorted(chains):
        rows.extend(context_rows(sorted(chains[key].values(), key=lambda r: r["order"])))
    return rows


_LAST_STEP = 2147483647


def _order(step: int | None, when: datetime | None, episode_id: str) -> tuple[Any, ...]:
    return (_LAST_STEP if step is None else step, when is None, when or _EARLIEST, episode_id)


_EARLIEST = datetime.min.replace(tzinfo=UTC)
