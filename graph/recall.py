"""Recall: candidates from every channel, fused, weighted by trust, expanded across the bridge.

Round trips, a fixed number whatever k and whatever the size of the graph: the channels
that need no vector (one statement, asked while the question is embedded), the vector
channels (one), then the shortlist's reads (one: the expansion of the best candidates with
the snippets across the bridge, their patterns, how alike they are). The projects' clocks
for the warm tier are read at most every CLOCK_REUSE_SECONDS (graph/decay.py). On an
otherwise idle server the full-text channels' own shortlist is expanded while the vector
channels are asked (`Early`), and the read after the fusion expands only what that left.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections.abc import Awaitable, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import Any, TypeVar

from metisgraph.graph.abstention import Gate, judge
from metisgraph.graph.applicability import (
    CallerConditions,
    episode_applies,
    episode_text,
    snippet_applies,
)
from metisgraph.graph.channels import (
    ChannelAnswers,
    ChannelFailure,
    gather_channels,
    lexical_channels,
)
from metisgraph.graph.conflicts import (
    Conflict,
    Similarities,
    find_conflicts,
    partners_of,
    similarities,
)
from metisgraph.graph.decay import (
    TIERS,
    idle_days,
    project_clocks,
    recent_clocks,
    warm_since,
)
from metisgraph.graph.fusion import Fused, fuse
from metisgraph.graph.learned_rank import rerank
from metisgraph.graph.rank_features import FeatureTable
from metisgraph.graph.recall_hit import Hit
from metisgraph.graph.recall_patterns import (
    PatternHit,
    fold_duplicates,
    patterns_for,
)
from metisgraph.graph.recall_reads import (
    Early,
    expand_rows,
    returnable,
    shortlist_of,
    shortlist_reads,
)
from metisgraph.graph.recall_request import QuestionVectors, RecallRequest, SnippetJudge
from metisgraph.graph.rows import native_value
from metisgraph.graph.store import GraphStore
from metisgraph.graph.trust import evidence, trust_adjustment, trust_factors

__all__ = ["Hit", "PatternHit", "RecallOutcome", "newer_first", "recall"]

_M = TypeVar("_M", bound="Hit | PatternHit")
log = logging.getLogger("metisgraph.recall")
# What the conflicts among the hits need, read with the expansion: how alike each pair of
# the shortlist is, each candidate's recorded partners (ids it CONTRADICTS/SUPERSEDES), and
# every row read: the shortlist and the partners of its first k (most often the hits').
_Key = tuple[str, str]
_Sides = tuple[Similarities, dict[_Key, list[str]], dict[_Key, dict[str, Any]]]

_running = 0  # recalls under way in this process: the early expansion's gate (`recall`)
_TEXT_CHARS = 4000
_STORED_JSON = ("facts", "action_parameters")  # maps an episode keeps as JSON text


@dataclass
class RecallOutcome:
    hits: list[Hit]
    conflicts: list[Conflict]
    abstained: bool
    reason: str | None
    timings: dict[str, float]
    candidates: int
    warnings: list[ChannelFailure] = field(default_factory=list)  # channels dropped, and why
    patterns: list[PatternHit] = field(default_factory=list)  # lessons beside the hits
    # The other side of a conflict outside the hits (CONTRADICTS / SUPERSEDES), shown whole
    partners: list[Hit] = field(default_factory=list)
    gate: Gate | None = None  # what the abstention read and decided (graph/abstention.py)
    features: FeatureTable | None = None  # the shortlist's, when the settings keep them


def _trim(episode: dict[str, Any]) -> dict[str, Any]:
    for key in ("observation", "reasoning", "action_command", "error_text"):
        text = episode.get(key)
        if isinstance(text, str) and len(text) > _TEXT_CHARS:
            episode[key] = text[:_TEXT_CHARS] + " …"
    for key in _STORED_JSON:
        episode[key] = _loaded(episode.get(key))
    return episode


def _loaded(value: Any) -> Any:
    """A map stored as JSON text (ingest/prepare/episode.py), as a value; None when absent
    or unreadable (written by no version of ours)."""
    if not isinstance(value, str) or not value:
        return None
    try:
        return json.loads(value)
    except ValueError:
        return None


def _hit(row: dict[str, Any], fused: Fused, req: RecallRequest, now: datetime) -> Hit:
    episode = _trim(dict(row["episode"]))
    clock = row.get("clock") or now
    factors = trust_factors(episode, req.settings.trust, clock)
    errors = [e for e in row.get("errors") or [] if e]
    caller = req.caller()
    named = episode_text(episode, row.get("tools") or [])
    applies = episode_applies(row.get("environment"), errors, caller, named)
    if caller is not None and caller.stated():  # a factor only where it was judged
        factors["applies"] = req.settings.trust.applies.get(applies.status, 1.0)
    flagged = ["pending review"] if episode.get("review_status") == "pending" else []
    superseded_by = sorted(row.get("superseded_by") or [])
    if superseded_by:
        flagged.append(f"superseded by {', '.join(superseded_by)} (a newer fix of the same error)")
    episode["contradicts"] = [c for c in row.get("contradicts") or [] if c]
    episode["superseded_by"] = superseded_by
    task = row.get("task")
    if task:
        task = {k: native_value(v) for k, v in task.items()}
    return Hit(
        episode=episode,
        task=task,
        score=fused.relevance + trust_adjustment(factors, req.settings.trust),
        relevance=fused.relevance,
        channels=fused.scores,
        ranks=fused.ranks,
        contributions=fused.contributions,
        trust=factors,
        errors=errors,
        environment=row.get("environment"),
        previous=row.get("previous"),
        next=row.get("next"),
        flagged=flagged,
        snippets=list(row.get("snippets") or []),
        duplicates=list(episode.pop("duplicates", None) or []),
        evidence=evidence(episode, req.settings.trust, clock),
        superseded_by=superseded_by,
        fixed_by=[_fix(f) for f in row.get("fixed_by") or [] if f],
        tools=list(row.get("tools") or []),
        applies=applies,
    )


def _fix(row: dict[str, Any]) -> dict[str, Any]:
    """A fix as recall returns it: its action parameters read from their stored JSON."""
    return {**row, "parameters": _loaded(row.get("parameters"))}


def _abstain(hits: list[Hit], req: RecallRequest) -> Gate:
    """Whether to return nothing because the best evidence is weak (graph/abstention.py).
    Without a vector channel's answer (all dropped) there is no similarity to judge by."""
    return judge(hits, req)


async def _channels(
    store: GraphStore,
    req: RecallRequest,
    vectors: QuestionVectors | Awaitable[QuestionVectors],
    in_index: bool,
    timings: dict[str, float],
    speculate: bool,
) -> tuple[ChannelAnswers, QuestionVectors, Early | None]:
    """Every channel's candidates, the question's vectors, and the early expansion when
    ``speculate``. The channels that need no vector are asked at once, while the vectors
    are computed: the model keeps one core, the server answers on the other."""
    lexical = asyncio.ensure_future(lexical_channels(store, req))
    early = Early(store, req, lexical) if speculate else None
    try:
        waited = time.perf_counter()
        found = vectors if isinstance(vectors, QuestionVectors) else await vectors
        timings["embed_ms"] = (time.perf_counter() - waited) * 1000
        started = time.perf_counter()
        answers = await gather_channels(store, req, found, in_index=in_index, lexical=lexical)
    except BaseException:
        lexical.cancel()
        await asyncio.gather(lexical, return_exceptions=True)
        if early is not None:
            await early.stop()
        raise
    timings["channels_ms"] = (time.perf_counter() - started) * 1000
    return answers, found, early


def _judged(
    snippets: list[dict[str, Any]], judge: SnippetJudge | None, caller: CallerConditions | None
) -> list[dict[str, Any]]:
    """The snippets across the bridge, each with the caller's verdict when there is a judge
    and whether it applies to the caller; one that does not apply comes after the others."""
    if judge is None:
        return snippets
    for snippet in snippets:
        verdict = judge(snippet)
        snippet["compatible"] = verdict.status
        snippet["reasons"] = list(verdict.reasons)
        applies = snippet_applies(
            snippet.get("worked_in") or [], verdict.status, verdict.reasons, caller
        )
        snippet["applies"] = applies.as_dict()
    return sorted(snippets, key=lambda s: s["applies"]["status"] == "no")


async def _expand(
    store: GraphStore,
    req: RecallRequest,
    shortlist: list[Fused],
    answers: ChannelAnswers,
    vector: list[float],
    early: Early | None,
) -> tuple[list[Hit], list[PatternHit], FeatureTable | None, _Sides]:
    """The shortlisted candidates as hits, with what recall shows of each, best first (a
    merged duplicate folded into its canonical when both were found), their patterns, and
    what their conflicts need: how alike each pair is, each one's recorded partners."""
    keys = [f.key for f in shortlist]
    # One round trip for the hits and the snippets across the bridge (and the conflict
    # partners of the first k) — those the early expansion did not read — their patterns,
    # and how alike they all are (a number a pair: no vector comes back).
    done = early.keys if early is not None and early.keys is not None else frozenset()
    reads, first = await asyncio.gather(
        shortlist_reads(store, req, keys, done, vector),
        early.task if early is not None and done else _nothing(),
    )
    rows, pairs = reads.rows, reads.alike
    if first is None:  # the early read failed: its keys read now
        rows += await expand_rows(store, req, [key for key in keys if key in done], ())
    read = {(r["project"], r["id"]): r for r in [*(first or ()), *rows]}
    asked = set(keys)
    linked = {key: r.get("linked") or [] for key, r in read.items() if key in asked}
    by_key = {key: r for key, r in read.items() if key in asked and _in_tiers(r, req)}
    now = datetime.now(UTC)
    hits = [_hit(by_key[f.key], f, req, now) for f in shortlist if f.key in by_key]
    dropped = sorted(f.channel for f in answers.failures)
    for hit in hits:
        hit.dropped = dropped
    hits.sort(key=lambda h: -h.score)
    table = rerank(hits, answers.candidates, req)  # ranker: learned rescores them
    hits.sort(key=lambda h: -h.score)
    hits = fold_duplicates(hits)
    return hits, patterns_for(reads.patterns, hits), table, (pairs, linked, read)


async def _nothing() -> list[dict[str, Any]]:
    return []


def _ranked(
    hits: list[Hit], patterns: list[PatternHit], req: RecallRequest
) -> tuple[list[Hit], list[PatternHit]]:
    """Episodes and patterns the caller wants, best first, k in all, each with its rank."""
    memories: list[Hit | PatternHit] = [*patterns]
    if req.filters.wants("episode"):
        memories.extend(hits)
    memories.sort(key=lambda m: -m.score)
    kept = newer_first(memories[: req.k])
    for rank, memory in enumerate(kept, start=1):
        memory.rank = rank
    chosen = [m for m in kept if isinstance(m, Hit)]
    for hit in chosen:
        hit.snippets = _judged(hit.snippets, req.judge, req.caller())
    return chosen, [m for m in kept if isinstance(m, PatternHit)]


def _in_tiers(row: dict[str, Any], req: RecallRequest) -> bool:
    """Exactly in the tiers asked for, on its own project's clock (the channels filtered by
    the most lenient clock of the projects asked)."""
    cold_after = req.settings.trust.decay.cold_after_days
    tiers = set(req.filters.tiers)
    if cold_after is None or tiers == set(TIERS):
        return True
    idle = idle_days(row["episode"].get("active_at"), row.get("clock") or datetime.now(UTC))
    return ("cold" if idle > cold_after else "warm") in tiers


def newer_first(memories: Sequence[_M]) -> list[_M]:
    """Each hit a newer one superseded placed just after it; otherwise the order is kept
    (patterns stay where they are)."""
    ordered = list(memories)

    def newer(m: _M) -> list[str]:
        return m.superseded_by if isinstance(m, Hit) else []

    for _ in range(len(ordered) ** 2):  # SUPERSEDES goes from newer to older: no cycles
        position = {m.episode["id"]: i for i, m in enumerate(ordered) if isinstance(m, Hit)}
        moved = next(
            (
                (i, max(position[n] for n in newer(m) if n in position))
                for i, m in enumerate(ordered)
                if any(position.get(n, -1) > i for n in newer(m))
            ),
            None,
        )
        if moved is None:
            break
        older, newest = moved
        ordered.insert(newest, ordered.pop(older))
    return ordered


async def _with_tiers(store: GraphStore, req: RecallRequest) -> RecallRequest:
    """The request with the earliest warm `active_at` of its projects filled in."""
    decay = req.settings.trust.decay
    if decay.cold_after_days is None or set(req.filters.tiers) == set(TIERS):
        return req
    # The warm tier (the default) may start a little early: recent_clocks; the cold alone
    # on the clocks as they are now.
    read = recent_clocks if "warm" in req.filters.tiers else project_clocks
    clocks = await read(store, req.projects)
    filters = replace(req.filters, tier_since=warm_since(clocks, decay))
    return replace(req, filters=filters)


async def recall(
    store: GraphStore,
    req: RecallRequest,
    vectors: QuestionVectors | Awaitable[QuestionVectors],
    *,
    in_index: bool = True,
    speculate: bool | None = None,
) -> RecallOutcome:
    """Answer a recall request: what the API shows, each hit saying why it ranked there.

    ``vectors``: the question's embeddings, or their computation (awaited while the
    channels that need no vector are asked). ``in_index``: the server filters inside its
    vector indexes (else they are over-fetched). ``speculate``: expand the lexical
    channels' shortlist while the vector channels are asked (`Early`); None: when no other
    recall is under way in this process.
    """
    global _running
    _running += 1
    try:
        early = _running == 1 if speculate is None else speculate
        return await _recall(store, req, vectors, in_index, early)
    finally:
        _running -= 1


async def _recall(
    store: GraphStore,
    req: RecallRequest,
    vectors: QuestionVectors | Awaitable[QuestionVectors],
    in_index: bool,
    speculate: bool,
) -> RecallOutcome:
    timings: dict[str, float] = {}
    if not isinstance(vectors, QuestionVectors):
        vectors = asyncio.ensure_future(vectors)  # embedding while the clocks are read
    try:
        req = await _with_tiers(store, req)
    except BaseException:
        if isinstance(vectors, asyncio.Future):
            vectors.cancel()
            await asyncio.gather(vectors, return_exceptions=True)
        raise
    answers, found, early = await _channels(store, req, vectors, in_index, timings, speculate)
    started = time.perf_counter()
    try:
        fused = returnable(fuse(answers.candidates, req.settings))
        expanded = time.perf_counter()
        shortlist, patterns, table, sides = await _expand(
            store, req, shortlist_of(fused, req), answers, found.text, early
        )
    finally:
        if early is not None:
            await early.stop()
    hits, patterns = _ranked(shortlist, patterns, req)
    timings["expand_ms"] = (time.perf_counter() - expanded) * 1000
    gate = _abstain(shortlist, req)
    reason = gate.reason
    if reason is None and not hits and not patterns:
        reason = "no memory of the kinds asked for matches the question"
    conflicts: list[Conflict] = []
    partners: list[Hit] = []
    if reason is None and req.conflicts:
        partners, alike = await _partners(store, req, hits, sides)
        conflicts = _conflicts(hits, partners, req, alike)
    # From the first channel asked (the embedding is embed_ms, apart).
    timings["total_ms"] = timings["channels_ms"] + (time.perf_counter() - started) * 1000
    return RecallOutcome(
        hits=[] if reason else hits,
        conflicts=conflicts,
        abstained=reason is not None,
        reason=reason,
        timings=timings,
        candidates=len(fused),
        warnings=answers.failures,
        patterns=[] if reason else patterns,
        partners=partners,
        gate=gate,
        features=table,
    )


async def _partners(
    store: GraphStore, req: RecallRequest, hits: list[Hit], sides: _Sides
) -> tuple[list[Hit], Similarities]:
    """The episodes the hits CONTRADICT or SUPERSEDE that did not make the top k, whole (read
    with the expansion when they are partners of the first k candidates; else one round
    trip to expand them), for the side-by-side view; and how alike each pair of hits and
    partners is."""
    alike, linked, read = sides
    shown = [(h.episode["project"], h.episode["id"]) for h in hits]
    found = partners_of(linked, shown)
    if not found:
        return [], alike
    if all(key in read for key in found):  # neighbouring steps are not shown for a partner
        rows = [{**read[key], "previous": None, "next": None} for key in found]
    else:
        rows, more = await asyncio.gather(
            expand_rows(store, replace(req, steps=False), found, ()),
            similarities(store, [*shown, *found]),
        )
        alike = alike | more
    now = datetime.now(UTC)
    return [_hit(row, Fused((row["project"], row["id"]), 0.0), req, now) for row in rows], alike


def _conflicts(
    hits: list[Hit], partners: list[Hit], req: RecallRequest, alike: Similarities
) -> list[Conflict]:
    """Pairs that disagree among the hits, and between a hit and a partner outside them."""
    for hit in (*hits, *partners):
        hit.episode["error_keys"] = [e["key"] for e in hit.errors]
    outside = {p.episode["id"] for p in partners}
    found = find_conflicts(
        [h.episode for h in (*hits, *partners)], req.settings.conflict_similarity, alike
    )
    return [c for c in found if not (c.a in outside and c.b in outside)]
