"""`maintain` (consolidation) on the benchmark corpus, on a copy of its database.

maintain writes (DUPLICATE_OF, patterns, retired snippets, the `consolidated` marks), so it
runs on a copy of the corpus's Neo4j store, made while that Neo4j is stopped and deleted
afterwards: the corpus the other parts measure stays as it was loaded. It runs the same
work as `metisgraph maintain --project P` (``consolidate`` with the configured settings,
then the situations of the episodes it saw as new), in process, twice: the first run over
the whole corpus, the second incremental (nothing changed in between, so it should read
almost nothing and write nothing). Then, with ``new`` > 0, the periodic case: the next
``new`` episodes of the same generator arrive (ingested as any batch is, their situations
written at ingest) and maintain runs a third time. Target: <= 60 s at 100k episodes.
"""

from __future__ import annotations

import asyncio
import shutil
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench.corpus import Corpus
from bench.database import BenchNeo4j, graph_store, running_neo4j
from bench.ingest_bench import parsed_items
from metisgraph.api.settings import load_settings
from metisgraph.graph import consolidate, digest_project, relate_situations
from metisgraph.graph.embedded import EmbeddedNeo4j
from metisgraph.graph.settings import EmbeddedNeo4jSettings
from metisgraph.graph.store import GraphStore
from metisgraph.ingest.embeddings import Embedder
from metisgraph.ingest.pipeline import Ingestor

__all__ = ["MaintainFigures", "NewEpisodes", "bench_maintain", "copy_store"]


@dataclass
class MaintainFigures:
    size: int
    runs: list[dict[str, Any]] = field(default_factory=list)  # first, second, after `new`
    same_digest: bool | None = None  # the second run left the graph as the first did
    copy_s: float = 0.0


def copy_store(home: Path, port: int) -> Path:
    """A copy of a stopped benchmark Neo4j's home (its data and password), beside it."""
    running = EmbeddedNeo4j(EmbeddedNeo4jSettings(home=home, port=port)).status().running
    if running:
        raise RuntimeError(f"{home} is in use by a running Neo4j: stop it before copying")
    copy = home.with_name(home.name + "-maintain")
    shutil.rmtree(copy, ignore_errors=True)
    shutil.copytree(home, copy, ignore=shutil.ignore_patterns("logs", "*.pid"))
    return copy


@dataclass(frozen=True)
class NewEpisodes:
    """The periodic case: how many episodes arrive after the two runs, embedded how."""

    count: int
    embedder: Embedder
    batch_size: int = 256


async def _maintain(store: GraphStore, project: str) -> dict[str, Any]:
    settings = load_settings().maintain.consolidation()
    started = time.perf_counter()
    report = await consolidate(store, project, settings, reconcile=relate_situations)
    seconds = time.perf_counter() - started
    figures = {**report.as_dict(), "wall_s": round(seconds, 2)}  # seconds: the stages
    print(f"maintain {project}: {figures}", flush=True)  # the digest after it takes minutes
    return figures


def _following(corpus: Corpus, count: int) -> Corpus:
    """The corpus with ``count`` more episodes: the same tasks first (the generator makes a
    smaller corpus a prefix of a larger one; only its last task may grow)."""
    return Corpus(corpus.seed, corpus.size + count, corpus.project)


async def _arrive(store: GraphStore, corpus: Corpus, new: NewEpisodes) -> dict[str, Any]:
    """Ingest the episodes the next ``new.count`` of the generator adds (and the last task
    again, which may have grown)."""
    known = sum(1 for _ in corpus.tasks())
    larger = _following(corpus, new.count)
    items = parsed_items(larger, (t for t in larger.tasks() if t.index >= known - 1))
    started = time.perf_counter()
    ingestor = Ingestor(store, new.embedder, batch_size=new.batch_size)
    summary = await ingestor.ingest(items)
    return {"ingest_s": round(time.perf_counter() - started, 1), **summary.as_dict()}


async def _runs(
    neo4j: BenchNeo4j, corpus: Corpus, new: NewEpisodes | None, digest: bool
) -> tuple[list[dict[str, Any]], bool | None]:
    runs, digests = [], []
    async with graph_store(neo4j, 384) as store:
        # A whole project's reads (maintain's, the digest's) run for minutes at 100k under
        # load: the batch bound, not the 60 s of a request.
        store.timeout = store.batch_timeout
        for _ in range(2):
            runs.append(await _maintain(store, corpus.project))
            if digest:
                digests.append(await digest_project(store, corpus.project))
        if new is not None and new.count > 0:
            arrived = await _arrive(store, corpus, new)
            runs.append({**await _maintain(store, corpus.project), "after": arrived})
    return runs, (digests[0] == digests[1]) if digests else None


def bench_maintain(
    home: Path,
    port: int,
    heap: str,
    pagecache: str,
    corpus: Corpus,
    new: NewEpisodes | None = None,
    digest: bool = True,
) -> MaintainFigures:
    """Two maintain runs on a copy of the corpus's stopped store at ``home``, then (with
    ``new``) a third after that many more episodes arrived. ``digest``: the graph's digest
    after each of the two (minutes at 100k)."""
    figures = MaintainFigures(size=corpus.size)
    started = time.perf_counter()
    copy = copy_store(home, port)
    figures.copy_s = round(time.perf_counter() - started, 1)
    try:
        with running_neo4j(copy, port, heap, pagecache) as neo4j:
            figures.runs, figures.same_digest = asyncio.run(_runs(neo4j, corpus, new, digest))
    finally:
        shutil.rmtree(copy, ignore_errors=True)
    return figures
