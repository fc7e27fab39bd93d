"""maintain's periodic run on a copy of a benchmark store built elsewhere (issue 24).

    cpu bench python bench/maintain_at.py --home PATH --seed 7 --size 100000 --new 1000 \
        --embeddings bench/.cache/embeddings/all-MiniLM-L6-v2/seed-7

Copies the stopped store at PATH (read only: e.g. one `bench/bulk_build.py` built) into
bench/.cache/maintain-at, runs maintain over the whole project once (everything is new to
it), a second time (nothing changed), then ingests the next `--new` episodes of the same
generator (vectors derived from the embedding cache by bench/embedcache.py's rule, as the
store's were) and runs it a third time: the periodic run. Each run's stages, wall time and
the load average are printed; the copy is deleted at the end.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import shutil
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[0] = str(ROOT)  # the repository, not bench/ (whose names must not shadow packages)

from bench.corpus import Corpus  # noqa: E402
from bench.database import running_neo4j  # noqa: E402
from bench.embedcache import DerivedEmbedder, EmbeddingCache  # noqa: E402
from bench.maintain_bench import NewEpisodes, _runs  # noqa: E402


def _load() -> str:
    return Path("/proc/loadavg").read_text().strip()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--home", type=Path, required=True)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--size", type=int, default=100_000)
    parser.add_argument("--new", type=int, default=1000)
    parser.add_argument("--embeddings", type=Path, required=True)
    parser.add_argument("--port", type=int, default=7796)
    parser.add_argument("--heap", default="2g")
    parser.add_argument("--pagecache", default="2g")
    options = parser.parse_args()
    copy = ROOT / "bench" / ".cache" / "maintain-at"
    shutil.rmtree(copy, ignore_errors=True)
    started = time.perf_counter()
    shutil.copytree(options.home, copy, ignore=shutil.ignore_patterns("logs", "*.pid", "*.lock"))
    print(f"copied in {time.perf_counter() - started:.1f} s; load {_load()}", flush=True)
    corpus = Corpus(options.seed, options.size, project=f"bench-s{options.seed}-n{options.size}")
    new = NewEpisodes(options.new, DerivedEmbedder(EmbeddingCache(options.embeddings)))
    try:
        with running_neo4j(copy, options.port, options.heap, options.pagecache) as neo4j:
            print(f"started; load {_load()}", flush=True)
            runs, _ = asyncio.run(_runs(neo4j, corpus, new, digest=False))
    finally:
        shutil.rmtree(copy, ignore_errors=True)
    for name, run in zip(("whole", "again", f"after {options.new} new"), runs, strict=False):
        print(name, json.dumps(run, default=str), flush=True)
    print("load average:", _load())


if __name__ == "__main__":
    main()
