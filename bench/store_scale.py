"""How the store's own cost grows to 1M episodes: Neo4j's vector index next to ChromaDB's.

A one-off study, not part of `make bench` (the 1M load takes a while): at each size, a
Neo4j of its own (bench/.cache/neo4j-<port>-store-n<size>) holds that many `Episode`
nodes with the properties recall's vector channel filters on and one derived vector each
(`DerivedEmbedder`'s rule: real vectors of the 10k cache, plus noise and renormalised for
every episode past the first 19,746), and a Chroma collection holds the same vectors.
Then the two servers of the recall benchmark answer the same real questions (embedded by
the model through the same query path): `bench/neo4j_vector_server.py` (one vector search
in Neo4j, the floor of any metisgraph answer) and `bench/chroma_server.py`, one request at
a time, alternating which goes first, after a warm-up. Reported per size: p50/p95 of each,
the ratio, the load time, the store's size on disk and each server's resident memory.

The whole graph at 1M (tasks, errors, environments, snippets through the ingest pipeline)
is not built here: through the pipeline that is hours on this machine (see
docs/benchmarks.md); this measures the part of recall's cost that grows with the corpus.

    python bench/store_scale.py --sizes 10000,100000,1000000
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path[0] = str(ROOT)  # the repository, not bench/ (whose names must not shadow packages)

import httpx  # noqa: E402
import numpy as np  # noqa: E402

from bench.corpus import Corpus  # noqa: E402
from bench.database import BenchNeo4j, graph_store, running_neo4j  # noqa: E402
from bench.embedcache import EmbeddingCache, cache_dir, derived_vector  # noqa: E402
from bench.recall_bench import chroma_server, floor_server, percentile, rss_mb  # noqa: E402
from metisgraph.graph.indexes import await_indexes  # noqa: E402
from metisgraph.graph.vectors import Vector  # noqa: E402
from metisgraph.ingest.embeddings import Embedder  # noqa: E402

CACHE = ROOT / "bench" / ".cache"
RESULTS = ROOT / "bench" / "results"
PROJECT = "bench-store"
NOISE = 0.6  # as DerivedEmbedder: cosine ~0.86 to the real vector a derived one starts from
BATCH = 2_000


def vectors(pool: np.ndarray, start: int, stop: int) -> np.ndarray:
    """Episode ``start``..``stop``'s vectors: the pool's own first, then derived ones."""
    out = np.empty((stop - start, pool.shape[1]), dtype=np.float32)
    for row, i in enumerate(range(start, stop)):
        if i < len(pool):
            out[row] = pool[i]
            continue
        out[row] = derived_vector(pool, i, NOISE)
    return out


async def load_neo4j(neo4j: BenchNeo4j, pool: np.ndarray, size: int) -> float:
    async with graph_store(neo4j, pool.shape[1]) as store:
        have = (await store.run("bench_store_count", project=PROJECT))[0]["n"]
        if have == size:
            return 0.0
        if have:
            raise SystemExit(f"{neo4j.settings.home} holds {have} episodes, not {size}: delete it")
        started = time.perf_counter()
        for start in range(0, size, BATCH):
            block = vectors(pool, start, min(size, start + BATCH))
            rows = [{"id": f"e{start + j:07d}", "vector": Vector(v.tolist())}
                    for j, v in enumerate(block)]  # fmt: skip
            await store.run("bench_store_episodes", rows=rows, project=PROJECT)
            if start % 100_000 == 0:
                print(f"  neo4j {start:,} / {size:,}", flush=True)
        # Await the index: a search before population ends would measure a partial index.
        await await_indexes(store, stall_s=3600)
        return time.perf_counter() - started


def load_chroma(path: Path, pool: np.ndarray, size: int) -> float:
    import chromadb

    client = chromadb.PersistentClient(path=str(path))
    existing = {c.name for c in client.list_collections()}
    if "episodes" in existing and client.get_collection("episodes").count() == size:
        return 0.0
    if "episodes" in existing:
        client.delete_collection("episodes")
    collection = client.create_collection("episodes", metadata={"hnsw:space": "cosine"})
    started = time.perf_counter()
    for start in range(0, size, 5_000):
        block = vectors(pool, start, min(size, start + 5_000))
        collection.add(
            ids=[f"e{start + j:07d}" for j in range(len(block))], embeddings=block.tolist()
        )
    return time.perf_counter() - started


def du_mb(path: Path) -> float:
    return round(sum(p.stat().st_size for p in path.rglob("*") if p.is_file()) / 2**20, 1)


def ask(client: httpx.Client, url: str, text: str) -> float:
    started = time.perf_counter()
    response = client.post(url, json={"text": text, "k": 5})
    response.raise_for_status()
    return (time.perf_counter() - started) * 1000


def measure(floor_url: str, chroma_url: str, texts: list[str], warmup: int) -> dict[str, Any]:
    figures: dict[str, list[float]] = {"neo4j_vector": [], "chroma": []}
    with httpx.Client(timeout=60) as client:
        for i in range(warmup):
            ask(client, floor_url, texts[i % 20])
            ask(client, chroma_url, texts[i % 20])
        for number, text in enumerate(texts[20:]):
            order = ("neo4j_vector", "chroma") if number % 2 == 0 else ("chroma", "neo4j_vector")
            for name in order:
                url = floor_url if name == "neo4j_vector" else chroma_url
                figures[name].append(ask(client, url, text))
    out: dict[str, Any] = {}
    for name, values in figures.items():
        out[name] = {
            "p50_ms": round(float(np.median(values)), 2),
            "p95_ms": round(percentile(values, 0.95), 2),
        }
    out["ratio_p50"] = round(out["neo4j_vector"]["p50_ms"] / out["chroma"]["p50_ms"], 2)
    out["ratio_p95"] = round(out["neo4j_vector"]["p95_ms"] / out["chroma"]["p95_ms"], 2)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sizes", default="10000,100000,1000000")
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--warmup", type=int, default=1500)
    parser.add_argument("--neo4j-port", type=int, default=7695)
    parser.add_argument("--api-port", type=int, default=8795)
    parser.add_argument("--heap", default="2g")
    parser.add_argument("--pagecache", default="4g")
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    cache = EmbeddingCache(cache_dir(CACHE, Embedder().settings.model, args.seed))
    if not len(cache):
        raise SystemExit("no real vectors: run bench/precompute.py --size 10000 first")
    pool = cache.vectors()
    questions = Corpus(args.seed, 10_000).queries(args.queries + 20)
    texts = [f"{q.text}\n{q.error}" if q.error else q.text for q in questions]
    results: dict[str, Any] = {"started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
    results["pool"] = len(pool)
    results["sizes"] = []
    out = RESULTS / f"store-scale-{time.strftime('%Y%m%dT%H%M%SZ', time.gmtime())}.json"
    RESULTS.mkdir(parents=True, exist_ok=True)
    for size in (int(s) for s in args.sizes.split(",")):
        home = CACHE / f"neo4j-{args.neo4j_port}-store-n{size}"
        chroma_path = CACHE / f"chroma-store-n{size}"
        load_before = os.getloadavg()
        with running_neo4j(home, args.neo4j_port, args.heap, args.pagecache) as neo4j:
            neo4j_s = asyncio.run(load_neo4j(neo4j, pool, size))
            chroma_s = load_chroma(chroma_path, pool, size)
            print(f"{size:,}: loaded (neo4j {neo4j_s:.0f} s, chroma {chroma_s:.0f} s)", flush=True)
            logs = RESULTS / "logs"
            logs.mkdir(parents=True, exist_ok=True)
            with (
                floor_server(neo4j, PROJECT, args.api_port, logs / "store-floor.log") as floor,
                chroma_server(
                    chroma_path, "episodes", args.api_port + 1, logs / "store-chroma.log"
                ) as chroma,
            ):
                figures = measure(floor, chroma, texts, args.warmup)
                figures["rss_mb"] = {
                    "neo4j": rss_mb(args.neo4j_port),
                    "floor_api": rss_mb(args.api_port),
                    "chroma_api": rss_mb(args.api_port + 1),
                }
        figures.update(
            size=size,
            load_s={"neo4j": round(neo4j_s, 1), "chroma": round(chroma_s, 1)},
            disk_mb={"neo4j": du_mb(home / "data"), "chroma": du_mb(chroma_path)},
            load_average=[
                [round(x, 2) for x in load_before],
                [round(x, 2) for x in os.getloadavg()],
            ],
        )
        results["sizes"].append(figures)
        out.write_text(json.dumps(results, indent=2))
        print(json.dumps(figures), flush=True)
    print(f"results: {out}")


if __name__ == "__main__":
    main()
