"""The full-text channels with and without the projects' scope term, side by side on a store.

    python bench/fulltext_scope.py --home bench/.cache/neo4j-7790-n100000 \\
        --project bench-s7-n100000 [-n 60] [--port 7796] [--heap 2g --pagecache 2g]

The store's own Neo4j is started (or reused). The first N questions of the bench corpus of
that size are prepared as the API prepares them, and each full-text channel (`fulltext`,
`context_text`) is asked in three ways, in rotation: as shipped (the terms alone, the scoped
search only when other projects filled the fetch: cypher/recall.cypher), the scoped search
alone (the channel before 2026-12-05: ``+scope:(...) +(terms)``, filtered after), and the
terms alone (the Lucene search, nothing after). Three passes; the last is reported (p50/p95
ms over Bolt), with how many questions found the same episodes in the same order as shipped
and as the scoped search.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path[0] = str(ROOT)  # the repository, not bench/ (whose names must not shadow packages)

from bench.corpus import Corpus  # noqa: E402
from bench.database import running_neo4j  # noqa: E402
from metisgraph.graph import channels  # noqa: E402
from metisgraph.graph.cypher import query  # noqa: E402
from metisgraph.graph.store import open_driver  # noqa: E402
from metisgraph.ingest.question import Question, prepare_question  # noqa: E402

_INDEX = {"fulltext": "episode_text", "context_text": "episode_context"}


def _summary(values: list[float]) -> dict[str, float]:
    ordered = sorted(values)
    return {
        "p50": round(statistics.median(ordered), 2),
        "p95": round(ordered[int(0.95 * (len(ordered) - 1))], 2),
    }


async def _run(args: argparse.Namespace, uri: str, password: str) -> dict[str, Any]:
    driver = open_driver(uri, "neo4j", password)
    asked: list[tuple[str, str, dict[str, Any]]] = []
    for q in Corpus(args.seed, args.size).queries(args.n):
        req = prepare_question(
            Question(project=args.project, query=q.text, error=q.error, k=5)
        ).request
        plan = channels._lexical_plan(req, channels._limit(req))
        for name in _INDEX:
            if name in plan:
                composed, params = channels.combined({name: plan[name]}, req)
                asked.append((name, composed.text, params))
    times: dict[tuple[str, str], list[float]] = {}
    found: dict[tuple[str, int], list[Any]] = {}
    try:
        for last in (False, False, True):
            for i, (name, text, params) in enumerate(asked):
                p = {k.removeprefix(f"{name}_"): v for k, v in params.items()}
                ways = {
                    "shipped": (text, params),
                    "scoped": (
                        query("bench_fulltext_scoped").text,
                        {"index": _INDEX[name], "q": p["text"], "fetch": p["fetch"],
                         "limit": p["limit"], "projects": params["projects"]},
                    ),
                    "terms": (
                        query("bench_fulltext_terms").text,
                        {"index": _INDEX[name], "q": p["open"], "fetch": p["fetch"]},
                    ),
                }  # fmt: skip
                for way, (cypher, values) in ways.items():
                    async with driver.session(database="neo4j") as session:
                        started = time.perf_counter()
                        result = await session.run(cypher, values)  # type: ignore[arg-type]
                        rows = [r async for r in result]
                        took = (time.perf_counter() - started) * 1000
                    if last:
                        times.setdefault((name, way), []).append(took)
                        if way != "terms":
                            found[(way, i)] = [tuple(f[:2]) for f in rows[0]["found"]]
    finally:
        await driver.close()
    same = sum(found[("shipped", i)] == found[("scoped", i)] for i in range(len(asked)))
    return {
        "questions": args.n,
        "asked": len(asked),
        "same_as_scoped": same,
        "ms": {f"{name} {way}": _summary(v) for (name, way), v in sorted(times.items())},
        "load": Path("/proc/loadavg").read_text().split()[:3],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--home", type=Path, required=True, help="a bench store's Neo4j home")
    parser.add_argument("--project", required=True, help="its corpus's project: bench-s7-n<size>")
    parser.add_argument("--port", type=int, default=7796)
    parser.add_argument("--heap", default="2g")
    parser.add_argument("--pagecache", default="2g")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("-n", type=int, default=60, help="questions")
    parser.add_argument("--json", type=Path, help="write the figures here too")
    args = parser.parse_args()
    args.size = int(args.project.rsplit("-n", 1)[1])
    with running_neo4j(args.home, args.port, args.heap, args.pagecache) as neo4j:
        report = asyncio.run(_run(args, neo4j.uri, neo4j.password))
    print(json.dumps(report, indent=1))
    if args.json:
        args.json.write_text(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
