"""End-to-end ingest (bench_ingest) at several GIL switch intervals, one Neo4j, one model.

Is the model, embedding in a worker thread, starved by the thread that prepares the next
batch? Each interval given is set (sys.setswitchinterval) before its run:

    cpu bench python bench/ingest_switch.py 0.005 0.001

Prints one JSON line per run (bench_ingest's figures and the load average).
"""

from __future__ import annotations

import asyncio
import json
import sys
from dataclasses import asdict
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path[0] = str(ROOT)  # the repository, not bench/ (whose names must not shadow packages)

from bench.database import graph_store, running_neo4j  # noqa: E402
from bench.ingest_bench import bench_ingest  # noqa: E402
from metisgraph.ingest.embeddings import Embedder  # noqa: E402

CACHE = ROOT / "bench" / ".cache"


async def _runs(neo4j: Any, embedder: Embedder, intervals: list[float]) -> None:
    async with graph_store(neo4j, embedder.dimension) as store:
        for interval in intervals:
            sys.setswitchinterval(interval)
            figures = asdict(await bench_ingest(store, embedder, 7, 1000, 256))
            figures.pop("summary")
            load = Path("/proc/loadavg").read_text().strip()
            print(json.dumps({"switch": interval, "load": load, **figures}), flush=True)


def main() -> None:
    intervals = [float(x) for x in sys.argv[1:]] or [0.005, 0.001]
    embedder = Embedder()
    embedder.load()
    with running_neo4j(CACHE / "neo4j-7690-ingest", 7690, "2g", "2g") as neo4j:
        asyncio.run(_runs(neo4j, embedder, intervals))


if __name__ == "__main__":
    main()
