"""Records in batches, each prepared in a worker thread while the one before it is used."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import traceback
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import TypeVar

import anyio

from metisgraph.graph import COUNTERS
from metisgraph.ingest.adapters.base import (
    Parsed,
    Record,
    Refused,
    SourceRef,
    refuse,
)
from metisgraph.ingest.embeddings import Embedder
from metisgraph.ingest.prepare.episode import (
    PreparedEpisode,
    PreparedTask,
    prepare_episode,
    prepare_task,
)
from metisgraph.ingest.records import EpisodeRecord, SnippetRecord, TaskRecord, VerdictRecord
from metisgraph.ingest.snippets.batch import PreparedSnippet

__all__ = ["Batch", "Done", "Item", "PrepareAhead", "Prepared", "batches", "prepare_batch"]

log = logging.getLogger("metisgraph")

Item = Parsed | Refused
R = TypeVar("R", TaskRecord, EpisodeRecord)
T = TypeVar("T", PreparedTask, PreparedEpisode)


@dataclass
class Batch:
    tasks: list[TaskRecord] = field(default_factory=list)
    episodes: list[EpisodeRecord] = field(default_factory=list)
    snippets: list[SnippetRecord] = field(default_factory=list)
    verdicts: list[VerdictRecord] = field(default_factory=list)
    refs: dict[int, SourceRef] = field(default_factory=dict)  # id(record): where it came from

    def __len__(self) -> int:
        return len(self.tasks) + len(self.episodes) + len(self.snippets) + len(self.verdicts)

    def ref(self, record: Record) -> SourceRef:
        return self.refs.get(id(record), SourceRef("ingest"))

    def add(self, parsed: Parsed) -> None:
        record = parsed.record
        if isinstance(record, TaskRecord):
            self.tasks.append(record)
        elif isinstance(record, EpisodeRecord):
            self.episodes.append(record)
        elif isinstance(record, VerdictRecord):
            self.verdicts.append(record)
        else:
            self.snippets.append(record)
        self.refs[id(record)] = parsed.ref

    def halves(self) -> tuple[Batch, Batch]:
        """The records in two batches, in order (tasks still before episodes)."""
        records: list[TaskRecord | EpisodeRecord | SnippetRecord | VerdictRecord]
        records = [*self.tasks, *self.episodes, *self.snippets, *self.verdicts]
        middle = len(records) // 2
        out = (Batch(), Batch())
        for n, record in enumerate(records):
            out[n >= middle].add(Parsed(record, self.refs[id(record)]))
        return out

    def refusal(self, reason: str) -> Refused:
        """The refusal of a batch's one record (a batch Neo4j would not store, split down)."""
        assert len(self) == 1
        record = [*self.tasks, *self.episodes, *self.snippets, *self.verdicts][0]
        raw = record.model_dump(mode="json", exclude_defaults=True)
        return refuse(self.refs[id(record)], raw, "", reason)


def batches(
    items: Iterable[Item], size: int, on_refused: Callable[[Refused], None]
) -> Iterator[Batch]:
    batch = Batch()
    for item in items:
        if isinstance(item, Refused):
            on_refused(item)
            continue
        batch.add(item)
        if len(batch) >= size:
            yield batch
            batch = Batch()
    if len(batch):
        yield batch


def prepare_batch(
    batch: Batch, model: str
) -> tuple[list[PreparedTask], list[PreparedEpisode], list[Refused]]:
    """Every record prepared; one whose preparation fails is refused, the others go on."""
    refused: list[Refused] = []
    tasks = _each(batch, batch.tasks, prepare_task, refused)
    episodes = _each(batch, batch.episodes, lambda e: prepare_episode(e, model), refused)
    return tasks, episodes, refused


def _each(
    batch: Batch, records: list[R], prepare: Callable[[R], T], refused: list[Refused]
) -> list[T]:
    prepared: list[T] = []
    kept: list[R] = []
    for record in records:
        try:
            prepared.append(prepare(record))
        except Exception as exc:  # a record the checks let through must not stop the batch
            refused.append(_unprepared(batch.ref(record), record, exc))
            continue
        kept.append(record)
    records[:] = kept
    return prepared


def _unprepared(ref: SourceRef, record: Record, exc: Exception) -> Refused:
    """The refusal of a record whose preparation raised: the error's type, never its text
    (it may quote the record); where it was raised goes to the log for us to fix."""
    kind = type(exc).__name__
    where = "".join(traceback.format_list(traceback.extract_tb(exc.__traceback__)[-4:]))
    log.error("record %s could not be prepared (%s), raised at:\n%s", ref, kind, where)
    COUNTERS.increment("ingest_unprepared", error=kind)
    try:
        raw: object = record.model_dump(mode="json")
    except Exception:
        raw = None
    return refuse(ref, raw, "", f"could not be prepared ({kind}); the rest of the batch goes on")


Prepared = tuple[Batch, list[PreparedTask], list[PreparedEpisode], list[Refused]]


@dataclass
class Done:
    """A batch prepared and embedded: what its completion and accounting need."""

    tasks: list[PreparedTask]
    episodes: list[PreparedEpisode]
    changed: list[PreparedEpisode]
    batch: Batch
    snippets: list[PreparedSnippet] = field(default_factory=list)  # several may share an id


class PrepareAhead:
    """Batches, each prepared in a worker thread while the one before it is being used.

    Records are read (and refusals reported) on the event loop, in order; only the
    preparation — sanitizing, extraction, hashing — runs in the thread. A record refused
    there is taken out of its batch and handed back beside it.
    """

    def __init__(self, batches: Iterator[Batch], embedder: Embedder) -> None:
        self._batches = batches
        self._model = embedder.settings.model
        self._next: asyncio.Task[Prepared] | None = None

    def _start(self) -> None:
        batch = next(self._batches, None)
        if batch is None:
            self._next = None
            return

        async def prepare(batch: Batch = batch) -> Prepared:
            prepared = await anyio.to_thread.run_sync(prepare_batch, batch, self._model)
            return (batch, *prepared)

        self._next = asyncio.create_task(prepare())

    def __aiter__(self) -> PrepareAhead:
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
