"""Each recall channel asked alone on a bench store: its server time and its plan's db hits.

    python bench/channel_cost.py --home bench/.cache/stores/bulk-s7-n100000 \\
        --project bench-s7-n100000 -n 60 [--fanout N] [--candidates N] [--json F]

The store's own Neo4j is started (or reused) on --port. The first N questions of the bench
corpus of that size (bench/corpus.py, the recall benchmark's questions) are prepared as the
API prepares them and embedded by the real model; every channel their plan asks (the
channels' one vector search `episode_vectors` as one) is then sent alone, in the text the
union sends it in: a first pass plain (timed over Bolt: `ms`), a second as PROFILE (the
plan's db hits: work that grows with the store shows there first). Where recall's union of
channels spends its time, and which channel grows from one store size to the next.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import time
from collections import defaultdict
from dataclasses import replace
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path[0] = str(ROOT)  # the repository, not bench/ (whose names must not shadow packages)

from bench.corpus import Corpus  # noqa: E402
from bench.database import running_neo4j  # noqa: E402
from bench.recall_profile import _hits  # noqa: E402  (a plan's db hits, its children's too)
from metisgraph.graph import channels  # noqa: E402
from metisgraph.graph.store import open_driver  # noqa: E402
from metisgraph.ingest.embeddings import Embedder  # noqa: E402
from metisgraph.ingest.question import Question, prepare_question  # noqa: E402


def _summary(values: list[float]) -> dict[str, float]:
    ordered = sorted(values)
    return {
        "asked": len(ordered),
        "mean": round(statistics.mean(ordered), 2),
        "p50": round(statistics.median(ordered), 2),
        "p95": round(ordered[int(0.95 * (len(ordered) - 1))], 2),
        "max": ordered[-1],
    }


async def _run(args: argparse.Namespace, uri: str, password: str) -> dict[str, Any]:
    driver = open_driver(uri, "neo4j", password)
    embedder = Embedder()
    embedder.load()
    questions = Corpus(args.seed, args.size).queries(args.n)
    timed: dict[str, list[float]] = defaultdict(list)
    profiled: dict[str, list[float]] = defaultdict(list)
    try:
        for profile in (False, True):
            for q in questions:
                prepared = prepare_question(
                    Question(project=args.project, query=q.text, error=q.error, k=5)
                )
                req = prepared.request
                if args.fanout:
                    req = replace(req, settings=replace(req.settings, fanout=args.fanout))
                if args.candidates:
                    req = replace(req, settings=replace(req.settings, candidates=args.candidates))
                vectors = await prepared.vectors(embedder)
                limit = channels._limit(req)
                plan = channels._lexical_plan(req, limit) | channels._dense_plan(
                    req, vectors, limit, True
                )
                for key, planned in plan.items():
                    text, params = channels.combined({key: planned}, req)
                    body = text.text.removeprefix("CYPHER 25\n")
                    sent = f"CYPHER 25 {'PROFILE ' if profile else ''}{body}"
                    async with driver.session(database="neo4j") as session:
                        started = time.perf_counter()
                        result = await session.run(sent, params)  # type: ignore[arg-type]
                        _ = [r async for r in result]
                        summary = await result.consume()
                        took = (time.perf_counter() - started) * 1000
                    if profile:
                        profiled[key].append(_hits(summary.profile))
                    else:
                        timed[key].append(took)
    finally:
        await driver.close()
    return {
        key: {"ms": _summary(timed[key]), "db_hits": _summary(profiled[key])}
        for key in sorted(timed)
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--home", type=Path, required=True, help="a bench store's Neo4j home")
    parser.add_argument("--project", required=True, help="its corpus's project: bench-s7-n<size>")
    parser.add_argument("--port", type=int, default=7796)
    parser.add_argument("--heap", default="2g")
    parser.add_argument("--pagecache", default="2g")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("-n", type=int, default=60, help="questions")
    parser.add_argument("--fanout", type=int, default=0, help="RecallSettings.fanout (0: its own)")
    parser.add_argument(
        "--candidates", type=int, default=0, help="RecallSettings.candidates (0: its own)"
    )
    parser.add_argument("--json", type=Path, help="write the figures here too")
    args = parser.parse_args()
    args.size = int(args.project.rsplit("-n", 1)[1])
    with running_neo4j(args.home, args.port, args.heap, args.pagecache) as neo4j:
        report = asyncio.run(_run(args, neo4j.uri, neo4j.password))
    for key, f in report.items():
        ms, hits = f["ms"], f["db_hits"]
        print(
            f"{key:16} asked {ms['asked']:4}  ms p50 {ms['p50']:7.2f} p95 {ms['p95']:7.2f}"
            f"  db hits mean {hits['mean']:9.0f} max {hits['max']:7.0f}"
        )
    if args.json:
        args.json.write_text(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
