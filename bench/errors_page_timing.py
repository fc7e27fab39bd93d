"""The `errors` page read from the counts kept on the Error nodes, next to the same page
counted from every sighting (a window that holds every episode takes that path).

On a store `bench/write_growth.py` filled (its Neo4j home, project `bench-growth`):

    cpu bench python bench/errors_page_timing.py --runs 30

or one `bench/bulk_build.py` built (``--home`` its home, ``--project`` the corpus's).
Per order: the median and p95 of each, one after the other, after a warm-up; and Neo4j's
db hits (PROFILE, once) of the first page and of the page after it: what a page reads,
whatever the machine's load.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path[0] = str(ROOT)  # the repository, not bench/ (whose names must not shadow packages)

from bench.database import graph_store, running_neo4j  # noqa: E402
from metisgraph.graph.cypher import query  # noqa: E402
from metisgraph.graph.explore import ErrorOrder, error_page  # noqa: E402
from metisgraph.graph.explore.listing import page_query  # noqa: E402

CACHE = ROOT / "bench" / ".cache"
EVERYTHING = (datetime(1970, 1, 1, tzinfo=UTC), datetime(2100, 1, 1, tzinfo=UTC))


def _p95(values: list[float]) -> float:
    return sorted(values)[max(0, round(0.95 * len(values)) - 1)]


def _hits(plan: Any) -> int:
    return int(plan.get("dbHits", 0)) + sum(_hits(c) for c in plan.get("children") or [])


async def db_hits(store: Any, name: str, params: dict[str, Any]) -> int:
    """Neo4j's db hits of one run of the named query (PROFILE)."""
    _, summary, _ = await store.driver.execute_query("PROFILE " + query(name).text, params)
    return _hits(summary.profile)


async def measure(store: Any, project: str, runs: int) -> dict[str, Any]:
    sizes = await store.run("bench_project_size", project=project)
    out: dict[str, Any] = dict(sizes[0])
    for order in ErrorOrder:
        for label, window in (("kept", (None, None)), ("counted", EVERYTHING)):
            since, until = window
            times: list[float] = []
            for n in range(runs + 3):  # three warm-ups
                started = time.perf_counter()
                page = await error_page(store, [project], order, since=since, until=until)
                if n >= 3:
                    times.append(1000 * (time.perf_counter() - started))
            hits = []
            for after in (None, page.end_cursor):
                name, params = page_query(
                    [project], order, since=since, until=until, first=50, after=after
                )
                hits.append(await db_hits(store, name, params))
            out[f"{order.value} {label}"] = {
                "p50_ms": round(statistics.median(times), 1),
                "p95_ms": round(_p95(times), 1),
                "total": page.total,
                "db_hits_first_page": hits[0],
                "db_hits_next_page": hits[1],
            }
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--neo4j-port", type=int, default=7695)
    parser.add_argument("--project", default="bench-growth")
    parser.add_argument("--heap", default="1g")
    parser.add_argument("--pagecache", default="1g")
    parser.add_argument(
        "--home", type=Path, help="another store's Neo4j home (default: write_growth's)"
    )
    options = parser.parse_args()
    home = options.home or CACHE / f"neo4j-{options.neo4j_port}-growth"

    async def run(neo4j: Any) -> dict[str, Any]:
        async with graph_store(neo4j, 384) as store:
            return await measure(store, options.project, options.runs)

    with running_neo4j(home, options.neo4j_port, options.heap, options.pagecache) as neo4j:
        result = asyncio.run(run(neo4j))
    for key, value in result.items():
        print(f"{key}: {value}")
    print("load average:", Path("/proc/loadavg").read_text().strip())


if __name__ == "__main__":
    main()
