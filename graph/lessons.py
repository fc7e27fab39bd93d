"""Which episodes are the same memory, and which are the same lesson: the plan of a maintain run.

Pure computation over what ``graph.consolidate`` reads (no database here). Candidates are
never all pairs: two episodes are compared only when they share an error signature or a
tool (groups of at most ``block_cap``), or fall in the same bucket of a random-hyperplane
hash of their vectors (close neighbours: ``lsh_bands`` bands of ``lsh_bits`` bits), and at
least one of them is new or changed since the last run (dirty). A second run with nothing
dirty compares nothing.

* **Duplicates**: the same outcome, kind and error signatures, vectors at least
  ``duplicate_similarity`` apart (``exact`` when the embedded texts are the same). Leader
  clustering: each dirty episode, in (created_at, id) order, becomes the duplicate of the
  closest canonical episode it matches; canonicals already stored stay canonical, so a
  duplicate is always within the threshold of its canonical (no chains).
* **Lessons**: episodes (duplicates too: another task's copy is another confirmation) with
  the same outcome, the same situation (a shared error
  signature; else a shared tool; else neither has any) and vectors at least
  ``lesson_similarity`` apart. Star clusters: a dirty episode joins the stored pattern whose
  seed it matches best; the others are grouped around the unassigned episode with the most
  matches, while a group reaches ``min_support`` independent sources (distinct tasks).
"""

from __future__ import annotations

import hashlib
from collections import defaultdict
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

__all__ = [
    "ConsolidationSettings",
    "LessonPlan",
    "Memory",
    "candidate_pairs",
    "pattern_id",
    "plan_lessons",
    "support",
]

Floats = npt.NDArray[np.float32]
Ints = npt.NDArray[np.int64]
Groups = frozenset[tuple[str, str]]
_EXACT = 0.9995  # cosine of two embeddings of the same text (float noise aside)
_SEED = 20261201  # the hyperplanes are fixed: the same vectors always fall in the same buckets
_CHUNK = 1 << 18  # pairs scored per matrix product


@dataclass(frozen=True)
class ConsolidationSettings:
    """How maintain groups memory. The defaults and why: docs/consolidation.md."""

    duplicate_similarity: float = 0.97  # near-duplicates: the same text but for a few words
    lesson_similarity: float = 0.85  # the same lesson told in other words
    min_support: int = 3  # two episodes alike can be chance; three make a pattern
    block_cap: int = 200  # a shared error/tool group larger than this is left to the hash
    lsh_bits: int = 16  # bits per band: buckets hold only close neighbours
    lsh_bands: int = 24  # bands: a pair at the lesson threshold meets in one of them
    bucket_cap: int = 2000  # a bucket larger than this (one dense region) is skipped
    retire_snippets: bool = True  # never reused and failing snippets leave recall


@dataclass(frozen=True)
class Memory:
    """One episode as consolidation sees it."""

    id: str
    outcome: str
    kind: str
    errors: frozenset[str]
    tools: frozenset[str]
    created_at: str  # ISO text: orders episodes, oldest first
    dirty: bool  # new or changed since the last run
    task: str | None = None  # steps of one task are one source, not independent evidence
    duplicate_of: str | None = None
    pattern: str | None = None  # the stored pattern it belongs to


@dataclass
class LessonPlan:
    """What a run changes: duplicate links and the members of each touched pattern."""

    duplicates: dict[str, tuple[str, float, bool]] = field(default_factory=dict)  # id -> canon
    patterns: dict[str, list[str]] = field(default_factory=dict)  # pattern id -> members
    seeds: dict[str, str] = field(default_factory=dict)  # pattern id -> seed member
    dissolved: list[str] = field(default_factory=list)  # stored patterns to delete
    compared: int = 0  # candidate pairs scored


def pattern_id(project: str, seed: str) -> str:
    """A pattern is named after its seed: the same seed, the same pattern, run after run."""
    return "pattern:" + hashlib.sha256(f"{project}\x00{seed}".encode()).hexdigest()[:20]


def _pairs_in_groups(order: Ints, starts: Ints, sizes: Ints) -> tuple[Ints, Ints]:
    """Every pair (a, b), a before b, within each group of ``order`` (start, size)."""
    keep = sizes >= 2
    starts, sizes = starts[keep], sizes[keep]
    if not len(sizes):
        return np.empty(0, np.int64), np.empty(0, np.int64)
    runs = zip(starts.tolist(), sizes.tolist(), strict=True)
    positions = np.concatenate([np.arange(s, s + m - 1, dtype=np.int64) for s, m in runs])
    ends = np.repeat(starts + sizes, sizes - 1)
    after = ends - positions - 1
    total = int(after.sum())
    left = np.repeat(positions, after)
    offsets = np.repeat(np.cumsum(after) - after, after)
    right = np.arange(total, dtype=np.int64) - offsets + left + 1
    return order[left], order[right]


def _grouped(keys: npt.NDArray[np.uint64], cap: int) -> tuple[Ints, Ints, Ints]:
    order = np.argsort(keys, kind="stable").astype(np.int64)
    sorted_keys = keys[order]
    breaks = np.flatnonzero(np.diff(sorted_keys)) + 1
    starts = np.concatenate(([0], breaks)).astype(np.int64)
    sizes = np.diff(np.concatenate((starts, [len(keys)]))).astype(np.int64)
    small = sizes <= cap
    return order, starts[small], sizes[small]


def _hash_pairs(vectors: Floats, settings: ConsolidationSettings) -> Iterator[tuple[Ints, Ints]]:
    """Pairs that share a bucket in some band of the random-hyperplane hash."""
    rng = np.random.default_rng(_SEED)
    planes = rng.standard_normal((vectors.shape[1], settings.lsh_bits * settings.lsh_bands))
    bits = (vectors @ planes.astype(np.float32)) > 0
    weights = (1 << np.arange(settings.lsh_bits, dtype=np.uint64)).astype(np.uint64)
    for band in range(settings.lsh_bands):
        chunk = bits[:, band * settings.lsh_bits : (band + 1) * settings.lsh_bits]
        keys = (chunk.astype(np.uint64) * weights).sum(axis=1, dtype=np.uint64)
        yield _pairs_in_groups(*_grouped(keys, settings.bucket_cap))


def _block_pairs(
    memories: Sequence[Memory], cap: int, large: Groups = frozenset()
) -> Iterator[tuple[Ints, Ints]]:
    """Pairs that share an error signature or a tool, in groups of at most ``cap``; the
    groups in ``large`` are larger in the store than the memories read show."""
    groups: dict[tuple[str, str], list[int]] = defaultdict(list)
    for index, memory in enumerate(memories):
        for key in memory.errors:
            groups[("error", key)].append(index)
        for key in memory.tools:
            groups[("tool", key)].append(index)
    for group, members in groups.items():
        if 2 <= len(members) <= cap and group not in large:
            a, b = np.triu_indices(len(members), k=1)
            ids = np.asarray(members, dtype=np.int64)
            yield ids[a], ids[b]


def candidate_pairs(
    memories: Sequence[Memory],
    vectors: Floats,
    settings: ConsolidationSettings,
    large: Groups = frozenset(),
) -> tuple[Ints, Ints]:
    """The pairs worth comparing (i < j), each once; at least one end dirty."""
    n = len(memories)
    dirty = np.fromiter((m.dirty for m in memories), dtype=bool, count=n)
    codes: list[npt.NDArray[np.int64]] = []
    blocks = _block_pairs(memories, settings.block_cap, large)
    for a, b in (*_hash_pairs(vectors, settings), *blocks):
        keep = dirty[a] | dirty[b]
        low, high = np.minimum(a[keep], b[keep]), np.maximum(a[keep], b[keep])
        codes.append(np.unique(low * n + high))
    if not codes:
        return np.empty(0, np.int64), np.empty(0, np.int64)
    unique = np.unique(np.concatenate(codes))
    return unique // n, unique % n


def _scored(vectors: Floats, a: Ints, b: Ints, floor: float) -> tuple[Ints, Ints, Floats]:
    """The pairs whose cosine is at least ``floor``, with it (vectors are unit length)."""
    kept: list[tuple[Ints, Ints, Floats]] = []
    for start in range(0, len(a), _CHUNK):
        i, j = a[start : start + _CHUNK], b[start : start + _CHUNK]
        sims = np.einsum("ij,ij->i", vectors[i], vectors[j])
        close = sims >= floor
        kept.append((i[close], j[close], sims[close].astype(np.float32)))
    if not kept:
        return np.empty(0, np.int64), np.empty(0, np.int64), np.empty(0, np.float32)
    return (
        np.concatenate([k[0] for k in kept]),
        np.concatenate([k[1] for k in kept]),
        np.concatenate([k[2] for k in kept]),
    )


def _same_situation(x: Memory, y: Memory) -> bool:
    if x.errors or y.errors:
        return bool(x.errors & y.errors)
    if x.tools or y.tools:
        return bool(x.tools & y.tools)
    return True


def _same_memory(x: Memory, y: Memory) -> bool:
    return x.outcome == y.outcome and x.kind == y.kind and x.errors == y.errors


def _same_lesson(x: Memory, y: Memory) -> bool:
    return x.outcome == y.outcome and _same_situation(x, y)


@dataclass
class _Edges:
    """Scored pairs, each way: index -> [(other index, cosine)]."""

    duplicate: dict[int, list[tuple[int, float]]] = field(default_factory=lambda: defaultdict(list))
    lesson: dict[int, list[tuple[int, float]]] = field(default_factory=lambda: defaultdict(list))


def _edges(
    memories: Sequence[Memory], vectors: Floats, settings: ConsolidationSettings, large: Groups
) -> tuple[_Edges, int]:
    a, b = candidate_pairs(memories, vectors, settings, large)
    floor = min(settings.duplicate_similarity, settings.lesson_similarity)
    i, j, sims = _scored(vectors, a, b, floor)
    edges = _Edges()
    for x, y, sim in zip(i.tolist(), j.tolist(), sims.tolist(), strict=True):
        mx, my = memories[x], memories[y]
        if sim >= settings.duplicate_similarity and _same_memory(mx, my):
            edges.duplicate[x].append((y, sim))
            edges.duplicate[y].append((x, sim))
        if sim >= settings.lesson_similarity and _same_lesson(mx, my):
            edges.lesson[x].append((y, sim))
            edges.lesson[y].append((x, sim))
    return edges, len(a)


def _order(memories: Sequence[Memory], indexes: Sequence[int]) -> list[int]:
    return sorted(indexes, key=lambda i: (memories[i].created_at, memories[i].id))


def _merge_duplicates(memories: Sequence[Memory], edges: _Edges, plan: LessonPlan) -> None:
    """Each dirty episode, oldest first, joins the closest leader it matches or leads."""
    leaders = {i for i, m in enumerate(memories) if not m.dirty and m.duplicate_of is None}
    for i in _order(memories, [i for i, m in enumerate(memories) if m.dirty]):
        matches = [(sim, j) for j, sim in edges.duplicate.get(i, []) if j in leaders]
        if not matches:
            leaders.add(i)
            continue
        sim, j = max(matches, key=lambda t: (t[0], -t[1]))
        plan.duplicates[memories[i].id] = (memories[j].id, round(sim, 4), sim >= _EXACT)


def _centroid_match(i: int, seeds: dict[int, str], edges: _Edges) -> str | None:
    """The stored pattern whose seed a dirty episode matches best, if any."""
    best = [(sim, seeds[j]) for j, sim in edges.lesson.get(i, []) if j in seeds]
    return max(best)[1] if best else None


def support(memories: Sequence[Memory], indexes: Iterable[int]) -> int:
    """Independent sources among the episodes: distinct tasks (an episode without a task is
    its own). Steps of one task repeat one experience; other tasks confirm it."""
    return len({memories[i].task or "\x00" + memories[i].id for i in indexes})


def _stars(
    memories: Sequence[Memory], candidates: list[int], edges: _Edges, min_support: int
) -> Iterator[tuple[int, list[int]]]:
    """Star clusters: seeds in order of their number of neighbours among the candidates (most
    first); each takes its neighbours not yet taken, and stands when it reaches min_support."""
    pool = set(candidates)
    degree = {i: sum(1 for j, _ in edges.lesson.get(i, []) if j in pool) for i in pool}
    taken: set[int] = set()
    for seed in sorted(pool, key=lambda i: (-degree[i], i)):
        if seed in taken or degree[seed] + 1 < min_support:
            continue
        free = sorted(j for j, _ in edges.lesson.get(seed, []) if j in pool and j not in taken)
        members = [seed, *free]
        if support(memories, members) < min_support:
            continue
        taken.update(members)
        yield seed, members


def plan_lessons(
    project: str,
    memories: Sequence[Memory],
    vectors: Floats,
    pattern_seeds: dict[str, str],
    settings: ConsolidationSettings,
    large: Groups = frozenset(),
) -> LessonPlan:
    """What a maintain run writes: duplicates of the dirty episodes, and touched patterns.

    ``pattern_seeds``: stored pattern id -> its seed's id. A stored pattern whose seed is
    dirty (changed, or merged as a duplicate) is dissolved and its members grouped again.
    ``large``: ("error" | "tool", key) groups larger in the store than among ``memories``
    (a run that read only the candidates of its dirty episodes): never compared as groups.
    """
    plan = LessonPlan()
    edges, plan.compared = _edges(memories, vectors, settings, large)
    _merge_duplicates(memories, edges, plan)
    by_id = {m.id: i for i, m in enumerate(memories)}
    members: dict[str, list[int]] = defaultdict(list)
    for i, m in enumerate(memories):
        if m.pattern and not m.dirty:
            members[m.pattern].append(i)
    seeds: dict[int, str] = {}
    for pid, seed in sorted(pattern_seeds.items()):
        s = by_id.get(seed)
        if s is None or memories[s].dirty or s not in members[pid]:
            plan.dissolved.append(pid)
            members.pop(pid, None)
        else:
            seeds[s] = pid
    touched = {m.pattern for m in memories if m.dirty and m.pattern} - set(plan.dissolved)
    dissolved = set(plan.dissolved)
    loose = [
        i for i, m in enumerate(memories) if m.dirty or m.pattern in dissolved or not m.pattern
    ]
    unassigned: list[int] = []
    for i in loose:
        joined = _centroid_match(i, seeds, edges) if memories[i].dirty else None
        if joined is None:
            unassigned.append(i)
        else:
            members[joined].append(i)
            touched.add(joined)
    fresh = [i for i in unassigned if memories[i].dirty or memories[i].pattern in dissolved]
    reach = set(fresh) | {j for i in fresh for j, _ in edges.lesson.get(i, [])}
    pool = [i for i in unassigned if i in reach]
    for leader, group in _stars(memories, pool, edges, settings.min_support):
        pid = pattern_id(project, memories[leader].id)
        members[pid] = group
        seeds[leader] = pid
        touched.add(pid)
    seed_of = {pid: memories[s].id for s, pid in seeds.items()}
    for pid in sorted(touched):
        indexes = members.get(pid, [])
        names = sorted(memories[i].id for i in indexes)
        if support(memories, indexes) >= settings.min_support:
            plan.patterns[pid], plan.seeds[pid] = names, seed_of[pid]
        elif pid in pattern_seeds:
            plan.dissolved.append(pid)  # fell below the support a pattern needs
    return plan
