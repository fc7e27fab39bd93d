"""Ingest benchmarks: end to end next to the model alone; graph writes with vectors given.

End to end runs the real pipeline (validate, sanitize, extract, analyse code, embed with
the real model, write) into a fresh project. The model's own throughput is measured on
exactly the episode texts of the same records, in the same run, before and after.
Graph writes run the same pipeline and write queries with vectors given (deterministic
random unit vectors, so the model is out of the picture) and count the time spent in Neo4j.
"""

from __future__ import annotations

import hashlib
import statistics
import time
import uuid
from collections.abc import Awaitable, Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from bench.corpus import Corpus, Task
from metisgraph.graph.cypher import Query
from metisgraph.graph.store import GraphStore, Transaction
from metisgraph.ingest.adapters.base import Parsed, SourceRef, validate_record
from metisgraph.ingest.embeddings import Embedder
from metisgraph.ingest.pipeline import Ingestor
from metisgraph.ingest.prepare.episode import prepare_episode
from metisgraph.ingest.records import EpisodeRecord

if TYPE_CHECKING:
    from numpy.typing import NDArray

__all__ = ["GivenEmbedder", "TimedStore", "bench_graph_writes", "bench_ingest", "parsed_items"]


class TimedStore(GraphStore):
    """A GraphStore that adds up the wall time spent waiting on Neo4j."""

    def __init__(self, store: GraphStore) -> None:
        super().__init__(store.driver, store.database)
        self.seconds: dict[str, float] = {}

    def _add(self, key: str, started: float) -> None:
        self.seconds[key] = self.seconds.get(key, 0.0) + time.perf_counter() - started

    async def run_text(
        self, text: str, params: dict[str, Any] | None = None, *, read: bool = False
    ) -> list[dict[str, Any]]:
        started = time.perf_counter()
        try:
            return await super().run_text(text, params, read=read)
        finally:
            self._add("reads" if read else "writes", started)

    async def write_many(
        self,
        steps: Sequence[tuple[str | Query, dict[str, Any]]],
        then: Callable[[Transaction], Awaitable[object]] | None = None,
    ) -> list[dict[str, Any]]:
        started = time.perf_counter()
        try:
            return await super().write_many(steps, then)
        finally:
            self._add("writes", started)


class TimedEmbedder(Embedder):
    """The real model, counting texts and seconds."""

    def __init__(self, base: Embedder) -> None:
        super().__init__(base.settings)
        self._model = base._model
        self.texts: list[str] = []
        self.seconds = 0.0

    def encode(self, texts: Sequence[str]) -> NDArray[np.float32]:
        started = time.perf_counter()
        try:
            return super().encode(texts)
        finally:
            self.seconds += time.perf_counter() - started
            self.texts.extend(texts)


class GivenEmbedder(Embedder):
    """Vectors given: a deterministic random unit vector per text, no model."""

    def __init__(self, dimension: int = 384) -> None:
        super().__init__()
        self._dimension = dimension

    @property
    def dimension(self) -> int:
        return self._dimension

    def load(self) -> None:
        return None

    def encode(self, texts: Sequence[str]) -> NDArray[np.float32]:
        out = np.empty((len(texts), self._dimension), dtype=np.float32)
        for i, text in enumerate(texts):
            seed = int.from_bytes(hashlib.blake2b(text.encode(), digest_size=8).digest())
            row = np.random.default_rng(seed).standard_normal(self._dimension)
            out[i] = row / np.linalg.norm(row)
        return out


def parsed_items(corpus: Corpus, tasks: Iterable[Task] | None = None) -> list[Parsed]:
    """The corpus's records validated (or only those of these tasks of it)."""
    ref = SourceRef("bench")
    items = []
    for task in corpus.tasks() if tasks is None else tasks:
        for record in task.records:
            parsed = validate_record(record, ref)
            assert isinstance(parsed, Parsed), parsed
            items.append(parsed)
    return items


@dataclass
class IngestFigures:
    episodes: int
    seconds: float
    episodes_per_s: float
    model_texts_per_s: list[float]
    ratio: float
    embedded_texts: int
    embedding_s: float
    # The model alone on every text the pipeline embedded (episode, title, error, code):
    # the fastest the pipeline could be; `pipeline_efficiency` is that time over its time.
    model_on_pipeline_texts_s: float
    pipeline_efficiency: float
    ratio_ceiling: float
    neo4j_s: dict[str, float] = field(default_factory=dict)
    summary: dict[str, int] = field(default_factory=dict)


def _model_throughput(embedder: Embedder, texts: list[str]) -> float:
    started = time.perf_counter()
    embedder.encode(texts)
    return len(texts) / (time.perf_counter() - started)


async def bench_ingest(
    store: GraphStore, embedder: Embedder, seed: int, episodes: int, batch_size: int
) -> IngestFigures:
    """End-to-end ingest of `episodes` episodes next to the model on the same episode texts."""
    project = f"bench-ingest-{uuid.uuid4().hex[:8]}"
    items = parsed_items(Corpus(seed + 1, episodes, project=project))
    model = embedder.settings.model
    texts = [
        prepare_episode(i.record, model).text_for_embedding
        for i in items
        if isinstance(i.record, EpisodeRecord)
    ]
    embedder.encode(texts[:64])  # warm
    before = _model_throughput(embedder, texts)
    timed_store, timed_embedder = TimedStore(store), TimedEmbedder(embedder)
    ingestor = Ingestor(timed_store, timed_embedder, batch_size=batch_size)
    started = time.perf_counter()
    summary = await ingestor.ingest(items)
    seconds = time.perf_counter() - started
    everything = time.perf_counter()
    embedder.encode(timed_embedder.texts)
    everything_s = time.perf_counter() - everything
    after = _model_throughput(embedder, texts)
    await store.run("forget_project", project=project)
    rate = len(texts) / seconds
    model_rate = statistics.mean([before, after])
    return IngestFigures(
        episodes=len(texts),
        seconds=seconds,
        episodes_per_s=rate,
        model_texts_per_s=[before, after],
        ratio=rate / model_rate,
        embedded_texts=len(timed_embedder.texts),
        embedding_s=timed_embedder.seconds,
        model_on_pipeline_texts_s=everything_s,
        pipeline_efficiency=everything_s / seconds,
        ratio_ceiling=len(texts) / everything_s / model_rate,
        neo4j_s=timed_store.seconds,
        summary=summary.as_dict(),
    )


@dataclass
class WriteFigures:
    episodes: int
    seconds: float
    episodes_per_s: float
    neo4j_s: dict[str, float]
    graph_episodes_per_s: float
    summary: dict[str, int]


async def bench_graph_writes(
    store: GraphStore, seed: int, episodes: int, batch_size: int
) -> WriteFigures:
    """The pipeline with vectors given: total rate, and the rate of the Neo4j work alone."""
    project = f"bench-writes-{uuid.uuid4().hex[:8]}"
    items = parsed_items(Corpus(seed + 2, episodes, project=project))
    count = sum(isinstance(i.record, EpisodeRecord) for i in items)
    timed_store = TimedStore(store)
    ingestor = Ingestor(timed_store, GivenEmbedder(), batch_size=batch_size)
    started = time.perf_counter()
    summary = await ingestor.ingest(items)
    seconds = time.perf_counter() - started
    await store.run("forget_project", project=project)
    graph = sum(timed_store.seconds.values())
    return WriteFigures(
        episodes=count,
        seconds=seconds,
        episodes_per_s=count / seconds,
        neo4j_s=timed_store.seconds,
        graph_episodes_per_s=count / graph,
        summary=summary.as_dict(),
    )
