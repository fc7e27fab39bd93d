"""Each shortlisted candidate of a question as numbers: what the learned ranker reads.

One function (``candidate_features``) builds them from what recall already has in hand —
the channels' answers (graph/channel_registry.py names them) and the expansion's one round
trip (errors, task, environment, tools, tags, snippets) — so the features cost no read of
their own. Names are stable: the ranker's weights file is keyed by them.

* ``<channel>.score``: a ranked channel's (vector, full-text) score standardised over its
  own candidates, an absent candidate at the channel's floor; a graph channel's score over
  its best (absent: 0). ``<channel>.rank``: 1 / its rank there (absent: 0).
* ``hand.score`` / ``hand.rank``: the hand-set fusion's score (standardised over the
  shortlist) and 1 / its place.
* ``trust.*``: ln of each trust factor.
* ``question.*``: hit the question's own error; names the question's symbols.
* ``top.*``: the share of the other top candidates (hand order) it shares errors, error
  families, symbols, files, tools, tags, its task or its environment with.
* ``task.*``: candidates of its own task in the shortlist, closeness to a top one there.
* ``spread.shortlist``: one step of propagation over the shortlist's own links (errors,
  families, symbols, files, task), seeded by the hand order: sum over the others of
  1 / their place x the share of those links in common. ``question.hops``: 1 / the hops
  from the question's own error or symbols to it through those links (1: linked itself,
  1/2: through another candidate, 0: further or never).
* ``ppr.*``: a personalised PageRank over the shortlist's errors, families, symbols, files,
  tools and task, started from the question's own entities and the channels' top hits
  (graph/propagation.py).
* ``recency``: ln(1 + days older than the newest candidate); ``outcome.success``,
  ``has.*``: what it is.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from metisgraph.graph.channel_registry import CHANNELS
from metisgraph.graph.fusion import Candidate
from metisgraph.graph.propagation import PROPAGATION, personalised_pagerank
from metisgraph.graph.recall_request import RecallRequest

if TYPE_CHECKING:
    from metisgraph.graph.recall_hit import Hit

__all__ = ["FEATURES", "TOP", "FeatureTable", "candidate_features"]

_TRUST = ("confidence", "review", "decay")
TOP = 10  # the "other top candidates" graph evidence is shared with (hand order)
_RELATIONS = ("errors", "families", "symbols", "files", "tools", "tags", "task", "environment")

FEATURES: tuple[str, ...] = (
    *(f"{c.name}.{part}" for c in CHANNELS for part in ("score", "rank")),
    "hand.score",
    "hand.rank",
    "trust.confidence",
    "trust.review",
    "trust.decay",
    "question.errors",
    "question.symbols",
    *(f"top.{r}" for r in _RELATIONS),
    "task.neighbours",
    "task.near_top",
    "spread.shortlist",
    "question.hops",
    *PROPAGATION,
    "recency",
    "outcome.success",
    "has.errors",
    "has.snippets",
    "has.fix",
)

Matrix = npt.NDArray[np.float64]


@dataclass(frozen=True)
class FeatureTable:
    """The shortlist's features: one row per candidate, in the order given."""

    keys: list[tuple[str, str]]  # (project, id)
    matrix: Matrix  # len(keys) x len(FEATURES)
    hand: list[float]  # the hand-set fusion's score (relevance + trust)

    def row(self, index: int) -> dict[str, float]:
        return dict(zip(FEATURES, map(float, self.matrix[index]), strict=True))


@dataclass(frozen=True)
class _Evidence:
    """What one candidate is linked to, as sets of names."""

    errors: frozenset[str]
    families: frozenset[str]
    symbols: frozenset[str]
    files: frozenset[str]
    tools: frozenset[str]
    tags: frozenset[str]
    task: frozenset[str]
    environment: frozenset[str]

    @classmethod
    def of(cls, hit: Hit) -> _Evidence:
        frames = {f for e in hit.errors for f in e.get("frames") or [] if f}
        symbols = {s for sn in hit.snippets for s in sn.get("symbols") or [] if s}
        files = {f for sn in hit.snippets for f in sn.get("files") or [] if f}
        task = (hit.task or {}).get("id") or hit.episode.get("task_id")
        return cls(
            errors=frozenset(e["key"] for e in hit.errors if e.get("key")),
            families=frozenset(str(e["family"]) for e in hit.errors if e.get("family")),
            symbols=frozenset(frames | symbols),
            files=frozenset(files),
            tools=frozenset(t["name"] for t in hit.tools if t.get("name")),
            tags=frozenset(hit.episode.get("tags") or []),
            task=frozenset([task] if task else []),
            environment=frozenset([hit.environment["key"]] if hit.environment else []),
        )


def _channel_columns(
    hits: Sequence[Hit], answers: Mapping[str, Sequence[Candidate]]
) -> list[list[float]]:
    """Each hit's score and 1/rank in every registered channel (absent: floor or 0)."""
    stats: dict[str, tuple[float, float, float, float]] = {}  # mean, spread, floor, best
    for name, ranked in answers.items():
        values = [c.score for c in ranked]
        if not values:
            continue
        mean = sum(values) / len(values)
        spread = math.sqrt(sum((v - mean) ** 2 for v in values) / len(values)) or 1.0
        stats[name] = (mean, spread, (min(values) - mean) / spread, max(values) or 1.0)
    rows = []
    for hit in hits:
        row: list[float] = []
        for c in CHANNELS:
            score, rank = hit.channels.get(c.name), hit.ranks.get(c.name)
            if c.name not in stats:
                row += [0.0, 0.0]
                continue
            mean, spread, floor, best = stats[c.name]
            if c.kind == "graph":
                row.append(score / best if score is not None else 0.0)
            else:
                row.append((score - mean) / spread if score is not None else floor)
            row.append(1.0 / rank if rank else 0.0)
        rows.append(row)
    return rows


def _shares(mine: _Evidence, others: Sequence[_Evidence]) -> list[float]:
    """The share of the others it has something in common with, per relation."""
    if not others:
        return [0.0] * len(_RELATIONS)
    return [
        sum(bool(getattr(mine, r) & getattr(o, r)) for o in others) / len(others)
        for r in _RELATIONS
    ]


def _question(evidence: _Evidence, req: RecallRequest) -> list[float]:
    """Hit the question's own error (its signature key); ln(1 + the question's symbols
    named among its symbols, files and stack frames). A similar error is the errors
    channel's score."""
    asked = {s.lower() for s in req.symbols}
    mine = {s.lower() for s in evidence.symbols | evidence.files}
    named = sum(any(a == m or m.endswith("." + a) or m.endswith("/" + a) for m in mine)
                for a in asked)  # fmt: skip
    return [float(bool(set(req.error_keys) & evidence.errors)), math.log1p(named)]


def _task(index: int, hits: Sequence[Hit], evidence: Sequence[_Evidence]) -> list[float]:
    """Candidates of its own task in the shortlist (ln 1+n), and 1 / (1 + its distance in
    steps to the nearest top candidate of that task)."""
    mine = evidence[index].task
    if not mine:
        return [0.0, 0.0]
    same = [j for j, e in enumerate(evidence) if j != index and e.task == mine]
    step = hits[index].episode.get("step")
    near = 0.0
    for j in same:
        other = hits[j].episode.get("step")
        if j < TOP and isinstance(step, int) and isinstance(other, int):
            near = max(near, 1.0 / (1 + abs(step - other)))
    return [math.log1p(len(same)), near]


_LINKS = ("errors", "families", "symbols", "files", "task")


def _shared_links(evidence: Sequence[_Evidence]) -> Matrix:
    """The share of the link kinds each pair of candidates has in common (n x n, 0 on the
    diagonal): one incidence matrix per kind, multiplied (numpy, not n² set intersections)."""
    n = len(evidence)
    shared = np.zeros((n, n))
    for relation in _LINKS:
        values: dict[str, int] = {}
        pairs = [(i, values.setdefault(v, len(values)))
                 for i, e in enumerate(evidence) for v in getattr(e, relation)]  # fmt: skip
        if not pairs:
            continue
        incidence = np.zeros((n, len(values)))
        rows, columns = zip(*pairs, strict=True)
        incidence[list(rows), list(columns)] = 1.0
        shared += (incidence @ incidence.T) > 0
    np.fill_diagonal(shared, 0.0)
    return shared / len(_LINKS)


def _spread(evidence: Sequence[_Evidence], linked: Sequence[bool]) -> list[tuple[float, float]]:
    """Each candidate's spread from the hand order and its hops from the question."""
    if not evidence:
        return []
    shared = _shared_links(evidence)
    spread = shared @ (1.0 / np.arange(1, len(evidence) + 1))
    near = ((shared > 0) & np.asarray(linked, dtype=bool)[None, :]).any(axis=1)
    return [(float(spread[i]), 1.0 if linked[i] else 0.5 if near[i] else 0.0)
            for i in range(len(evidence))]  # fmt: skip


_WALKED = ("errors", "families", "symbols", "files", "tools", "task")


def _propagation(
    hits: Sequence[Hit], evidence: Sequence[_Evidence], req: RecallRequest
) -> list[tuple[float, float]]:
    """Each candidate's personalised PageRank features (graph/propagation.py)."""
    links = [frozenset(f"{r}:{v}" for r in _WALKED for v in getattr(e, r)) for e in evidence]
    asked = {s.lower() for s in req.symbols}
    question = {f"errors:{k}" for k in req.error_keys}
    for e in evidence:
        for relation in ("symbols", "files"):
            for m in getattr(e, relation):
                low = m.lower()
                if any(a == low or low.endswith(("." + a, "/" + a)) for a in asked):
                    question.add(f"{relation}:{m}")
    return personalised_pagerank(links, [h.ranks for h in hits], frozenset(question))


def _days(moment: Any) -> float | None:
    return moment.timestamp() / 86400 if isinstance(moment, datetime) else None


def candidate_features(
    hits: Sequence[Hit], answers: Mapping[str, Sequence[Candidate]], req: RecallRequest
) -> FeatureTable:
    """The features of the shortlisted hits, in hand order (as given: best hand score
    first)."""
    evidence = [_Evidence.of(h) for h in hits]
    channels = _channel_columns(hits, answers)
    hand = [h.score for h in hits]
    mean = sum(hand) / len(hand) if hand else 0.0
    spread = math.sqrt(sum((v - mean) ** 2 for v in hand) / len(hand)) if hand else 0.0
    days = [_days(h.episode.get("created_at")) for h in hits]
    newest = max((d for d in days if d is not None), default=None)
    asked = [_question(e, req) for e in evidence]
    spreads = _spread(evidence, [bool(q[0] or q[1]) for q in asked])
    walked = _propagation(hits, evidence, req)
    rows = []
    for i, hit in enumerate(hits):
        top = [e for j, e in enumerate(evidence[:TOP]) if j != i]
        age = days[i]
        recency = math.log1p(max(0.0, newest - age)) if newest is not None and age else 0.0
        rows.append([
            *channels[i],
            (hit.score - mean) / (spread or 1.0),
            1.0 / (i + 1),
            *(math.log(max(hit.trust.get(f, 1.0), 1e-6)) for f in _TRUST),
            *asked[i],
            *_shares(evidence[i], top),
            *_task(i, hits, evidence),
            *spreads[i],
            *walked[i],
            recency,
            float(hit.episode.get("outcome") == "success"),
            float(bool(hit.errors)),
            float(bool(hit.snippets)),
            float(bool(hit.fixed_by)),
        ])  # fmt: skip
    matrix = np.asarray(rows, dtype=np.float64).reshape(len(hits), len(FEATURES))
    keys = [(str(h.episode["project"]), str(h.episode["id"])) for h in hits]
    return FeatureTable(keys=keys, matrix=matrix, hand=hand)
