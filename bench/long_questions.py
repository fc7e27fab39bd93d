"""The long-question phase's questions: real pasted traces and bug reports.

Agents paste issues and stack traces; those questions cost more than a short one at every
stage (redaction, frames and symbols, full-text terms, the embedding). The recall benchmark
asks them of the corpus after its short questions: the failing tests' traces of
`trace2fix-defects4j` and the new reports of `bugdup-hadoop` (METISGRAPH_SHARED_DIR, default
../shared, `eval/<set>/queries.jsonl`), half of each, in file order. They are unrelated to
the synthetic corpus: the phase measures latency, not recall.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from bench.corpus import Query

__all__ = ["LONG_SETS", "long_questions", "shared_dir"]

ROOT = Path(__file__).resolve().parents[1]
LONG_SETS = ("trace2fix-defects4j", "bugdup-hadoop")


def shared_dir() -> Path:
    return Path(os.environ.get("METISGRAPH_SHARED_DIR", ROOT.parent / "shared"))


def long_questions(count: int, shared: Path | None = None) -> list[Query]:
    """``count`` long questions, alternating between the sets (fewer when they hold fewer);
    none when the shared data is not there."""
    per_set: list[list[Query]] = []
    for name in LONG_SETS:
        path = (shared or shared_dir()) / "eval" / name / "queries.jsonl"
        if not path.is_file():
            return []
        with path.open() as lines:
            rows = [json.loads(line) for line in lines if line.strip()]
        per_set.append(
            [
                Query(r["id"], r["text"], r.get("error"), frozenset(), task_id="")
                for r in rows[: (count + 1) // 2]
            ]
        )
    mixed = [q for pair in zip(*per_set, strict=False) for q in pair]
    return mixed[:count]
