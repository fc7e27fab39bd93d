"""The bulk path's CPU work in worker processes: batches prepared, import rows formatted.

A bulk load is Python from end to end until the import: validating, sanitizing and
extracting every record (`prepare_batch`), finding and analysing its code
(`prepare_snippets`), typing and formatting every value of the import files
(`format_rows`). Threads share one interpreter lock; these run in processes (as many as
``workers``), so they use every core while the main process embeds, keeps the nodes many
batches share and writes the files. Each is a pure function of what it is sent: the result
is the same as the one computed in the main process (`workers=0` does just that).

Batches are sent ahead (``workers + 1`` in flight) and taken back in order.
"""

from __future__ import annotations

import asyncio
import multiprocessing
from collections import deque
from collections.abc import AsyncIterator, Iterator
from concurrent.futures import Executor, Future, ProcessPoolExecutor
from dataclasses import dataclass
from typing import Any

from metisgraph.graph import BulkChunks as Chunks
from metisgraph.graph import BulkPending as Pending
from metisgraph.graph import format_bulk_rows as format_rows
from metisgraph.ingest.adapters.base import Parsed, Refused
from metisgraph.ingest.pipeline.batches import Batch, prepare_batch
from metisgraph.ingest.prepare.episode import PreparedEpisode, PreparedTask
from metisgraph.ingest.snippets.batch import PreparedSnippet, prepare_snippets

__all__ = ["BatchPrepared", "Workers", "last_versions", "prepare_whole"]


@dataclass
class BatchPrepared:
    """A batch as the main process goes on with it."""

    batch: Batch
    tasks: list[PreparedTask]
    episodes: list[PreparedEpisode]
    unprepared: list[Refused]
    # the code of the batch's episodes (each id's last version) and snippet records
    snippets: list[PreparedSnippet]


def last_versions(episodes: list[PreparedEpisode]) -> list[PreparedEpisode]:
    """Each episode id of a batch once, its last version (in the order ids are first met)."""
    return list({(e.project, e.id): e for e in episodes}.values())


def prepare_whole(batch: Batch, model: str) -> BatchPrepared:
    """A batch prepared and its code found and analysed (in any process)."""
    tasks, episodes, unprepared = prepare_batch(batch, model)
    snippets = prepare_snippets(last_versions(episodes), batch.snippets)
    return BatchPrepared(batch, tasks, episodes, unprepared, snippets)


@dataclass
class _Kept:
    """What preparation kept of a batch sent to a worker, by position (records are
    copies there: their identity does not cross processes)."""

    tasks: list[int] | None  # None: every one
    episodes: list[int] | None
    snippet_records: list[int | None]  # per snippet, its record's place in batch.snippets


def _prepare_sent(parsed: list[Parsed], model: str) -> tuple[BatchPrepared, _Kept]:
    """`prepare_whole` in a worker, the batch rebuilt from its records and their sources."""
    batch = Batch()
    for item in parsed:
        batch.add(item)
    tasks, episodes = list(batch.tasks), list(batch.episodes)
    done = prepare_whole(batch, model)
    place = {id(r): n for n, r in enumerate(batch.snippets)}
    kept = _Kept(
        _kept(tasks, batch.tasks),
        _kept(episodes, batch.episodes),
        [None if s.record is None else place[id(s.record)] for s in done.snippets],
    )
    done.batch = Batch()  # the main process has it
    return done, kept


def _kept(before: list[Any], after: list[Any]) -> list[int] | None:
    if len(before) == len(after):
        return None
    left = {id(r) for r in after}
    return [n for n, r in enumerate(before) if id(r) in left]


class Workers:
    """The worker processes of one bulk load (none: everything in this process)."""

    def __init__(self, workers: int) -> None:
        self.count = workers
        self._pool: Executor | None = None
        if workers > 0:
            # spawned, not forked: the main process may hold a model's threads
            context = multiprocessing.get_context("spawn")
            self._pool = ProcessPoolExecutor(workers, mp_context=context)

    async def prepared(self, batches: Iterator[Batch], model: str) -> AsyncIterator[BatchPrepared]:
        """Each batch prepared, in order; ahead of the caller by up to ``count + 1``."""
        if self._pool is None:
            for batch in batches:
                yield await asyncio.to_thread(prepare_whole, batch, model)
            return
        ahead: deque[tuple[Batch, Future[tuple[BatchPrepared, _Kept]]]] = deque()

        def send() -> bool:
            batch = next(batches, None)
            if batch is None:
                return False
            assert self._pool is not None
            parsed = [Parsed(r, batch.ref(r)) for r in _records(batch)]
            ahead.append((batch, self._pool.submit(_prepare_sent, parsed, model)))
            return True

        while len(ahead) <= self.count and send():
            pass
        while ahead:
            batch, future = ahead.popleft()
            done, kept = await asyncio.wrap_future(future)
            send()
            if kept.tasks is not None:
                batch.tasks[:] = [batch.tasks[n] for n in kept.tasks]
            if kept.episodes is not None:
                batch.episodes[:] = [batch.episodes[n] for n in kept.episodes]
            for snippet, n in zip(done.snippets, kept.snippet_records, strict=True):
                if n is not None:
                    snippet.record = batch.snippets[n]
            done.batch = batch
            yield done

    def format(self, rows: Pending) -> asyncio.Future[Chunks]:
        """Rows formatted for their files, in a worker (or here, at once)."""
        loop = asyncio.get_running_loop()
        if self._pool is None:
            future: asyncio.Future[Chunks] = loop.create_future()
            future.set_result(format_rows(rows))
            return future
        return asyncio.wrap_future(self._pool.submit(format_rows, rows))

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
            self._pool = None


def _records(batch: Batch) -> list[Any]:
    return [*batch.tasks, *batch.episodes, *batch.snippets, *batch.verdicts]
