"""`metisgraph maintain`: one project's memory consolidated, with no LLM.

Reads what consolidation needs of every embedded episode (a page at a time), plans the
duplicates and patterns in memory (``graph.lessons``), writes them, recomputes the touched
patterns' statistics, marks the episodes seen and retires dead snippets. The reconcile hook
(conflicts and supersession) gets only the dirty episodes whose situations are not written
for what they are now: ingest writes them for each batch, so a freshly loaded store has
none to redo (redoing 100,000 took longer than the rest of maintain). Incremental: only
dirty episodes (new or changed since the last run) are compared, and a run with nothing
dirty reads nothing else and writes nothing. A run with few dirty episodes (under a quarter
of the store) reads only their candidates: episodes sharing an error or a tool with one of
them, their nearest neighbours by vector, and the whole of the patterns these belong to
(cypher/consolidate.cypher maintain_candidates); a run over every episode read them all
(23.7 of 26.4 s at 100k).
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from metisgraph.graph.lessons import ConsolidationSettings, LessonPlan, Memory, plan_lessons
from metisgraph.graph.outcomes import recount_steps
from metisgraph.graph.store import GraphStore
from metisgraph.graph.vectors import Vector

__all__ = [
    "MaintainReport",
    "Reconcile",
    "consolidate",
    "projects_to_maintain",
    "refresh_patterns",
]

_PAGE = 5000
_WRITE_ROWS = 2000
# A run reads only its dirty episodes' candidates when they are fewer than the store over
# this; a first run, or a large load, reads everything (the candidates would be most of it).
_CANDIDATES_BELOW = 4
# Nearest neighbours read per dirty episode: the hash's buckets (lessons.py) pair an episode
# only with close ones; a pair below the lower threshold is never kept.
_NEIGHBOURS = 100

# Called with the project and the ids of the episodes whose situations are not written for
# their present state (stamped `situated` by relate_situations): new or changed ones, and
# those a later RESOLVED link or code across the bridge unstamped, though their content did
# not change. A hook for what else maintain keeps in order (conflicts and supersession,
# issue 10 item 4).
Reconcile = Callable[[GraphStore, str, list[str]], Awaitable[Any]]


@dataclass
class MaintainReport:
    project: str
    episodes: int = 0  # embedded episodes read
    dirty: int = 0  # new or changed since the last run
    unsituated: int = 0  # episodes whose conflicts and supersessions were written again
    compared: int = 0  # candidate pairs scored
    duplicates: int = 0  # episodes merged into a canonical one this run
    patterns: int = 0  # patterns created or updated
    dissolved: int = 0  # patterns deleted (seed changed, or support fell)
    retired: int = 0  # snippets retired this run
    revived: int = 0  # retired snippets back in use
    abstain_below: float | None = None  # the abstention threshold measured (graph/abstention.py)
    seconds: dict[str, float] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        return {k: (round(v, 3) if isinstance(v, float) else v) for k, v in vars(self).items()}


async def projects_to_maintain(store: GraphStore) -> list[str]:
    """The projects with something for maintain to do."""
    return [r["project"] for r in await store.run("maintain_projects")]


async def _rows(
    store: GraphStore, project: str, ids: list[str] | None, cap: int
) -> AsyncIterator[list[dict[str, Any]]]:
    """Pages of the project's embedded episodes: all of them, or these."""
    if ids is not None:
        for start in range(0, len(ids), _PAGE):
            chunk = ids[start : start + _PAGE]
            yield await store.run("maintain_episodes_by_id", project=project, ids=chunk, cap=cap)
        return
    after = ""
    while True:
        rows = await store.run("maintain_episodes", project=project, after=after, page=_PAGE)
        yield rows
        if len(rows) < _PAGE:
            return
        after = rows[-1]["id"]


async def _candidates(
    store: GraphStore, project: str, settings: ConsolidationSettings
) -> list[str]:
    """The ids a run with few dirty episodes reads (maintain_candidates)."""
    floor = min(settings.duplicate_similarity, settings.lesson_similarity)
    rows = await store.run(
        "maintain_candidates",
        project=project,
        cap=settings.block_cap,
        neighbours=_NEIGHBOURS,
        score=(1 + floor) / 2,  # the vector index's score of that cosine
    )
    return [r["id"] for r in rows]


async def _read(
    store: GraphStore, project: str, ids: list[str] | None = None, cap: int = 0
) -> tuple[list[Memory], np.ndarray, frozenset[tuple[str, str]]]:
    """The project's embedded episodes (or these) and their unit vectors; with ``ids``, the
    errors and tools among them shared by more than ``cap`` episodes of the store."""
    memories: list[Memory] = []
    vectors: list[list[float]] = []
    large: set[tuple[str, str]] = set()
    async for rows in _rows(store, project, ids, cap):
        for row in rows:
            memories.append(
                Memory(
                    id=row["id"],
                    outcome=row["outcome"],
                    kind=row["kind"],
                    errors=frozenset(row["errors"]),
                    tools=frozenset(row["tools"]),
                    created_at=row["created_at"] or "",
                    dirty=bool(row["dirty"]),
                    duplicate_of=row["duplicate_of"],
                    pattern=row["pattern"],
                    task=row["task"],
                )
            )
            vectors.append(row["embedding"])
            large.update(("error", k) for k in row.get("large_errors") or ())
            large.update(("tool", k) for k in row.get("large_tools") or ())
    matrix = np.asarray(vectors, dtype=np.float32).reshape(len(vectors), -1)
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    return memories, matrix / np.where(norms == 0, 1.0, norms), frozenset(large)


def _chunks(items: Sequence[Any], size: int = _WRITE_ROWS) -> list[Sequence[Any]]:
    return [items[i : i + size] for i in range(0, len(items), size)]


def _pattern_rows(
    plan: LessonPlan, memories: Sequence[Memory], vectors: np.ndarray
) -> list[dict[str, Any]]:
    index = {m.id: i for i, m in enumerate(memories)}
    rows = []
    for pid, members in plan.patterns.items():
        centroid = vectors[[index[m] for m in members]].mean(axis=0)
        centroid /= np.linalg.norm(centroid) or 1.0
        rows.append(
            {
                "id": pid,
                "seed": plan.seeds[pid],
                "members": members,
                "embedding": Vector(centroid.tolist()),
            }
        )
    return rows


async def _write(
    store: GraphStore, project: str, plan: LessonPlan, memories: Sequence[Memory], vectors: Any
) -> None:
    dirty = [m.id for m in memories if m.dirty]
    merged = set(plan.duplicates)
    rows = [
        {"id": i, "canonical": c, "similarity": s, "exact": exact}
        for i, (c, s, exact) in sorted(plan.duplicates.items())
    ]
    for chunk in _chunks([i for i in dirty if i not in merged]):
        await store.run("maintain_unduplicate", project=project, ids=list(chunk))
    for chunk in _chunks(rows):
        await store.run("maintain_duplicates", project=project, rows=list(chunk))
    if plan.dissolved:
        await store.run("maintain_dissolve", project=project, ids=sorted(set(plan.dissolved)))
    patterns = _pattern_rows(plan, memories, vectors)
    for chunk in _chunks(patterns, 500):
        await store.run("maintain_patterns", project=project, rows=list(chunk))
    for chunk in _chunks(sorted(plan.patterns), 500):
        await _pattern_stats(store, project, list(chunk))
    for chunk in _chunks(dirty, 10_000):
        await store.run("maintain_mark", project=project, ids=list(chunk))


async def _pattern_stats(store: GraphStore, project: str, ids: list[str]) -> None:
    """Patterns' statistics and prior read from their members, and their confidence
    recounted from that prior and the reports about them, in one transaction."""
    keys = [{"project": project, "id": i} for i in ids]
    await store.write_many(
        [("maintain_pattern_stats", {"project": project, "ids": ids}),
         *recount_steps("Pattern", keys)]
    )  # fmt: skip


async def refresh_patterns(
    store: GraphStore, project: str, ids: list[str], min_support: int | None = None
) -> int:
    """Patterns whose members changed (an episode forgotten): their statistics read again;
    one left below ``min_support`` (default: the settings') is dissolved. Returns how many
    were dissolved."""
    if not ids:
        return 0
    least = ConsolidationSettings().min_support if min_support is None else min_support
    await _pattern_stats(store, project, ids)
    small = await store.run("maintain_small_patterns", project=project, ids=ids, min=least)
    gone = [r["id"] for r in small]
    if gone:
        await store.run("maintain_dissolve", project=project, ids=gone)
    return len(gone)


async def consolidate(
    store: GraphStore,
    project: str,
    settings: ConsolidationSettings | None = None,
    *,
    reconcile: Reconcile | None = None,
) -> MaintainReport:
    """Merge duplicates, group lessons into patterns and retire dead snippets in a project."""
    settings = settings or ConsolidationSettings()
    report = MaintainReport(project)
    started = time.perf_counter()
    pending = (await store.run("maintain_pending", project=project))[0]
    if pending["dirty"]:
        ids = None
        if pending["dirty"] * _CANDIDATES_BELOW < pending["embedded"]:
            ids = await _candidates(store, project, settings)
        memories, vectors, large = await _read(store, project, ids, settings.block_cap)
        report.seconds["read"] = time.perf_counter() - started
        report.episodes, report.dirty = len(memories), sum(m.dirty for m in memories)
        step = time.perf_counter()
        stored = await store.run("maintain_stored_patterns", project=project)
        seeds = {r["id"]: r["seed"] for r in stored}
        if ids is not None:  # the patterns read are read whole; the others are not touched
            read = {m.id for m in memories}
            seeds = {p: seed for p, seed in seeds.items() if seed in read}
        plan = plan_lessons(project, memories, vectors, seeds, settings, large)
        report.seconds["plan"] = time.perf_counter() - step
        step = time.perf_counter()
        await _write(store, project, plan, memories, vectors)
        report.seconds["write"] = time.perf_counter() - step
        report.compared, report.duplicates = plan.compared, len(plan.duplicates)
        report.patterns, report.dissolved = len(plan.patterns), len(set(plan.dissolved))
    if reconcile is not None:
        # After the write: merging a duplicate changes what its situation stamp covers.
        step = time.perf_counter()
        unsituated = [r["id"] for r in await store.run("maintain_unsituated", project=project)]
        if unsituated:
            report.unsituated = len(unsituated)
            await reconcile(store, project, unsituated)
            report.seconds["reconcile"] = time.perf_counter() - step
    if pending["shrunk"]:
        stored = await store.run("maintain_stored_patterns", project=project)
        shrunk = [r["id"] for r in stored if r["shrunk"]]
        report.dissolved += await refresh_patterns(store, project, shrunk, settings.min_support)
        report.patterns += len(shrunk)
    if settings.retire_snippets:
        step = time.perf_counter()
        revived = await store.run("maintain_revive_snippets", project=project)
        retired = await store.run("maintain_retire_snippets", project=project)
        report.revived, report.retired = revived[0]["revived"], retired[0]["retired"]
        report.seconds["snippets"] = time.perf_counter() - step
    report.seconds["total"] = time.perf_counter() - started
    return report
