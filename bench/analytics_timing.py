"""Analytics on a stored project: the pull (one read, the cap's most recent episodes) and
the measures (CPU, a worker thread) timed apart, at the default cap and others.

On the store `bench/write_growth.py` filled (its Neo4j home, project `bench-growth`):

    cpu bench python bench/analytics_timing.py --caps 20000,5000
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path[0] = str(ROOT)  # the repository, not bench/ (whose names must not shadow packages)

from bench.database import graph_store, running_neo4j  # noqa: E402
from metisgraph.graph.analytics.pull import pull  # noqa: E402
from metisgraph.graph.analytics.report import measure  # noqa: E402

CACHE = ROOT / "bench" / ".cache"


async def timings(store: Any, project: str, caps: list[int]) -> list[dict[str, Any]]:
    out = []
    for cap in caps:
        started = time.perf_counter()
        pulled = await pull(store, [project], None, None, cap)
        pulled_s = time.perf_counter() - started
        started = time.perf_counter()
        await asyncio.to_thread(measure, pulled)
        out.append(
            {
                "cap": cap,
                "episodes": len(pulled.episodes),
                "truncated": pulled.truncated,
                "pull_s": round(pulled_s, 2),
                "measure_s": round(time.perf_counter() - started, 2),
            }
        )
        print(out[-1], flush=True)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--caps", default="20000")
    parser.add_argument("--neo4j-port", type=int, default=7695)
    parser.add_argument("--project", default="bench-growth")
    parser.add_argument("--home", type=Path, help="default: write_growth's store")
    parser.add_argument("--heap", default="1g")
    parser.add_argument("--pagecache", default="1g")
    options = parser.parse_args()
    home = options.home or CACHE / f"neo4j-{options.neo4j_port}-growth"
    caps = [int(c) for c in options.caps.split(",")]

    async def run(neo4j: Any) -> None:
        async with graph_store(neo4j, 384) as store:
            await timings(store, options.project, caps)

    with running_neo4j(home, options.neo4j_port, options.heap, options.pagecache) as neo4j:
        asyncio.run(run(neo4j))
    print("load average:", Path("/proc/loadavg").read_text().strip())


if __name__ == "__main__":
    main()
