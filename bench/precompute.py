"""Fill the embedding cache for a corpus: `python bench/precompute.py --size 100000`."""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[0] = str(ROOT)  # the repository, not bench/ (whose names must not shadow packages)

from bench.corpus import Corpus  # noqa: E402
from bench.embedcache import EmbeddingCache, cache_dir  # noqa: E402
from bench.texts import pipeline_texts  # noqa: E402
from metisgraph.ingest.embeddings import Embedder  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--size", type=int, default=100_000)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    embedder = Embedder()
    embedder.load()
    model = embedder.settings.model
    cache = EmbeddingCache(cache_dir(ROOT / "bench" / ".cache", model, args.seed))
    started, done, computed = time.perf_counter(), 0, 0
    for texts in pipeline_texts(Corpus(args.seed, args.size), model):
        missing = [t for t in texts if t not in cache]
        if missing:
            for text, vector in zip(missing, embedder.encode(missing), strict=True):
                cache.put(text, vector)
            computed += len(missing)
        cache.flush()
        done += 1000
        rate = computed / (time.perf_counter() - started)
        print(f"{done} episodes, {computed} texts embedded, {rate:.1f} texts/s", flush=True)
    cache.flush()


if __name__ == "__main__":
    main()
