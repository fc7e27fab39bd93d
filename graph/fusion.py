"""Fuse channels' ranked candidates into one relevance score each: recall's and snippets'."""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from metisgraph.graph.channel_registry import channel
from metisgraph.graph.channel_registry import weight as channel_weight
from metisgraph.graph.recall_settings import RecallSettings

__all__ = ["Candidate", "Fused", "fuse", "ranked", "reciprocal_rank"]

Key = tuple[str, str]  # (project, id)


@dataclass(frozen=True)
class Candidate:
    key: Key
    score: float


@dataclass
class Fused:
    key: Key
    relevance: float
    scores: dict[str, float] = field(default_factory=dict)  # raw channel scores
    ranks: dict[str, int] = field(default_factory=dict)
    contributions: dict[str, float] = field(default_factory=dict)


def _zscore(ranked: Sequence[Candidate], weight: float) -> tuple[dict[Key, float], float]:
    """Weighted z-scores over the channel's own candidates, and the value for an absent one."""
    values = [c.score for c in ranked]
    mean = sum(values) / len(values)
    spread = math.sqrt(sum((v - mean) ** 2 for v in values) / len(values)) or 1.0
    floor = (min(values) - mean) / spread
    return {c.key: weight * (c.score - mean) / spread for c in ranked}, weight * floor


def fuse(channels: Mapping[str, Sequence[Candidate]], settings: RecallSettings) -> list[Fused]:
    """Recall's fusion: one score per candidate, best first.

    ``zscore``: each ranked channel (vector, full-text …) is standardised over its own
    candidates, weighted and summed; a candidate a channel did not return gets that
    channel's floor. Graph channels (errors, symbols, tags …) are sparse evidence: they add
    weight * score / best score. ``rrf``: reciprocal rank fusion, weighted.
    """
    weights = {name: channel_weight(settings, name) for name in channels}
    if settings.fusion == "rrf":
        return reciprocal_rank(channels, weights, settings.rrf_k)
    fused = _collect(channels)
    floors: dict[str, float] = {}
    for name, ranked in channels.items():
        weight = weights[name]
        if not ranked or weight == 0:
            continue
        if channel(name).kind == "graph":
            best = max(c.score for c in ranked) or 1.0
            for candidate in ranked:
                fused[candidate.key].contributions[name] = weight * candidate.score / best
        else:
            contributions, floors[name] = _zscore(ranked, weight)
            for key, value in contributions.items():
                fused[key].contributions[name] = value
    return _best_first(fused, floors)


def reciprocal_rank(
    channels: Mapping[str, Sequence[Candidate]], weights: Mapping[str, float], k: int
) -> list[Fused]:
    """Weighted reciprocal rank fusion: each channel adds weight / (k + rank), best first.

    A channel without weight still reports its scores and ranks (why a hit matched) but
    adds nothing to the relevance.
    """
    fused = _collect(channels)
    for name, ranked in channels.items():
        weight = weights.get(name, 0.0)
        if weight:
            for rank, candidate in enumerate(ranked, start=1):
                fused[candidate.key].contributions[name] = weight / (k + rank)
    return _best_first(fused, {})


def _collect(channels: Mapping[str, Sequence[Candidate]]) -> dict[Key, Fused]:
    """Every candidate with its score and rank in each channel that returned it."""
    fused: dict[Key, Fused] = {}
    for name, ranked in channels.items():
        for rank, candidate in enumerate(ranked, start=1):
            item = fused.get(candidate.key)
            if item is None:  # built once a candidate: hundreds a question, most seen twice
                item = fused[candidate.key] = Fused(candidate.key, 0.0)
            item.scores[name] = candidate.score
            item.ranks[name] = rank
    return fused


def _best_first(fused: dict[Key, Fused], floors: Mapping[str, float]) -> list[Fused]:
    for item in fused.values():
        missing = sum(floor for name, floor in floors.items() if name not in item.contributions)
        item.relevance = sum(item.contributions.values()) + missing
    return sorted(fused.values(), key=lambda f: (-f.relevance, f.key))


def ranked(rows: Sequence[Mapping[str, object]]) -> list[Candidate]:
    """Query rows (project, id, score) as candidates, keeping the best score per episode."""
    best: dict[Key, float] = defaultdict(lambda: -math.inf)
    order: list[Key] = []
    for row in rows:
        key = (str(row["project"]), str(row["id"]))
        score = float(row["score"])  # type: ignore[arg-type]
        if key not in best:
            order.append(key)
        best[key] = max(best[key], score)
    return sorted((Candidate(k, best[k]) for k in order), key=lambda c: -c.score)
