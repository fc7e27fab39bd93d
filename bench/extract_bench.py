"""Error extraction throughput: megabytes of agent output signed per second, no database.

The text is what ingest sees: build chatter (lines that hold no error) with one error of
every family the fixtures show (Python, Java, Go, Rust, native crashes, database codes …)
every ~80 lines, a few megabytes in all. Deterministic by seed.
"""

from __future__ import annotations

import random
import time
from dataclasses import dataclass
from pathlib import Path

from metisgraph.ingest.errors import extract_errors

__all__ = ["ExtractFigures", "bench_extract"]

FIXTURES = Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "errors"


@dataclass(frozen=True)
class ExtractFigures:
    megabytes: float
    blocks: int
    errors: int
    seconds: float
    megabytes_per_s: float  # target >= 1 MB/s on one core


def _blocks(seed: int, count: int) -> list[str]:
    rng = random.Random(seed)
    fixtures = [p.read_text(encoding="utf-8") for p in sorted(FIXTURES.glob("*.txt"))]
    prose = [
        f"step {i}: compiled module_{i % 17}.c in {rng.random():.3f}s, {i % 5} warnings"
        for i in range(400)
    ]
    return ["\n".join([*rng.sample(prose, 80), rng.choice(fixtures)]) for _ in range(count)]


def bench_extract(seed: int, blocks: int = 500) -> ExtractFigures:
    """Sign ``blocks`` blocks of ~80 chatter lines and one error each; wall time of the whole."""
    texts = _blocks(seed, blocks)
    size = sum(len(t) for t in texts) / 1e6
    started = time.perf_counter()
    found = sum(len(extract_errors(t)) for t in texts)
    seconds = time.perf_counter() - started
    rate = round(size / seconds, 2)
    return ExtractFigures(round(size, 2), blocks, found, round(seconds, 2), rate)
