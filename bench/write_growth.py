"""Which step of the write path costs more per episode as the store grows.

One project filled through the ingest pipeline (vectors given: no model) a segment at a
time; every statement the pipeline runs — each step of a batch's write transaction, the
reads before it, the derivation after it — is timed by its query name. Per segment: the
store's size before it and each statement's milliseconds per episode. A step whose cost
grows with the store shows a rising column (an index seek's log N aside).

    cpu bench python bench/write_growth.py --episodes 10000 --segment 1000

Own Neo4j (bench/.cache/neo4j-<port>-growth, emptied first); results in
bench/results/write_growth.json.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import sys
import time
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path[0] = str(ROOT)  # the repository, not bench/ (whose names must not shadow packages)

from neo4j import AsyncManagedTransaction, unit_of_work  # noqa: E402

from bench.corpus import Corpus  # noqa: E402
from bench.database import graph_store, running_neo4j  # noqa: E402
from bench.ingest_bench import GivenEmbedder, parsed_items  # noqa: E402
from metisgraph.graph.cypher import Query, query  # noqa: E402
from metisgraph.graph.store import GraphStore, Transaction  # noqa: E402
from metisgraph.ingest.pipeline import Ingestor  # noqa: E402
from metisgraph.ingest.records import EpisodeRecord  # noqa: E402

CACHE = ROOT / "bench" / ".cache"
RESULTS = ROOT / "bench" / "results"


def _name(step: str | Query) -> str:
    return step if isinstance(step, str) else step.name


class _TimedTx(Transaction):
    def __init__(self, tx: AsyncManagedTransaction, seconds: dict[str, float]) -> None:
        super().__init__(tx)
        self._seconds = seconds

    async def run_query(self, step: str | Query, params: dict[str, Any]) -> list[dict[str, Any]]:
        started = time.perf_counter()
        try:
            return await super().run_query(step, params)
        finally:
            key = _name(step)
            self._seconds[key] = self._seconds.get(key, 0.0) + time.perf_counter() - started


class StepTimedStore(GraphStore):
    """A GraphStore that adds up the wall time of each statement by its query's name."""

    def __init__(self, store: GraphStore) -> None:
        super().__init__(store.driver, store.database)
        self.seconds: dict[str, float] = {}

    def _add(self, key: str, started: float) -> None:
        self.seconds[key] = self.seconds.get(key, 0.0) + time.perf_counter() - started

    async def run(self, name: str, **params: Any) -> list[dict[str, Any]]:
        started = time.perf_counter()
        try:
            return await self.run_query(query(name), params)
        finally:
            self._add(name, started)

    async def write_many(
        self,
        steps: Sequence[tuple[str | Query, dict[str, Any]]],
        then: Callable[[Transaction], Awaitable[object]] | None = None,
    ) -> list[dict[str, Any]]:
        seconds = self.seconds

        @unit_of_work(timeout=self.timeout)
        async def work(tx: AsyncManagedTransaction) -> list[dict[str, Any]]:
            timed = _TimedTx(tx, seconds)
            rows: list[dict[str, Any]] = []
            for step, params in steps:
                rows = await timed.run_query(step, params)
            if then is not None:
                await then(timed)
            return rows

        started = time.perf_counter()
        try:
            async with self.driver.session(database=self.database) as session:
                return await session.execute_write(work)
        finally:
            self._add("(transaction)", started)


async def _size(store: GraphStore, project: str) -> int:
    rows = await store.run("bench_project_size", project=project)
    return int(rows[0]["episodes"])


async def grow(store: GraphStore, episodes: int, segment: int, batch: int) -> dict[str, Any]:
    project = "bench-growth"
    corpus = Corpus(20261204, episodes, project=project)
    items = parsed_items(corpus)
    segments: list[dict[str, Any]] = []
    start = 0
    while start < len(items):
        # a segment of about `segment` episodes, cut at a task's end (the corpus's order)
        end, count = start, 0
        while end < len(items) and (count < segment or not _starts_task(items[end])):
            count += isinstance(items[end].record, EpisodeRecord)
            end += 1
        before = await _size(store, project)
        timed = StepTimedStore(store)
        ingestor = Ingestor(timed, GivenEmbedder(), batch_size=batch)
        started = time.perf_counter()
        await ingestor.ingest(items[start:end])
        seconds = time.perf_counter() - started
        segments.append(
            {
                "before": before,
                "episodes": count,
                "episodes_per_s": round(count / seconds, 1),
                "ms_per_episode": {
                    k: round(1000 * v / count, 3) for k, v in sorted(timed.seconds.items())
                },
            }
        )
        print(json.dumps(segments[-1]), flush=True)
        start = end
    return {"project": project, "batch": batch, "segments": segments}


def _starts_task(item: Any) -> bool:
    return not isinstance(item.record, EpisodeRecord)


def table(result: dict[str, Any]) -> str:
    """Each statement's ms/episode in the first and the last segment, the largest first."""
    first, last = result["segments"][0], result["segments"][-1]
    names = sorted(
        set(first["ms_per_episode"]) | set(last["ms_per_episode"]),
        key=lambda k: -last["ms_per_episode"].get(k, 0.0),
    )
    lines = [f"{'statement':32} {first['before']:>8} {last['before']:>8}  (store size before)"]
    for k in names:
        a, b = first["ms_per_episode"].get(k, 0.0), last["ms_per_episode"].get(k, 0.0)
        lines.append(f"{k:32} {a:8.3f} {b:8.3f}")
    lines.append(f"{'episodes/s':32} {first['episodes_per_s']:8.1f} {last['episodes_per_s']:8.1f}")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=10_000)
    parser.add_argument("--segment", type=int, default=1000)
    parser.add_argument("--batch-size", type=int, default=256)
    parser.add_argument("--neo4j-port", type=int, default=7695)
    parser.add_argument("--heap", default="1g")
    parser.add_argument("--pagecache", default="1g")
    parser.add_argument("--out", type=Path, default=RESULTS / "write_growth.json")
    options = parser.parse_args()
    home = CACHE / f"neo4j-{options.neo4j_port}-growth"
    shutil.rmtree(home, ignore_errors=True)

    async def run(neo4j: Any) -> dict[str, Any]:
        async with graph_store(neo4j, 384) as store:
            return await grow(store, options.episodes, options.segment, options.batch_size)

    with running_neo4j(home, options.neo4j_port, options.heap, options.pagecache) as neo4j:
        result = asyncio.run(run(neo4j))
    result["loadavg"] = os.getloadavg()
    options.out.parent.mkdir(parents=True, exist_ok=True)
    options.out.write_text(json.dumps(result, indent=1))
    print(table(result))
    print("load average:", Path("/proc/loadavg").read_text().strip())


if __name__ == "__main__":
    main()
