"""Where a pasted trace's recall spends its time, per question, first ask against second.

    python bench/long_tail.py --home bench/.cache/neo4j-7790-n10000 --project bench-s7-n10000

Starts (or reuses) the benchmark's Neo4j on a store, opens the service in-process as
`metisgraph serve` does (warm-up reads included), and asks the long-question phase's
questions (bench/long_questions.py) twice through the shipped path: ``prepare_question`` in
a thread, the question's vectors, then ``graph.recall``. Each ask's stages are timed apart
(prepare, embed, channels, expand, the rest) and every read's server time is kept; the
second pass clears the question-vector cache first, so a stage that is fast only the
second time is the graph's (or the model's) first touch, not a cache of ours. Prints the
stages' p50/p95 per pass and the slowest first asks with their reads.
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

import anyio  # noqa: E402

from bench.database import running_neo4j  # noqa: E402
from bench.long_questions import long_questions  # noqa: E402
from metisgraph.api.services import prepare_services  # noqa: E402
from metisgraph.api.settings import load_settings  # noqa: E402
from metisgraph.graph import recall  # noqa: E402
from metisgraph.graph.store import GraphStore  # noqa: E402
from metisgraph.ingest.question import Question, prepare_question  # noqa: E402


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return round(ordered[min(len(ordered) - 1, int(q * len(ordered)))], 1)


async def _ask(services: Any, project: str, q: Any, reads: list[Any]) -> dict[str, Any]:
    reads.clear()
    t0 = time.perf_counter()
    prepared = await anyio.to_thread.run_sync(
        prepare_question, Question(project=project, query=q.text, error=q.error)
    )
    t1 = time.perf_counter()
    vectors = await prepared.vectors(services.embedder)
    t2 = time.perf_counter()

    outcome = await recall(services.store, prepared.request, vectors)
    t3 = time.perf_counter()
    timings = outcome.timings
    return {
        "id": q.id,
        "chars": len(q.text) + len(q.error or ""),
        "prepare_ms": (t1 - t0) * 1000,
        "embed_ms": (t2 - t1) * 1000,
        "channels_ms": timings.get("channels_ms", 0.0),
        "expand_ms": timings.get("expand_ms", 0.0),
        "graph_ms": (t3 - t2) * 1000,
        "total_ms": (t3 - t0) * 1000,
        "symbols": len(prepared.request.symbols),
        "words": len(prepared.request.words),
        "errors": len(prepared.request.error_keys),
        "tools": len(prepared.request.tools),
        "lexical_chars": len(prepared.request.lexical or prepared.request.text),
        "reads": [dict(r) for r in reads],
    }


async def _run(args: argparse.Namespace) -> dict[str, Any]:
    reads: list[dict[str, Any]] = []
    original = GraphStore._read

    async def timed(self: GraphStore, text: str, params: dict[str, Any]) -> list[Any]:
        started = time.perf_counter()
        rows = await original(self, text, params)
        reads.append({"ms": round((time.perf_counter() - started) * 1000, 1), "head": text[:90]})
        return rows

    settings = load_settings()
    services = prepare_services(settings)
    await services.warm_up(reads=True)
    questions = long_questions(args.n)
    out: dict[str, Any] = {"questions": len(questions), "passes": []}
    GraphStore._read = timed  # type: ignore[method-assign]
    try:
        for number in (1, 2):
            services.embedder._queries.clear()  # the second pass embeds again
            asks = [await _ask(services, args.project, q, reads) for q in questions]
            stages = ("prepare_ms", "embed_ms", "channels_ms", "expand_ms", "graph_ms", "total_ms")
            summary = {s: (_pct([a[s] for a in asks], 0.5), _pct([a[s] for a in asks], 0.95))
                       for s in stages}  # fmt: skip
            slowest = sorted(asks, key=lambda a: -a["total_ms"])[: args.show]
            out["passes"].append(
                {"pass": number, "p50_p95": summary, "slowest": slowest, "asks": asks}
            )
    finally:
        GraphStore._read = original  # type: ignore[method-assign]
        await services.close()
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--home", type=Path, required=True)
    parser.add_argument("--project", required=True)
    parser.add_argument("--port", type=int, default=7795)
    parser.add_argument("--heap", default="1g")
    parser.add_argument("--pagecache", default="1g")
    parser.add_argument("-n", type=int, default=100)
    parser.add_argument("--show", type=int, default=8)
    parser.add_argument("--json", type=Path, help="every ask of both passes, to this file")
    args = parser.parse_args()
    with running_neo4j(args.home, args.port, args.heap, args.pagecache) as neo4j:
        os.environ |= {"NEO4J_URI": neo4j.uri, "NEO4J_USERNAME": "neo4j",
                       "NEO4J_PASSWORD": neo4j.password}  # fmt: skip
        report = asyncio.run(_run(args))
    if args.json:
        args.json.write_text(json.dumps(report, indent=1))
    for p in report["passes"]:
        print(f"pass {p['pass']}: " + json.dumps(p["p50_p95"]))
        for a in p["slowest"]:
            ranked = sorted(a["reads"], key=lambda r: -r["ms"])[:3]
            top = [(r["ms"], r["head"][:50]) for r in ranked]
            print(f"  {a['id']} {a['chars']}ch total {a['total_ms']:.0f} prep {a['prepare_ms']:.0f}"
                  f" embed {a['embed_ms']:.0f} chan {a['channels_ms']:.0f} exp"
                  f" {a['expand_ms']:.0f} sym {a['symbols']} words {a['words']} err {a['errors']}"
                  f" reads {len(a['reads'])} top {top}")  # fmt: skip


if __name__ == "__main__":
    main()
