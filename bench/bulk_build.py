"""A store of the bench corpus built through the bulk path (`metisgraph ingest --bulk`'s way).

The corpus of ``--size`` episodes (bench/corpus.py, seed 7: its errors recur across tasks
with the same signature) with vectors derived from the 10k cache of real ones
(bench/embedcache.py's `DerivedEmbedder`), written as import files by the pipeline's
preparation (ingest/pipeline/bulk.py), loaded by `neo4j-admin database import` into a new
embedded Neo4j (its own home and port), started, its schema applied and awaited (the
vector and full-text indexes populated), then every batch's derivations run by the
pipeline's own statements. Timed "from the first record read to the last commit", each
phase apart; the store's size on disk; the load before and after. The store is kept
(marked with run.py's corpus signature, so `bench/run.py --vectors derived` reuses it).

    python bench/bulk_build.py --size 100000 --embeddings PATH/seed-7
"""

from __future__ import annotations

import argparse
import asyncio
import json
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.corpus import Corpus
from bench.embedcache import DerivedEmbedder, EmbeddingCache
from bench.recall_bench import corpus_signature
from bench.write_growth import StepTimedStore
from metisgraph.graph.embedded import EmbeddedNeo4j, import_database
from metisgraph.graph.indexes import apply_schema
from metisgraph.graph.migrations import record_current
from metisgraph.graph.settings import EmbeddedNeo4jSettings
from metisgraph.graph.store import GraphStore, open_driver
from metisgraph.ingest.adapters.base import Parsed, SourceRef, validate_record
from metisgraph.ingest.migrations import MIGRATIONS
from metisgraph.ingest.pipeline.bulk import AFTER_DERIVE, BESIDE_DERIVE, BulkIngestor

CACHE = Path(__file__).resolve().parent / ".cache"


def _load() -> str:
    return Path("/proc/loadavg").read_text().split()[0]


def _items(corpus: Corpus) -> Iterator[Any]:
    ref = SourceRef("bench")
    for task in corpus.tasks():
        for record in task.records:
            parsed = validate_record(record, ref)
            assert isinstance(parsed, Parsed), parsed
            yield parsed


def _progress(
    path: Path | None, store: GraphStore, started: float
) -> Callable[[int, int], None] | None:
    """One JSON line per derived plan (``--progress``): its index, the episodes derived so
    far, the seconds since the derive began and, with ``--step-times``, each statement's
    seconds in this plan alone — the derive's cost per batch as the store fills."""
    if path is None:
        return None
    out = path.open("a", buffering=1)
    derived, last, seen = 0, time.perf_counter(), dict[str, float]()

    def after(index: int, episodes: int) -> None:
        nonlocal derived, last, seen
        now = time.perf_counter()
        derived += episodes
        row: dict[str, Any] = {"plan": index, "episodes": derived, "load": _load()}
        row.update(elapsed_s=round(now - started, 2), plan_s=round(now - last, 3))
        if isinstance(store, StepTimedStore):
            steps = {k: v - seen.get(k, 0.0) for k, v in store.seconds.items()}
            row["steps_s"] = {k: round(v, 3) for k, v in steps.items() if v > 0.0005}
            seen = dict(store.seconds)
        last = now
        out.write(json.dumps(row) + "\n")

    return after


def _files_progress(path: Path | None, started: float) -> Callable[[int], None] | None:
    """A JSON line each 10,000 episodes prepared and written (``--progress``)."""
    if path is None:
        return None
    out = path.open("a", buffering=1)
    step = 10_000
    mark, done = step, 0

    def progress(more: int) -> None:  # the episodes (or refused records) just done
        nonlocal mark, done
        done += more
        if done >= mark:
            seconds = round(time.perf_counter() - started, 2)
            out.write(json.dumps({"phase": "files", "records": done, "elapsed_s": seconds,
                                  "load": _load()}) + "\n")  # fmt: skip
            mark = (done // step + 1) * step

    return progress


def _disk(path: Path) -> int:
    out = subprocess.run(["du", "-sb", str(path)], capture_output=True, text=True, check=True)
    return int(out.stdout.split()[0])


async def build(options: argparse.Namespace) -> dict[str, Any]:
    size, seed = options.size, options.seed
    corpus = Corpus(seed, size, project=f"bench-s{seed}-n{size}")
    home = options.home or CACHE / "stores" / f"bulk-s{seed}-n{size}"
    work = CACHE / "bulk-work" / f"s{seed}-n{size}"
    shutil.rmtree(work, ignore_errors=True)
    embedder = DerivedEmbedder(EmbeddingCache(options.embeddings))
    settings = EmbeddedNeo4jSettings(
        home=home, port=options.port, heap=options.heap, heap_max=options.heap,
        pagecache=options.pagecache,
    )  # fmt: skip
    server = EmbeddedNeo4j(settings)
    server.stop()
    out: dict[str, Any] = {"size": size, "load_before": _load()}
    bulk = BulkIngestor(embedder, batch_size=options.batch_size, workers=options.workers)
    started = time.perf_counter()
    files = await bulk.write_files(
        _items(corpus), work, on_progress=_files_progress(options.progress, started)
    )
    out["files_s"] = round(time.perf_counter() - started, 1)
    out["files_bytes"] = _disk(work / "import")
    out["load_after_files"] = _load()
    run = import_database(server, files.arguments, heap=options.heap)
    out["import_s"] = round(run.seconds, 1)
    # imported: the files go (20 GB at 1M); the derive reads only the plans
    shutil.rmtree(work / "import", ignore_errors=True)
    mark = time.perf_counter()
    server.start()
    driver = open_driver(server.uri, "neo4j", server.password())
    try:
        store = GraphStore(driver, timeout=3600)
        await record_current(store, MIGRATIONS)
        # the schema as the derive applies it: episode_vectors populates beside the derive
        # (from here on), snippet_embedding is built after it
        await apply_schema(store, embedder.dimension, later=AFTER_DERIVE, populating=BESIDE_DERIVE)
        out["start_schema_s"] = round(time.perf_counter() - mark, 1)
        mark = time.perf_counter()
        timed = StepTimedStore(store) if options.step_times else store
        planned = _progress(options.progress, timed, mark)
        last_plan = [mark]

        def after_plan(index: int, episodes: int) -> None:
            if planned is not None:
                planned(index, episodes)
            last_plan[0] = time.perf_counter()

        await bulk.derive(files, timed, after_plan)
        done = time.perf_counter()
        out["derive_s"] = round(done - mark, 1)
        # after the last plan: families, the kept counts, episode_vectors' population (or
        # its merge) finished and snippet_embedding populated whole
        out["after_plans_s"] = round(done - last_plan[0], 1)
        if isinstance(timed, StepTimedStore):  # each statement's seconds, costliest first
            ranked = sorted(timed.seconds.items(), key=lambda kv: -kv[1])
            out["derive_steps_s"] = {k: round(v, 1) for k, v in ranked[:25]}
        signature = corpus_signature(seed, size, "derived", "derived")
        await store.run("bench_mark_corpus", project=corpus.project, signature=signature)
    finally:
        await driver.close()
    total = time.perf_counter() - started
    out["total_s"] = round(total, 1)
    out["episodes"] = files.counts.get("Episode", 0)
    out["episodes_per_s"] = round(out["episodes"] / total, 1)
    out["summary"] = files.summary.as_dict()
    out["load_after"] = _load()
    if not options.keep_running:
        server.stop()
    out["store_bytes"] = _disk(home / "data")
    out["home"] = str(home)
    shutil.rmtree(work, ignore_errors=True)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--size", type=int, default=10000)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--embeddings", type=Path, required=True, help="the 10k cache's folder")
    parser.add_argument("--home", type=Path)
    parser.add_argument("--port", type=int, default=7791)
    parser.add_argument("--heap", default="2g")
    parser.add_argument("--pagecache", default="2g")
    parser.add_argument("--batch-size", type=int, default=1024)
    parser.add_argument("--keep-running", action="store_true")
    parser.add_argument("--workers", type=int, help="preparing processes (default: the cores)")
    parser.add_argument("--step-times", action="store_true", help="time each derive statement")
    parser.add_argument("--progress", type=Path, help="a JSON line per derived plan, to this file")
    options = parser.parse_args()
    print(json.dumps(asyncio.run(build(options)), indent=2), flush=True)


if __name__ == "__main__":
    main()
