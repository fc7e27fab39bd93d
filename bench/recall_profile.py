"""Recall's reads with their query plans' db hits: each round trip of a recall, profiled.

    python bench/recall_profile.py ../shared/eval/bugdup-hadoop --namespace dev-bugdup- -n 30

Asks the first N questions of a retrieval set (already ingested under the namespace, e.g. by
`metisgraph eval retrieval --keep --namespace ...`) through the shipped path (prepare_question,
then graph.recall), with every read sent as PROFILE. Prints, per kind of round trip (named
by the channels or the named query it holds), how often a question made it and its mean db
hits and server time. PROFILE adds its own cost to the server time: compare the db hits,
and the times only between runs of this script.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import statistics
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path[0] = str(ROOT)  # the repository, not bench/ (whose names must not shadow packages)

from metisgraph.api.services import open_services  # noqa: E402
from metisgraph.graph import recall  # noqa: E402
from metisgraph.graph.cypher import load_queries  # noqa: E402
from metisgraph.graph.store import GraphStore  # noqa: E402
from metisgraph.ingest.question import Question, prepare_question  # noqa: E402

CHANNEL = re.compile(r"RETURN '(\w+)' AS channel")


def _hits(plan: Any) -> int:
    if plan is None:
        return 0
    own = int(getattr(plan, "db_hits", None) or plan.get("dbHits", 0))  # type: ignore[union-attr]
    children = getattr(plan, "children", None) or plan.get("children", [])  # type: ignore[union-attr]
    return own + sum(_hits(c) for c in children)


def _kind(text: str, names: dict[str, str]) -> str:
    found = CHANNEL.findall(text)
    if "VECTOR INDEX episode_vectors\n      FOR $episode_vectors_vector" in text:
        found.insert(0, "search_episode_vectors")
    if found:
        return "+".join(sorted(set(found)))
    for name, body in names.items():
        if body and body in text:
            return name
    return text.split("\n", 1)[0][:40]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("directory", type=Path)
    parser.add_argument("--namespace", required=True)
    parser.add_argument("-n", type=int, default=30)
    parser.add_argument("--json", type=Path, help="write the figures here too")
    args = parser.parse_args()
    asyncio.run(_run(args))


async def _run(args: argparse.Namespace) -> None:
    names = {n: q.text.strip().split("\n")[-1] for n, q in load_queries().items()}
    calls: list[tuple[int, str, int, int]] = []  # question, kind, db hits, server ms
    asked = [0]
    original = GraphStore._read

    async def profiled(self: GraphStore, text: str, params: dict[str, Any]) -> list[Any]:
        body = text.removeprefix("CYPHER 25\n")
        prefix = "CYPHER 25 " if body != text else ""
        async with self.driver.session(database=self.database) as session:
            result = await session.run(f"{prefix}PROFILE {body}", params)  # type: ignore[arg-type]
            rows = [dict(r) async for r in result]
            summary = await result.consume()
        took = (summary.result_available_after or 0) + (summary.result_consumed_after or 0)
        calls.append((asked[0], _kind(text, names), _hits(summary.profile), took))
        return rows

    queries = [json.loads(line) for line in (args.directory / "queries.jsonl").open()][: args.n]
    async with open_services() as services:
        GraphStore._read = profiled  # type: ignore[method-assign]
        try:
            for i, q in enumerate(queries):
                asked[0] = i
                question = Question(  # as `metisgraph eval retrieval` asks it
                    project=args.namespace + q["project"],
                    query=q.get("text") or (q.get("error") or "").strip().splitlines()[0],
                    error=q.get("error"),
                    k=10,
                    exclude=frozenset(q.get("exclude") or ()),
                )
                prepared = prepare_question(question)
                vectors = prepared.vectors(services.embedder)
                await recall(services.store, prepared.request, vectors)
        finally:
            GraphStore._read = original  # type: ignore[method-assign]
    by_kind: dict[str, list[tuple[int, int]]] = defaultdict(list)
    per_question: dict[int, int] = defaultdict(int)
    for question, kind, hits, ms in calls:
        by_kind[kind].append((hits, ms))
        per_question[question] += hits
    report = {
        "questions": len(queries),
        "reads_per_question": len(calls) / max(1, len(queries)),
        "db_hits_per_question": statistics.mean(per_question.values()) if per_question else 0,
        "by_kind": {
            kind: {
                "per_question": len(v) / max(1, len(queries)),
                "db_hits_mean": statistics.mean(h for h, _ in v),
                "server_ms_median": statistics.median(ms for _, ms in v),
            }
            for kind, v in sorted(by_kind.items())
        },
    }
    print(json.dumps(report, indent=1))
    if args.json:
        args.json.write_text(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
