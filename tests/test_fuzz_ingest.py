"""Mutated copies of real records through the real ingest path: no crash, no silent loss.

~500 lines by default (``METISGRAPH_FUZZ_RECORDS`` and ``METISGRAPH_FUZZ_SEED`` change it);
the 10,000-line run is the ``heavy`` test (``METISGRAPH_HEAVY=1``). The embedder is a
stand-in: meaning is irrelevant here, the pipeline's handling of what it is given is not.
"""

from __future__ import annotations

import os
from collections import Counter
from pathlib import Path
from typing import Any

import anyio
import pytest
from embedders import HashEmbedder
from fuzzing import (
    MUST_REFUSE,
    MUST_WRITE,
    Line,
    load_seeds,
    mutated_lines,
    read_items,
    write_files,
)

from metisgraph.ingest.adapters import Parsed, Refused
from metisgraph.ingest.pipeline import Ingestor
from metisgraph.ingest.prepare.episode import prepare_episode
from metisgraph.ingest.records import EpisodeRecord, TaskRecord

pytestmark = pytest.mark.anyio


def _shared() -> Path | None:
    root = Path(os.environ.get("METISGRAPH_SHARED_DIR", Path(__file__).parents[2] / "shared"))
    return root if root.is_dir() else None


async def _stored(store: Any, project: str) -> tuple[dict[str, str], set[str]]:
    episodes = await store.run_text(
        "MATCH (e:Episode {project: $p}) RETURN e.id AS id, e.content_hash AS hash",
        {"p": project},
        read=True,
    )
    tasks = await store.run_text(
        "MATCH (t:Task {project: $p}) RETURN t.id AS id", {"p": project}, read=True
    )
    return {r["id"]: r["hash"] for r in episodes}, {r["id"] for r in tasks}


def _expected(items: list[Parsed | Refused], refused: set[tuple[str, int]], model: str) -> Any:
    """Last version of each accepted episode id -> its content hash; accepted task ids."""
    episodes: dict[str, str] = {}
    tasks: set[str] = set()
    for item in items:
        if isinstance(item, Refused) or (item.ref.file, item.ref.line or 0) in refused:
            continue
        record = item.record
        if isinstance(record, EpisodeRecord):
            prepared = prepare_episode(record, model)
            episodes[prepared.id] = prepared.content_hash
        elif isinstance(record, TaskRecord) and record.id:
            tasks.add(record.id)
    return episodes, tasks


async def fuzz(store: Any, project: str, folder: Path, count: int, seed: int) -> dict[str, Any]:
    """Mutate, ingest, and check; returns the figures (and fails with the seed on a breach)."""
    where = f"(seed {seed}, {count} lines, files in {folder})"
    seeds = load_seeds(_shared())
    lines = list(mutated_lines(seeds, count, project, seed))
    files = write_files(lines, folder)
    items, _ = read_items(files)
    embedder = HashEmbedder()
    summary = await Ingestor(store, embedder, batch_size=64).ingest(items, keep_results=True)

    refused = {(r.ref.file, r.ref.line or 0) for r in summary.refusals}
    for refusal in summary.refusals:
        assert refusal.errors and all(e.message.strip() for e in refusal.errors), where
        assert refusal.ref.line is not None, f"a refusal names no line {where}: {refusal}"
    silent = [r for r in summary.results if r.status == "refused" and not r.errors]
    assert not silent, f"refused without a reason {where}: {silent[:3]}"

    breaches: list[str] = []
    outcome: Counter[str] = Counter()
    for path, mine in files.values():
        for number, line in enumerate(mine, start=1):
            verdict = "refused" if (str(path), number) in refused else "accepted"
            outcome[verdict] += 1
            if (line.expect, verdict) in ((MUST_REFUSE, "accepted"), (MUST_WRITE, "refused")):
                breaches.append(_breach(path, number, line, summary.refusals))
    assert not breaches, f"{len(breaches)} lines not as expected {where}:\n" + "\n".join(
        breaches[:10]
    )

    model = embedder.settings.model
    episodes, tasks = await anyio.to_thread.run_sync(_expected, items, refused, model)
    stored, stored_tasks = await _stored(store, project)
    missing = sorted(set(episodes) - set(stored))
    stale = sorted(i for i in episodes if i in stored and stored[i] != episodes[i])
    assert not missing, f"{len(missing)} accepted episodes not in the graph {where}: {missing[:5]}"
    assert not stale, f"{len(stale)} episodes hold an older version {where}: {stale[:5]}"
    assert set(stored) == set(episodes), f"episodes in the graph that no line wrote {where}"
    assert tasks <= stored_tasks, f"tasks missing {where}: {sorted(tasks - stored_tasks)[:5]}"
    return {
        "lines": count,
        "accepted": outcome["accepted"],
        "refused": outcome["refused"],
        "episodes": len(stored),
        "tasks": len(stored_tasks),
        "reasons": Counter(
            e.message.split(":")[0][:40] for r in summary.refusals for e in r.errors
        ),
    }


def _breach(path: Path, number: int, line: Line, refusals: list[Refused]) -> str:
    reasons = [r.describe() for r in refusals if r.ref.line == number and r.ref.file == str(path)]
    return f"{path.name}:{number} {line.mutations} expected {line.expect}; {reasons[:1]}"


@pytest.mark.slow
@pytest.mark.long  # 8-18 s: hundreds of mutated records through the whole ingest
async def test_mutated_records_are_refused_with_a_reason_or_written(
    store: Any, project: str, tmp_path: Path
) -> None:
    count = int(os.environ.get("METISGRAPH_FUZZ_RECORDS", "500"))
    seed = int(os.environ.get("METISGRAPH_FUZZ_SEED", "12"))
    figures = await fuzz(store, project, tmp_path, count, seed)
    assert figures["accepted"] and figures["refused"]  # both kinds of line were made


@pytest.mark.heavy
@pytest.mark.parametrize("seed", [101])
async def test_ten_thousand_mutated_records(
    store: Any, project: str, tmp_path: Path, seed: int
) -> None:
    figures = await fuzz(store, project, tmp_path, 10_000, seed)
    assert figures["lines"] == 10_000
    print(f"fuzz figures (seed {seed}): {figures}")  # shown with -rP: docs/reliability.md
