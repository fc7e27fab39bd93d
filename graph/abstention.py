"""Abstention that fits the store: each project's similarity thresholds, measured on it.

Recall abstains when the closest memory it found is too far from the question and no error
or code location matches. How far is too far depends on the store: a large store has a
close neighbour for more questions than a small one, a store of chat turns is close to any
chatty sentence. So each project's gate is measured on its own vectors:

* ``threshold``: text about nothing the store holds (``graph/abstention_probes.py``, fixed
  everyday sentences) is searched in the project; the gate is the probes' median best
  similarity there plus a margin (never under the old fixed 0.2);
* ``code_threshold``: a question that names code (classes, files in a trace) of which the
  project knows none (no error or code location matched) is about another codebase more
  often than not; it is held to how close the project's own memories come to each other
  (the median of their nearest other memory), when that is higher.

The margin was chosen on the development sets (docs/recall.md, "Abstention"). The gates are
kept on the project (``Project.abstain_*`` with the episode count and the time measured),
measured by ``maintain`` and, lazily, by the first question after the project grew or
shrank by a quarter; recall reads them from a per-store cache (one read a minute per
project), so a question seldom pays a round trip for them, and that one while its vectors
are computed.
"""

from __future__ import annotations

import asyncio
import math
import weakref
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Protocol

from metisgraph.graph.abstention_probes import PROBES
from metisgraph.graph.channel_registry import CHANNELS
from metisgraph.graph.project_cache import ProjectCache
from metisgraph.graph.recall_request import RecallRequest
from metisgraph.graph.rows import native_value
from metisgraph.graph.store import GraphStore

__all__ = [
    "DEFAULT_ABSTAIN_BELOW",
    "AbstentionSettings",
    "Calibration",
    "Gate",
    "abstention_gates",
    "calibrate_abstention",
    "fit_threshold",
    "judge",
]

DEFAULT_ABSTAIN_BELOW = 0.2  # cosine: the gate before a project is measured (and its floor)
_DEFAULT_GATE = (DEFAULT_ABSTAIN_BELOW, DEFAULT_ABSTAIN_BELOW, "default")

# The probes' vectors, computed by the caller (the graph layer embeds nothing).
# Cosine similarity: the abstention reads the best of these.
_VECTOR_CHANNELS = tuple(c.name for c in CHANNELS if c.kind == "vector")
# Strong evidence: graph channels whose candidate may come back on its own.
_STRONG_GRAPH = tuple(c.name for c in CHANNELS if c.kind == "graph" and c.alone)

ProbeVectors = Callable[[Sequence[str]], Awaitable[Iterable[Any]]]  # rows of floats


@dataclass(frozen=True)
class AbstentionSettings:
    """How a project's threshold is fitted from its probes' scores (docs/recall.md)."""

    quantile: float = 0.5  # of the probes' best similarities in the project
    margin: float = 0.09  # added above that quantile (docs/recall.md, "Abstention")
    neighbours: int = 200  # memories sampled for how close they come to each other
    floor: float = DEFAULT_ABSTAIN_BELOW  # never below the fixed gate
    ceiling: float = 0.6  # never above: a question this close is on topic in any store
    min_episodes: int = 20  # fewer: too little to measure, the fixed default holds
    stale_share: float = 0.25  # measured again when the project's size moved this much
    cache_s: float = 60.0  # how long a process trusts what it read of a project
    # A question that clears a measured gate by less than ``standout_within`` is answered
    # only when its best memory stands out: at least ``standout`` above the fifth best of
    # the shortlist. Off-topic text close to a store's kind (a bug report asked of a trace
    # store) is about as close to many memories; an answerable question has one or a few
    # that are clearly closer (docs/recall.md, "Abstention": fitted leave-one-set-out).
    standout_within: float = 0.05
    standout: float = 0.10


ABSTENTION = AbstentionSettings()


@dataclass(frozen=True)
class Calibration:
    """A project's measured gate: the threshold, what it was fitted on, when."""

    project: str
    threshold: float
    episodes: int  # the project's episodes when it was measured
    code_threshold: float = DEFAULT_ABSTAIN_BELOW  # for a question naming code it never saw
    probes: tuple[float, ...] = ()  # each probe's best similarity there, ascending
    measured_at: datetime | None = None
    source: str = "calibrated"  # calibrated | default (too small to measure)


def _quantile(values: Sequence[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, math.ceil(q * len(ordered)) - 1))]


def fit_threshold(
    scores: Sequence[float],
    episodes: int,
    settings: AbstentionSettings = ABSTENTION,
    neighbours: Sequence[float] = (),
) -> tuple[float, float, str]:
    """The thresholds for a project whose probes scored ``scores`` and whose memories'
    nearest other memories scored ``neighbours``: (threshold, code_threshold, source)."""
    if episodes < settings.min_episodes or not scores:
        return settings.floor, settings.floor, "default"
    fitted = _quantile(scores, settings.quantile) + settings.margin
    threshold = round(min(settings.ceiling, max(settings.floor, fitted)), 4)
    code = _quantile(neighbours, 0.5) if neighbours else threshold
    return threshold, round(max(threshold, code), 4), "calibrated"


async def calibrate_abstention(
    store: GraphStore,
    project: str,
    probe_vectors: ProbeVectors,
    *,
    in_index: bool = True,
    settings: AbstentionSettings = ABSTENTION,
) -> Calibration:
    """Measure the project's gate now and keep it on the project (``maintain`` runs it)."""
    count = await store.run("abstention_episodes", project=project)
    episodes = int(count[0]["episodes"]) if count else 0
    scores: list[float] = []
    neighbours: list[float] = []
    if episodes >= settings.min_episodes:
        vectors = [list(map(float, v)) for v in await probe_vectors(PROBES)]
        suffix = "" if in_index else "_overfetch"
        rows = await store.run(f"abstention_probe_scores{suffix}", project=project, vectors=vectors)
        scores = sorted(float(r["best"]) for r in rows if r["best"] is not None)
        rows = await store.run(
            f"abstention_neighbour_scores{suffix}", project=project, sample=settings.neighbours
        )
        neighbours = sorted(float(r["best"]) for r in rows if r["best"] is not None)
    threshold, code, source = fit_threshold(scores, episodes, settings, neighbours)
    await store.run(
        "keep_abstention",
        project=project,
        threshold=threshold,
        code_threshold=code,
        episodes=episodes,
        probes=scores,
        source=source,
    )
    found = Calibration(
        project, threshold, episodes, code, tuple(scores), datetime.now(UTC), source
    )
    _READ.put(store, project, found)
    return found


_READ: ProjectCache[Calibration] = ProjectCache()  # each project's gate, as last read
# one measurement of a project's gate at a time, per store
_LOCKS: weakref.WeakKeyDictionary[GraphStore, dict[str, asyncio.Lock]] = weakref.WeakKeyDictionary()


def _lock(store: GraphStore, project: str) -> asyncio.Lock:
    locks = _LOCKS.get(store)
    if locks is None:
        locks = _LOCKS[store] = {}
    return locks.setdefault(project, asyncio.Lock())


def _stale(row: Mapping[str, Any], settings: AbstentionSettings) -> bool:
    """Never measured, or measured when the project was a quarter larger or smaller (or
    too small to measure, and no longer)."""
    if row.get("threshold") is None:
        return True
    then, now = int(row.get("measured_episodes") or 0), int(row.get("episodes") or 0)
    if then < settings.min_episodes:
        return now >= settings.min_episodes
    return abs(now - then) > settings.stale_share * then


def _kept(row: Mapping[str, Any]) -> Calibration:
    at = native_value(row.get("measured_at"))
    return Calibration(
        project=row["project"],
        threshold=float(row["threshold"]),
        episodes=int(row.get("measured_episodes") or 0),
        code_threshold=float(row.get("code_threshold") or row["threshold"]),
        probes=tuple(float(s) for s in row.get("probes") or ()),
        measured_at=at if isinstance(at, datetime) else None,
        source=str(row.get("source") or "calibrated"),
    )


async def abstention_gates(
    store: GraphStore,
    projects: Iterable[str],
    probe_vectors: ProbeVectors,
    *,
    in_index: bool = True,
    settings: AbstentionSettings = ABSTENTION,
) -> dict[str, Calibration]:
    """Each project's gate: from this process's cache when read within ``cache_s``, else
    read from the project (one query for all), measured first when never measured or
    stale."""
    wanted = list(dict.fromkeys(projects))
    missing = _READ.stale(store, wanted, settings.cache_s)
    found = {p: c for p, c in _READ.kept(store, wanted).items() if p not in missing}
    if not missing:
        return found
    for row in await store.run("abstention_gates", projects=missing):
        project = row["project"]
        if not _stale(row, settings):
            found[project] = _kept(row)
            _READ.put(store, project, found[project])
            continue
        async with _lock(store, project):  # one measurement per project at a time
            again = _READ.fresh(store, project, settings.cache_s)
            found[project] = again or await calibrate_abstention(
                store, project, probe_vectors, in_index=in_index, settings=settings
            )
    return found


@dataclass(frozen=True)
class Gate:
    """What recall's abstention read: the closest memory's similarity, the threshold it was
    held to, where that threshold came from (request, calibrated, default) and the decision.
    ``similarity`` is None when strong evidence (a shared error or code location) or a
    vector outage spared the question the test."""

    abstained: bool
    similarity: float | None
    threshold: float
    source: str
    reason: str | None = None


def _crowded(
    hits: Sequence[_Scored],
    best: float,
    threshold: float,
    source: str,
    settings: AbstentionSettings = ABSTENTION,
) -> bool:
    """Whether a question just over a measured gate finds nothing that stands out: its best
    memory is less than ``standout`` closer than the fifth best of the shortlist. Only the
    store's measured gates are held to it (not a request's own threshold, nor the default
    of a project too small to measure); fewer than three hits say nothing about a crowd."""
    if not source.startswith("calibrated") or best >= threshold + settings.standout_within:
        return False
    scores = sorted(
        (max((h.channels.get(c, 0.0) for c in _VECTOR_CHANNELS), default=0.0) for h in hits),
        reverse=True,
    )
    if len(scores) < 3:
        return False
    return scores[0] - scores[min(4, len(scores) - 1)] < settings.standout


class _Scored(Protocol):
    episode: dict[str, Any]
    channels: dict[str, float]
    dropped: list[str]


def judge(hits: Sequence[_Scored], req: RecallRequest) -> Gate:
    """Abstain when the best evidence is weak: no hit, or no strong graph evidence and every
    hit's best cosine under its project's gate (the request's own when it set one). A
    question that names code none of the hits' projects knows is held to the code gate."""
    asked = req.settings.abstain_below
    names_code = bool(req.symbols)

    def gate(project: str) -> tuple[float, str]:
        if asked is not None:
            return asked, "request"
        threshold, code, source = req.gates.get(project, _DEFAULT_GATE)
        if names_code and code > threshold:
            return code, f"{source} for code the project does not know"
        return threshold, source

    first = gate(req.projects[0]) if req.projects else (DEFAULT_ABSTAIN_BELOW, "default")
    if not hits:
        reason = "no memory in the readable projects matches the question"
        return Gate(True, None, first[0], first[1], reason)
    if any(name in hit.channels for hit in hits for name in _STRONG_GRAPH):
        return Gate(False, None, first[0], first[1])
    if set(_VECTOR_CHANNELS) <= set(hits[0].dropped):
        return Gate(False, None, first[0], first[1])
    # Each hit against its own project's gate; the closest to passing speaks for all.
    margins = []
    for hit in hits:
        similarity = max((hit.channels.get(c, 0.0) for c in _VECTOR_CHANNELS), default=0.0)
        threshold, source = gate(hit.episode.get("project", ""))
        margins.append((similarity - threshold, similarity, threshold, source))
    _, best, threshold, source = max(margins)
    if best >= threshold and not _crowded(hits, best, threshold, source):
        return Gate(False, round(best, 4), threshold, source)
    if best >= threshold:
        reason = (
            f"the closest memory (similarity {best:.2f}, threshold {threshold:.2f}: {source}) "
            "does not stand out from the rest and no error or code location matches"
        )
        return Gate(True, round(best, 4), threshold, source, reason)
    reason = (
        f"the closest memory is too far from the question (similarity {best:.2f} < "
        f"{threshold:.2f}, threshold: {source}) and no error or code location matches"
    )
    return Gate(True, round(best, 4), threshold, source, reason)
