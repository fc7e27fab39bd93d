"""Records in batches, each prepared in a worker thread while the one before it is used."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field

import anyio

from metisgraph.ingest.adapters.base import Parsed, Refused
from metisgraph.ingest.embeddings import Embedder
from metisgraph.ingest.prepare.episode import (
    PreparedEpisode,
    PreparedTask,
    prepare_episode,
    prepare_task,
)
from metisgraph.ingest.records import EpisodeRecord, SnippetRecord, TaskRecord, VerdictRecord

__all__ = ["Batch", "Done", "Item", "PrepareAhead", "Prepared", "batches", "prepare_batch"]

Item = Parsed | Refused


@dataclass
class Batch:
    tasks: list[TaskRecord] = field(default_factory=list)
    episodes: list[EpisodeRecord] = field(default_factory=list)
    snippets: list[SnippetRecord] = field(default_factory=list)
    verdicts: list[VerdictRecord] = field(default_factory=list)

    def __len__(self) -> int:
        return len(self.tasks) + len(self.episodes) + len(self.snippets) + len(self.verdicts)


def batches(
    items: Iterable[Item], size: int, on_refused: Callable[[Refused], None]
) -> Iterator[Batch]:
    batch = Batch()
    for item in items:
        if isinstance(item, Refused):
            on_refused(item)
            continue
        record = item.record
        if isinstance(record, TaskRecord):
            batch.tasks.append(record)
        elif isinstance(record, EpisodeRecord):
            batch.episodes.append(record)
        elif isinstance(record, VerdictRecord):
            batch.verdicts.append(record)
        else:
            batch.snippets.append(record)
        if len(batch) >= size:
            yield batch
            batch = Batch()
    if len(batch):
        yield batch


def prepare_batch(batch: Batch, model: str) -> tuple[list[PreparedTask], list[PreparedEpisode]]:
    tasks = [prepare_task(t) for t in batch.tasks]
    episodes = [prepare_episode(e, model) for e in batch.episodes]
    return tasks, episodes


Prepared = tuple[Batch, list[PreparedTask], list[PreparedEpisode]]


@dataclass
class Done:
    """A batch prepared and embedded: what its completion and accounting need."""

    tasks: list[PreparedTask]
    episodes: list[PreparedEpisode]
    changed: list[PreparedEpisode]
    batch: Batch


class PrepareAhead:
    """Batches, each prepared in a worker thread while the one before it is being used.

    Records are read (and refusals reported) on the event loop, in order; only the
    preparation — sanitizing, extraction, hashing — runs in the thread.
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
            tasks, episodes = await anyio.to_thread.run_sync(prepare_batch, batch, self._model)
            return batch, tasks, episodes

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
