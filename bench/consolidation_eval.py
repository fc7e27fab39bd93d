"""Consolidation measured on the development sets (docs/consolidation.md has the figures).

    python bench/consolidation_eval.py ../shared/eval --out bench/results/consolidation.json

For each set: the corpus ingested once (a kept namespace, `cons-<set>-`), maintain run twice
(what it made, how long, the graph digest after each run), then every question asked with
patterns off and with each recall setting of a small grid; each setting's R@5 per set, and
leave-one-set-out: each set scored with the setting chosen on the other two. On a set whose
queries' `relevant` lists are duplicate pairs (bugdup-hadoop), the precision and recall of
duplicate merging at several thresholds (maintain's plan, computed without writing).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from dataclasses import replace
from functools import partial
from itertools import combinations
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path[0] = str(ROOT)

from metisgraph.api.eval.retrieval import AskOptions, evaluate_retrieval, load_queries  # noqa: E402
from metisgraph.api.services import open_services  # noqa: E402
from metisgraph.graph import (  # noqa: E402
    MEMORY_TYPES,
    PRESETS,
    ConsolidationSettings,
    consolidate,
    digest_project,
)
from metisgraph.graph.consolidate import _read  # noqa: E402
from metisgraph.graph.lessons import Memory, plan_lessons  # noqa: E402

SETS = ("bugdup-hadoop", "trace2fix-defects4j", "memory-locomo")
# (name, pattern channel weight, min support for a pattern to be returned); "off": episodes only.
GRID = (("w0.5-s3", 0.5, 3), ("w1-s3", 1.0, 3))  # the default first


def _settings(weight: float, support: int) -> Any:
    base = PRESETS["balanced"]
    return replace(
        base,
        weights=replace(base.weights, patterns=weight),
        pattern_min_support=support,
    )


def _duplicate_quality(
    project: str, memories: list[Memory], vectors: Any, queries: Any, thresholds: list[float]
) -> list[dict[str, Any]]:
    """Precision and recall of the merges that involve a labelled report."""
    labelled = {next(iter(q.exclude)): set(q.relevant) for q in queries if q.exclude}
    pairs_true = {frozenset((a, b)) for a, rel in labelled.items() for b in rel}
    fresh = [replace(m, dirty=True, duplicate_of=None, pattern=None) for m in memories]
    strip = len(project)
    out = []
    for threshold in thresholds:
        settings = ConsolidationSettings(duplicate_similarity=threshold, lesson_similarity=1.01)
        plan = plan_lessons(project, fresh, vectors, {}, settings)
        groups: dict[str, set[str]] = {}
        for dup, (canon, _, _) in plan.duplicates.items():
            groups.setdefault(canon, {canon}).add(dup)
        merged = {
            frozenset((a[strip:] if a.startswith(project) else a, b))
            for g in groups.values()
            for a, b in combinations(sorted(g), 2)
        }
        involving = {p for p in merged if p & set(labelled)}
        right = involving & pairs_true
        out.append(
            {
                "threshold": threshold,
                "merged_pairs": len(merged),
                "merged_involving_labelled": len(involving),
                "precision": round(len(right) / len(involving), 4) if involving else None,
                "recall": round(len(right) / len(pairs_true), 4),
            }
        )
    return out


async def _one_set(services: Any, root: Path, name: str) -> dict[str, Any]:
    directory = root / name
    namespace = f"cons-{name}-"
    queries = load_queries(directory / "queries.jsonl")
    result: dict[str, Any] = {"set": name}
    ask = partial(evaluate_retrieval, services, directory, keep=True, namespace=namespace)
    episodes_only = AskOptions(settings=_settings(0.0, 3))
    started = time.perf_counter()
    plain = await ask(options=episodes_only)
    result["ingest_and_plain_s"] = round(time.perf_counter() - started, 1)
    projects = sorted({namespace + q.project for q in queries})
    result["maintain"] = [(await consolidate(services.store, p)).as_dict() for p in projects]
    result["digests_first"] = {p: await digest_project(services.store, p) for p in projects}
    result["second_run"] = [(await consolidate(services.store, p)).as_dict() for p in projects]
    result["digests"] = {p: await digest_project(services.store, p) for p in projects}
    off = await ask(options=episodes_only)
    result["r5"] = {"plain": plain.recall[5], "off": off.recall[5]}
    result["patterns_top5"] = {"off": 0}
    result["all"] = {"plain": plain.as_json(), "off": off.as_json()}
    for label, weight, support in GRID:
        both = AskOptions(memory_types=MEMORY_TYPES, settings=_settings(weight, support))
        report = await ask(options=both)
        result["r5"][label] = report.recall[5]
        result["patterns_top5"][label] = report.patterns_top5
        result["all"][label] = report.as_json()
    if name == "bugdup-hadoop":
        memories, vectors = await _read(services.store, projects[0])
        thresholds = [0.85, 0.9, 0.93, 0.95, 0.97, 0.99]
        result["duplicates"] = _duplicate_quality(
            projects[0], memories, vectors, queries, thresholds
        )
    result["n"] = len(queries)
    return result


def _loso(results: list[dict[str, Any]]) -> dict[str, Any]:
    labels = ["off", *(g[0] for g in GRID)]
    out = {}
    for held in results:
        others = [r for r in results if r is not held]
        chosen = max(labels, key=lambda lab: (sum(r["r5"][lab] for r in others), lab == "off"))
        out[held["set"]] = {"chosen": chosen, "r5": held["r5"][chosen], "off": held["r5"]["off"]}
    return out


async def main(root: Path, out: Path, sets: list[str]) -> None:
    results = []
    async with open_services() as services:
        for name in sets:
            results.append(await _one_set(services, root, name))
            out.write_text(json.dumps({"sets": results}, indent=1))
    summary = {"sets": results, "loso": _loso(results) if len(results) > 2 else None}
    out.write_text(json.dumps(summary, indent=1))
    print(json.dumps({r["set"]: r["r5"] for r in results}, indent=1))
    print(json.dumps(summary["loso"], indent=1))


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("root", type=Path)
    parser.add_argument(
        "--out", type=Path, default=ROOT / "bench" / "results" / "consolidation.json"
    )
    parser.add_argument("--sets", default=",".join(SETS))
    options = parser.parse_args()
    options.out.parent.mkdir(parents=True, exist_ok=True)
    asyncio.run(main(options.root, options.out, options.sets.split(",")))
