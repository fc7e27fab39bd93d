"""One vector search against the segments of its index, on a copy of a bench store.

A Lucene vector index is a set of segments, each with its own HNSW graph, and a search
walks every one. This times the floor query (`bench_nearest_episodes`: one filtered search
of episode_vectors, k 10) over Bolt — warm-up, then timed searches with stored text vectors
plus a little noise — then, with ``--rebuild``, drops the large vector indexes, creates
them again under this server's settings (graph/embedded/server.py `VECTOR_SEGMENTS`, and
``--config`` lines over them) and times the same searches again. Each index's segment
count is read from its folder before and after. Work on a copy: the rebuild changes the
store (as `metisgraph schema repair --index` would).

    cp -a bench/.cache/neo4j-7790-n100000 /tmp/seg100k
    cpu bench python bench/vector_segments.py --home /tmp/seg100k --project bench-s7-n100000 \\
        --rebuild [--config '{"internal.dbms.index.vector.post_population_compaction": "AUTO"}']
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from metisgraph.graph.embedded import EmbeddedNeo4j
from metisgraph.graph.indexes import apply_schema
from metisgraph.graph.settings import EmbeddedNeo4jSettings
from metisgraph.graph.store import GraphStore, open_driver

LARGE = ("episode_vectors", "snippet_embedding", "error_embedding")


def segments(home: Path) -> dict[str, int]:
    """Each vector index folder's Lucene segments (its `.si` files), by the index's id."""
    root = home / "data" / "databases" / "neo4j" / "schema" / "index"
    return {d.parent.name: len(list(d.glob("*.si"))) for d in sorted(root.glob("vector-*/*/1"))}


async def timed_searches(
    store: GraphStore, project: str, vectors: list[list[float]], n: int
) -> dict[str, float]:
    times = []
    for i in range(n):
        started = time.perf_counter()
        await store.run("bench_nearest_episodes", vector=vectors[i % len(vectors)],
                        project=project, k=10)  # fmt: skip
        times.append((time.perf_counter() - started) * 1000)
    times.sort()
    return {"p50_ms": round(statistics.median(times), 2),
            "p95_ms": round(times[int(len(times) * 0.95)], 2)}  # fmt: skip


async def run(options: argparse.Namespace) -> dict[str, Any]:
    settings = EmbeddedNeo4jSettings(
        home=options.home, port=options.port, heap=options.heap, heap_max=options.heap,
        pagecache=options.heap, config=json.loads(options.config),
    )  # fmt: skip
    server = EmbeddedNeo4j(settings)
    server.start()
    store = GraphStore(open_driver(server.uri, "neo4j", server.password()), timeout=7200)
    out: dict[str, Any] = {"config": settings.config}
    try:
        rows = await store.run("bench_text_vectors", project=options.project, limit=2000)
        rng = random.Random(7)
        vectors = [[x + rng.gauss(0, 0.02) for x in r["embedding"]]
                   for r in rng.sample(rows, min(300, len(rows)))]  # fmt: skip
        out["before"] = {"segments": segments(options.home)}
        await timed_searches(store, options.project, vectors, options.warmup)
        out["before"] |= await timed_searches(store, options.project, vectors, options.n)
        if options.rebuild:
            started = time.perf_counter()
            for name in LARGE:
                await store.run("drop_index", index=name)
            await apply_schema(store, len(vectors[0]), timeout_s=3600)
            out["rebuild_s"] = round(time.perf_counter() - started, 1)
            await asyncio.sleep(3)  # the old segments' files go
            out["after"] = {"segments": segments(options.home)}
            await timed_searches(store, options.project, vectors, options.warmup)
            out["after"] |= await timed_searches(store, options.project, vectors, options.n)
    finally:
        await store.driver.close()
        server.stop()
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--home", type=Path, required=True, help="a copy of a bench store")
    parser.add_argument("--project", required=True)
    parser.add_argument("--port", type=int, default=7742)
    parser.add_argument("--heap", default="2g", help="heap and page cache")
    parser.add_argument("--warmup", type=int, default=300)
    parser.add_argument("-n", type=int, default=600)
    parser.add_argument("--rebuild", action="store_true")
    parser.add_argument("--config", default="{}", help="neo4j.conf lines, a JSON object")
    print(json.dumps(asyncio.run(run(parser.parse_args())), indent=2))


if __name__ == "__main__":
    main()
