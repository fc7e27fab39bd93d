"""Every read of issue 24 on one store built elsewhere (bench/bulk_build.py), through the API.

    python bench/reads_at.py prepare --size 1000000          # once, before the bench window
    cpu bench python bench/reads_at.py run --home PATH --size 1000000 --heap 4g --pagecache 6g \
        --embeddings bench/.cache/embeddings/all-MiniLM-L6-v2/seed-7 [--copy | --in-place]

`prepare` keeps what the generator gives for a size (minutes at 1M): the questions (recall
and planContext) and the records of the next `--new` episodes, in bench/.cache/reads-at.
`run` starts the store's Neo4j with the heap and page cache given (`--copy`: on a copy of
the stopped home, deleted after; `--in-place`: the home itself — Neo4j's own logs change,
and the last step, maintain, writes into it), picks lineages by their sightings (at most
100, and thousands: bench/lineage_bench.py's sample, read in Cypher), then `metisgraph
serve` answers, one request at a time after a warm-up: recall, planContext (bench/
plan_bench.py's request), lineage small and large, `errors` first and next pages in each
order, analytics at its default cap. Then, the API stopped, maintain's periodic run: the
store's episodes are counted as maintained (`bench_mark_maintained`; `--maintain whole`
runs the first whole run instead, ~15 min at 1M), the next `--new` episodes arrive through
the pipeline (vectors derived as the store's were) and maintain runs. Recorded beside:
Neo4j's heap and page cache, the store's bytes on disk, the resident memory of the API
and of Neo4j, the load average before and after each part (each timed read waits first for
the 1-minute load to fall to `--settle`, 1.5: the bench's own start-up and previous part
raise it). JSON in bench/results.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path[0] = str(ROOT)  # the repository, not bench/ (whose names must not shadow packages)

import httpx  # noqa: E402

from bench.corpus import Corpus, Query  # noqa: E402
from bench.database import BenchNeo4j, graph_store, running_neo4j  # noqa: E402
from bench.embedcache import DerivedEmbedder, EmbeddingCache  # noqa: E402
from bench.lineage_bench import (  # noqa: E402
    _analytics,
    _error_pages,
    _lineages,
    lineage_sample,
)
from bench.maintain_bench import _maintain  # noqa: E402
from bench.plan_bench import _raw  # noqa: E402
from bench.recall_bench import (  # noqa: E402
    _ask_metisgraph,
    _stage_means_ms,
    _stage_seconds,
    metisgraph_server,
    percentile,
    rss_mb,
)
from metisgraph.graph.analytics.model import DEFAULT_CAP  # noqa: E402
from metisgraph.ingest.adapters.base import Parsed, SourceRef, validate_record  # noqa: E402
from metisgraph.ingest.pipeline import Ingestor  # noqa: E402

CACHE = ROOT / "bench" / ".cache"
RESULTS = ROOT / "bench" / "results"
_WARM_QUESTIONS = 20  # asked (cycling) before the measured ones, never measured


def _load() -> list[float]:
    return [float(x) for x in Path("/proc/loadavg").read_text().split()[:3]]


def _settle(below: float, at_most: float) -> dict[str, Any]:
    """Wait until the 1-minute load average is at most ``below`` (the bench's own start-up
    and its previous part raise it; a figure taken above 1.5 is not a result), for at most
    ``at_most`` seconds. What was waited and whether it settled go beside the figure."""
    started = time.perf_counter()
    while _load()[0] > below and time.perf_counter() - started < at_most:
        time.sleep(2)
    return {"waited_s": round(time.perf_counter() - started, 1), "settled": _load()[0] <= below}


def _disk(path: Path) -> int:
    out = subprocess.run(["du", "-sb", str(path)], capture_output=True, text=True, check=True)
    return int(out.stdout.split()[0])


def _summary(values: list[float]) -> dict[str, Any]:
    return {
        "n": len(values),
        "p50_ms": round(statistics.median(values), 2),
        "p95_ms": round(percentile(values, 0.95), 2),
        "max_ms": round(max(values), 2),
    }


# ---------------------------------------------------------------- what the generator gives


def inputs_path(seed: int, size: int, new: int) -> Path:
    return CACHE / "reads-at" / f"s{seed}-n{size}-new{new}.json"


def prepare(seed: int, size: int, new: int, questions: int) -> dict[str, Any]:
    """The questions about a corpus of ``size`` and the records of the ``new`` episodes that
    follow it (the last task again, which may grow: bench/maintain_bench.py's _arrive)."""
    corpus = Corpus(seed, size, project=f"bench-s{seed}-n{size}")  # as bench/bulk_build.py's
    known = sum(1 for _ in corpus.tasks())
    larger = Corpus(seed, size + new, project=corpus.project)
    records = [r for t in larger.tasks() if t.index >= known - 1 for r in t.records]
    out = {"queries": corpus.queries(questions), "records": records}
    path = inputs_path(seed, size, new)
    path.parent.mkdir(parents=True, exist_ok=True)
    kept = [{**vars(q), "relevant": sorted(q.relevant)} for q in out["queries"]]
    path.write_text(json.dumps({"queries": kept, "records": records}))
    print(f"{path}: {len(out['queries'])} questions, {len(records)} records", flush=True)
    return out


def inputs(seed: int, size: int, new: int, questions: int) -> dict[str, Any]:
    path = inputs_path(seed, size, new)
    if path.exists():
        kept: dict[str, Any] = json.loads(path.read_text())
        if len(kept["queries"]) >= questions:
            queries = [{**q, "relevant": frozenset(q["relevant"])} for q in kept["queries"]]
            return {"queries": [Query(**q) for q in queries], "records": kept["records"]}
    return prepare(seed, size, new, questions)


# ---------------------------------------------------------------- the reads, over HTTP


def _recall(client: httpx.Client, url: str, project: str, asked: list[Query], warm: int) -> dict:
    warmup, measured = asked[:_WARM_QUESTIONS], asked[_WARM_QUESTIONS:]
    for i in range(warm):
        _ask_metisgraph(client, url, project, warmup[i % len(warmup)])
    before = _stage_seconds(client, url)
    times, hits, abstained = [], 0, 0
    for q in measured:
        started = time.perf_counter()
        ids, result = _ask_metisgraph(client, url, project, q)
        times.append((time.perf_counter() - started) * 1000)
        hits += bool(set(ids) & q.relevant)
        abstained += bool(result["abstained"])
    stages = _stage_means_ms(before, _stage_seconds(client, url))
    return {
        **_summary(times),
        "mean_ms": round(statistics.mean(times), 2),
        "warmup_asks": warm,
        "hit@5": round(hits / len(measured), 3),  # derived vectors: not a quality figure
        "abstained": abstained,
        "server_stage_mean_ms": {k: round(v, 2) for k, v in sorted(stages.items())},
    }


def _plan(client: httpx.Client, url: str, project: str, asked: list[Query]) -> dict:
    for q in asked[:_WARM_QUESTIONS]:
        _raw(client, url, project, q)
    times, tokens = [], []
    for q in asked[_WARM_QUESTIONS:]:
        started = time.perf_counter()
        result = _raw(client, url, project, q)
        times.append((time.perf_counter() - started) * 1000)
        tokens.append(result["tokens"])
    return {**_summary(times), "tokens_median": statistics.median(tokens)}


def api_reads(
    neo4j: BenchNeo4j, options: argparse.Namespace, given: dict, sample: Any, out: dict
) -> None:
    """Each read's figures into ``out``, saved after each (a run cut short keeps them)."""
    project = options.project
    questions: list[Query] = given["queries"]
    recall_asked = questions[: _WARM_QUESTIONS + options.recall]
    plan_asked = questions[len(recall_asked) :][: _WARM_QUESTIONS + options.plan]
    log = RESULTS / "logs" / f"reads-at-n{options.size}-api.log"
    log.parent.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    with (
        metisgraph_server(neo4j, options.api_port, log) as url,
        httpx.Client(timeout=600) as client,
    ):
        out["api_ready_s"] = round(time.perf_counter() - started, 1)
        parts: list[tuple[str, Any]] = [
            ("recall", lambda: _recall(client, url, project, recall_asked, options.warmup)),
            ("plan_context", lambda: _plan(client, url, project, plan_asked)),
            ("lineage_small", lambda: _lineages(client, [url], project, sample.small)[0]),
            ("lineage_large", lambda: _lineages(client, [url], project, sample.large)[0]),
            ("errors", lambda: _error_pages(client, url, project, options.error_rounds)),
            ("analytics", lambda: _analytics(client, url, project, [DEFAULT_CAP])[0]),
        ]
        for name, read in parts:
            settle = _settle(options.settle, options.settle_max) if options.settle else None
            before, mark = _load(), time.perf_counter()
            try:
                out[name] = read()
            except (RuntimeError, httpx.HTTPError, ValueError) as failed:
                out[name] = {"failed": str(failed)[:300]}
            out[name] = {**out[name], "part_s": round(time.perf_counter() - mark, 1)}
            out[name]["load"] = [before, _load()]
            if settle:
                out[name]["settle"] = settle
            print(name, json.dumps(out[name]), flush=True)
            options.save()
        out["rss_mb"] = {"api": rss_mb(options.api_port), "neo4j": rss_mb(options.port)}


# ---------------------------------------------------------------- the writes, last


async def _sample_and_size(neo4j: BenchNeo4j, options: argparse.Namespace) -> tuple[Any, dict]:
    async with graph_store(neo4j, 384) as store:
        store.timeout = store.batch_timeout
        size = dict((await store.run("bench_project_size", project=options.project))[0])
        started = time.perf_counter()
        # ten more small ones: _lineages warms up on the first ten when it has over twenty
        sample = await lineage_sample(
            store, options.project, options.lineage + 10, options.seed, large=options.large
        )
        size["lineage_sample_s"] = round(time.perf_counter() - started, 1)
        size["lineage_sample"] = sample.describe()
    return sample, size


async def periodic_maintain(
    neo4j: BenchNeo4j, options: argparse.Namespace, records: list[dict[str, Any]]
) -> dict[str, Any]:
    ref = SourceRef("bench")
    items = [validate_record(r, ref) for r in records]
    assert all(isinstance(i, Parsed) for i in items)
    out: dict[str, Any] = {"mode": options.maintain}
    async with graph_store(neo4j, 384) as store:
        store.timeout = store.batch_timeout
        started = time.perf_counter()
        if options.maintain == "whole":
            out["whole"] = await _maintain(store, options.project)
        elif options.maintain in ("marked", "settle"):
            rows = await store.run("bench_mark_maintained", project=options.project)
            out["marked"] = rows[0]["marked"]
            # what a first run does besides the episodes (situations, retired snippets)
            out["settle"] = await _maintain(store, options.project)
        out["before_s"] = round(time.perf_counter() - started, 1)
        if options.maintain == "settle":  # the periodic run later: `--maintain periodic`
            return out
        embedder = DerivedEmbedder(EmbeddingCache(options.embeddings))
        started = time.perf_counter()
        summary = await Ingestor(store, embedder, batch_size=256).ingest(items)
        out["arrived"] = {"ingest_s": round(time.perf_counter() - started, 1)}
        out["arrived"].update(summary.as_dict())
        load = _load()
        out["periodic"] = await _maintain(store, options.project)
        out["periodic"]["load"] = [load, _load()]
    return out


# ---------------------------------------------------------------- one store


@contextlib.contextmanager
def _target(options: argparse.Namespace) -> Any:
    """The home the run starts: the given one, or a copy of it (deleted after)."""
    if options.in_place:
        yield options.home, 0.0
        return
    copy = CACHE / "reads-at" / f"copy-n{options.size}"
    shutil.rmtree(copy, ignore_errors=True)
    need, free = _disk(options.home), shutil.disk_usage(copy.parent).free
    if need * 1.1 + 5 * 2**30 > free:
        raise SystemExit(f"no room for a copy of {options.home} ({need:,} B, {free:,} free)")
    started = time.perf_counter()
    ignore = shutil.ignore_patterns("logs", "*.pid", "*.lock")
    shutil.copytree(options.home, copy, ignore=ignore)
    try:
        yield copy, round(time.perf_counter() - started, 1)
    finally:
        shutil.rmtree(copy, ignore_errors=True)


def run(options: argparse.Namespace, out: dict[str, Any]) -> None:
    given = inputs(options.seed, options.size, options.new, 2 * _WARM_QUESTIONS + options.recall
                   + options.plan)  # fmt: skip
    out.update({
        "size": options.size,
        "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "home": str(options.home),
        "in_place": options.in_place,
        "heap": options.heap,
        "pagecache": options.pagecache,
        "store_bytes": _disk(options.home / "data"),
        "load_start": _load(),
    })  # fmt: skip
    with _target(options) as (home, copy_s):
        out["copy_s"] = copy_s
        started = time.perf_counter()
        with running_neo4j(home, options.port, options.heap, options.pagecache) as neo4j:
            out["neo4j_start_s"] = round(time.perf_counter() - started, 1)
            if not options.no_reads:
                sample, out["project"] = asyncio.run(_sample_and_size(neo4j, options))
                print("project", json.dumps(out["project"]), flush=True)
                out["reads"] = {}
                api_reads(neo4j, options, given, sample, out["reads"])
            if options.maintain != "none":
                out["maintain"] = asyncio.run(periodic_maintain(neo4j, options, given["records"]))
                print("maintain", json.dumps(out["maintain"], default=str), flush=True)
                options.save()
    out["load_end"] = _load()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    first = commands.add_parser("prepare", help="the generator's questions and new records")
    later = commands.add_parser("run", help="the reads on one store")
    for sub in (first, later):
        sub.add_argument("--size", type=int, required=True)
        sub.add_argument("--seed", type=int, default=7)
        sub.add_argument("--new", type=int, default=1000, help="episodes before maintain")
        sub.add_argument("--recall", type=int, default=100, help="recall questions timed")
        sub.add_argument("--plan", type=int, default=50, help="planContext tasks timed")
    later.add_argument("--home", type=Path, required=True, help="a stopped store's home")
    where = later.add_mutually_exclusive_group(required=True)
    where.add_argument("--copy", action="store_true", help="run on a copy (deleted after)")
    where.add_argument("--in-place", action="store_true", help="run on the home itself")
    later.add_argument("--project", help="default: bench-s<seed>-n<size>")
    later.add_argument("--embeddings", type=Path, required=True, help="the 10k cache's folder")
    later.add_argument("--port", type=int, default=7797)
    later.add_argument("--api-port", type=int, default=8797)
    later.add_argument("--heap", default="2g")
    later.add_argument("--pagecache", default="2g")
    later.add_argument("--warmup", type=int, default=200, help="recall asks before timing")
    later.add_argument(
        "--settle", type=float, default=1.5,
        help="before each timed read, wait for the 1-minute load average to fall to this "
        "(0: do not wait)",
    )  # fmt: skip
    later.add_argument("--settle-max", type=float, default=300, help="seconds, at most")
    later.add_argument("--lineage", type=int, default=30, help="small lineages timed")
    later.add_argument("--large", type=int, default=5, help="large lineages timed")
    later.add_argument("--error-rounds", type=int, default=20)
    later.add_argument(
        "--maintain",
        choices=("marked", "whole", "settle", "periodic", "none"),
        default="marked",
        help="marked = settle (episodes marked seen + one run) then periodic (1,000 new + a "
        "run); whole = a whole first run then periodic; settle / periodic: one of the two",
    )
    later.add_argument("--no-reads", action="store_true", help="maintain only (a later step)")
    options = parser.parse_args()
    asked = 2 * _WARM_QUESTIONS + options.recall + options.plan
    if options.command == "prepare":
        prepare(options.seed, options.size, options.new, asked)
        return
    options.project = options.project or f"bench-s{options.seed}-n{options.size}"
    RESULTS.mkdir(parents=True, exist_ok=True)
    path = RESULTS / f"reads-at-n{options.size}-{time.strftime('%Y%m%dT%H%M%SZ')}.json"
    result: dict[str, Any] = {}
    options.save = lambda: path.write_text(json.dumps(result, indent=2, default=str))
    try:
        run(options, result)
    finally:
        options.save()
        print(f"results: {path}", flush=True)


if __name__ == "__main__":
    main()
