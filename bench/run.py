"""`make bench`: ingest, graph-write, recall, lineage, maintain and planContext benchmarks,
with a ChromaDB baseline for recall.

    python bench/run.py                      # sizes 10000,100000 (the first run embeds ~4 h)
    python bench/run.py --quick              # a 2,000-episode corpus, a few minutes
    python bench/run.py --sizes 10000 --only recall
    python bench/run.py --sizes 10000 --only plan    # planContext, and the SDK's overhead
    python bench/run.py --sizes 10000 --only maintain  # consolidation, on a copy of the DB
    python bench/run.py --sizes 10000 --only explore   # /explore in chromium: lineage drawn

Each part starts the benchmark's own embedded Neo4j (its own data directory under
bench/.cache and its own port) and stops it when done. Results go to bench/results/ as
JSON, and a table is printed. See docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import asyncio
import datetime as dt
import json
import os
import platform
import sys
import time
from dataclasses import asdict
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path[0] = str(ROOT)  # the repository, not bench/ (whose names must not shadow packages)

from bench.corpus import Corpus  # noqa: E402
from bench.database import graph_store, running_neo4j  # noqa: E402
from bench.embedcache import (  # noqa: E402
    CachedEmbedder,
    DerivedEmbedder,
    EmbeddingCache,
    cache_dir,
)
from bench.explore_bench import bench_explore, browser_missing  # noqa: E402
from bench.extract_bench import bench_extract  # noqa: E402
from bench.ingest_bench import GivenEmbedder, bench_graph_writes, bench_ingest  # noqa: E402
from bench.lineage_bench import LineageSample, bench_lineage, lineage_sample  # noqa: E402
from bench.maintain_bench import NewEpisodes, bench_maintain  # noqa: E402
from bench.plan_bench import bench_plan  # noqa: E402
from bench.recall_bench import (  # noqa: E402
    LONG_QUESTIONS,
    WARMUP_ASKS,
    bench_recall,
    build_chroma,
    corpus_signature,
    load_corpus,
)
from bench.report import print_table  # noqa: E402
from metisgraph.ingest.embeddings import Embedder  # noqa: E402

CACHE = ROOT / "bench" / ".cache"
RESULTS = ROOT / "bench" / "results"


def _options() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description="metisgraph benchmarks")
    parser.add_argument("--sizes", default="10000,100000", help="recall corpus sizes (episodes)")
    parser.add_argument("--quick", action="store_true", help="small sizes: a few minutes")
    parser.add_argument(
        "--only",
        default="extract,ingest,writes,recall,lineage,explore,maintain,plan",
        help="parts to run (comma separated)",
    )
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--ingest-episodes", type=int, default=1000)
    parser.add_argument("--write-episodes", type=int, default=10000)
    parser.add_argument("--batch-size", type=int, default=256)
    parser.add_argument(
        "--maintain-new",
        type=int,
        default=1000,
        help="maintain: episodes that arrive after the two runs, before a third (0: none)",
    )
    parser.add_argument(
        "--maintain-no-digest",
        action="store_true",
        help="maintain: skip the graph digests that check the second run changed nothing",
    )
    parser.add_argument(
        "--vectors",
        choices=("model", "given", "derived"),
        default="model",
        help="recall corpus vectors: the real model (cached), given random ones, or derived: "
        "the cached real vectors where they exist and real ones plus noise for the rest "
        "(fill the 10k cache first: bench/precompute.py --size 10000); given and derived "
        "measure latency only (R@5 is then not a quality figure)",
    )
    parser.add_argument(
        "--against",
        type=Path,
        help="lineage and recall: another checkout's `metisgraph` executable, served beside "
        "this one on the API port + 100 and asked the same questions in the same rotation "
        "(a before/after in one run)",
    )
    parser.add_argument(
        "--long-questions",
        type=int,
        default=LONG_QUESTIONS,
        help="recall: pasted traces and bug reports of the shared sets asked after the short "
        "questions (0: none; skipped when the shared data is absent)",
    )
    parser.add_argument(
        "--warmup",
        type=int,
        default=WARMUP_ASKS,
        help="recall and plan: questions (tasks) asked of every system first and not measured "
        "(Neo4j's JIT reaches its steady state after thousands of queries)",
    )
    parser.add_argument("--neo4j-port", type=int, default=7690)
    parser.add_argument("--api-port", type=int, default=8790)
    parser.add_argument("--heap", default="2g")
    parser.add_argument("--pagecache", default="2g")
    options = parser.parse_args()
    if options.quick:
        options.sizes = "2000"
        options.queries = 50
        options.ingest_episodes = 300
        options.write_episodes = 2000
    return options


def _machine() -> dict[str, Any]:
    return {
        "cpus": os.cpu_count(),
        "python": platform.python_version(),
        "load_average": [round(x, 2) for x in os.getloadavg()],
    }


async def _ingest_parts(options: argparse.Namespace, parts: set[str]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    home = CACHE / f"neo4j-{options.neo4j_port}-ingest"
    embedder = Embedder()
    embedder.load()
    with running_neo4j(home, options.neo4j_port, options.heap, options.pagecache) as neo4j:
        async with graph_store(neo4j, embedder.dimension) as store:
            if "writes" in parts:
                writes = await bench_graph_writes(
                    store, options.seed, options.write_episodes, options.batch_size
                )
                out["graph_writes"] = asdict(writes)
                print(f"graph writes: {writes.episodes_per_s:.0f} episodes/s", flush=True)
            if "ingest" in parts:
                ingest = await bench_ingest(
                    store, embedder, options.seed, options.ingest_episodes, options.batch_size
                )
                out["ingest"] = asdict(ingest)
                print(f"ingest: {ingest.episodes_per_s:.1f} episodes/s", flush=True)
    return out


async def _load(options: argparse.Namespace, size: int, neo4j: Any) -> tuple[Corpus, dict]:
    corpus, load, signature = await _corpus(options, size, neo4j)
    async with graph_store(neo4j, 384) as store:
        started = time.perf_counter()
        chroma = CACHE / f"chroma-{signature}"
        await build_chroma(store, corpus.project, chroma, size)
        load["chroma_s"] = round(time.perf_counter() - started, 1)
    return corpus, {**load, "chroma": str(chroma), "signature": signature}


def _embedder(options: argparse.Namespace) -> tuple[Embedder, str]:
    """The corpus's vectors: the real model (cached) or given ones; and the model's name."""
    if options.vectors == "model":
        base = Embedder()
        cache = EmbeddingCache(cache_dir(CACHE, base.settings.model, options.seed))
        return CachedEmbedder(cache, settings=base.settings), base.settings.model
    if options.vectors == "derived":
        cache = EmbeddingCache(cache_dir(CACHE, Embedder().settings.model, options.seed))
        return DerivedEmbedder(cache), "derived"
    return GivenEmbedder(), "given"


async def _corpus(
    options: argparse.Namespace, size: int, neo4j: Any
) -> tuple[Corpus, dict[str, Any], str]:
    """The corpus of this size loaded in its database (reused when it is there already)."""
    corpus = Corpus(options.seed, size, project=f"bench-s{options.seed}-n{size}")
    embedder, model = _embedder(options)
    signature = corpus_signature(options.seed, size, model, options.vectors)
    async with graph_store(neo4j, 384) as store:
        started = time.perf_counter()
        load = await load_corpus(store, embedder, corpus, signature, options.batch_size)
        if isinstance(embedder, DerivedEmbedder):
            load["derived_texts"] = embedder.derived
        if isinstance(embedder, CachedEmbedder):
            embedder.cache.flush()
            load["embedded_now"] = embedder.computed
        load["prepare_s"] = round(time.perf_counter() - started, 1)
        load["vectors"] = options.vectors
    return corpus, load, signature


def _lineage_part(options: argparse.Namespace, size: int) -> dict[str, Any]:
    home = CACHE / f"neo4j-{options.neo4j_port}-n{size}"
    with running_neo4j(home, options.neo4j_port, options.heap, options.pagecache) as neo4j:

        async def prepare() -> tuple[Corpus, dict[str, Any], LineageSample]:
            corpus, load, _ = await _corpus(options, size, neo4j)
            async with graph_store(neo4j, 384) as store:
                sample = await lineage_sample(store, corpus.project, 110, options.seed)
            return corpus, load, sample

        corpus, load, sample = asyncio.run(prepare())
        print(f"lineage corpus {size}: {load}; sample {sample.describe()}", flush=True)
        figures = bench_lineage(
            neo4j, corpus, sample, options.api_port, RESULTS / "logs", against=options.against
        )
    return {**asdict(figures), "load": load}


def _explore_part(options: argparse.Namespace, size: int) -> dict[str, Any]:
    """The explorer page drawing the sample's 20 largest lineages (a page holds 100
    sightings: a larger lineage draws its first 100)."""
    missing = browser_missing()
    if missing:
        print(f"explore {size}: skipped, {missing}", flush=True)
        return {"size": size, "skipped": missing}
    home = CACHE / f"neo4j-{options.neo4j_port}-n{size}"
    with running_neo4j(home, options.neo4j_port, options.heap, options.pagecache) as neo4j:

        async def prepare() -> tuple[Corpus, LineageSample]:
            corpus, _, _ = await _corpus(options, size, neo4j)
            async with graph_store(neo4j, 384) as store:
                sample = await lineage_sample(store, corpus.project, 110, options.seed)
            return corpus, sample

        corpus, sample = asyncio.run(prepare())
        largest: dict[str, dict[str, Any]] = {}
        for row in sorted(sample.small + sample.large, key=lambda r: -r["sightings"]):
            largest.setdefault(row["members_key"], row)
        chosen = list(largest.values())[:20]
        figures = bench_explore(neo4j, corpus, chosen, options.api_port, RESULTS / "logs")
    return asdict(figures)


def _maintain_part(options: argparse.Namespace, size: int) -> dict[str, Any]:
    home = CACHE / f"neo4j-{options.neo4j_port}-n{size}"
    with running_neo4j(home, options.neo4j_port, options.heap, options.pagecache) as neo4j:
        corpus, load, _ = asyncio.run(_corpus(options, size, neo4j))
    print(f"maintain corpus {size}: {load}", flush=True)
    new = NewEpisodes(options.maintain_new, _embedder(options)[0], options.batch_size)
    figures = bench_maintain(
        home,
        options.neo4j_port,
        options.heap,
        options.pagecache,
        corpus,
        new,
        digest=not options.maintain_no_digest,
    )
    return {**asdict(figures), "load": load}


def _plan_part(options: argparse.Namespace, size: int) -> dict[str, Any]:
    home = CACHE / f"neo4j-{options.neo4j_port}-n{size}"
    with running_neo4j(home, options.neo4j_port, options.heap, options.pagecache) as neo4j:
        corpus, load, _ = asyncio.run(_corpus(options, size, neo4j))
        print(f"plan corpus {size}: {load}", flush=True)
        figures = bench_plan(
            neo4j, corpus, options.queries, options.api_port, RESULTS / "logs", options.against,
            warmup_calls=options.warmup,
        )  # fmt: skip
    return {**asdict(figures), "load": load}


def _recall_part(options: argparse.Namespace, size: int) -> dict[str, Any]:
    home = CACHE / f"neo4j-{options.neo4j_port}-n{size}"
    with running_neo4j(home, options.neo4j_port, options.heap, options.pagecache) as neo4j:
        corpus, load = asyncio.run(_load(options, size, neo4j))
        print(f"recall corpus {size}: {load}", flush=True)
        figures = bench_recall(
            neo4j,
            corpus,
            Path(load["chroma"]),
            options.queries,
            (options.api_port, options.api_port + 1, options.api_port + 2),
            RESULTS / "logs",
            load,
            options.warmup,
            against=options.against,
            long_count=options.long_questions,
        )
    return asdict(figures)


def _save(results: dict[str, Any], path: Path, started: float) -> None:
    """Write the figures so far: a part that fails later keeps those before it."""
    RESULTS.mkdir(parents=True, exist_ok=True)
    results["machine_after"] = _machine()
    results["seconds"] = round(time.perf_counter() - started, 1)
    text = json.dumps(results, indent=2, default=str)
    path.write_text(text)
    (RESULTS / "latest.json").write_text(text)


def main() -> None:
    options = _options()
    parts = set(options.only.split(","))
    sizes = [int(size) for size in options.sizes.split(",") if size]
    results: dict[str, Any] = {
        "started": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "options": vars(options),
        "machine_before": _machine(),
        "complete": False,
    }
    started = time.perf_counter()
    stamp = dt.datetime.now(dt.UTC).strftime("%Y%m%dT%H%M%SZ")
    path = RESULTS / f"bench-{stamp}.json"
    if "extract" in parts:
        extract = bench_extract(options.seed)
        results["extract"] = asdict(extract)
        print(f"error extraction: {extract.megabytes_per_s:.2f} MB/s", flush=True)
        _save(results, path, started)
    if parts & {"ingest", "writes"}:
        results.update(asyncio.run(_ingest_parts(options, parts)))
        _save(results, path, started)
    per_size = (
        ("lineage", _lineage_part),
        ("explore", _explore_part),
        ("maintain", _maintain_part),
        ("plan", _plan_part),
        ("recall", _recall_part),
    )
    for name, part in per_size:
        if name not in parts:
            continue
        results[name] = []
        for size in sizes:
            results[name].append(part(options, size))
            _save(results, path, started)
    results["complete"] = True
    _save(results, path, started)
    print_table(results)
    print(f"\nresults: {path.relative_to(ROOT)} ({results['seconds']:.0f} s)")


if __name__ == "__main__":
    main()
