"""GraphQL types of what recall returns (hits, patterns, conflicts, warnings), and how an
outcome of `graph.recall` becomes them. The arguments and the resolver: api/graphql/recall_types.py.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

import strawberry
from strawberry.scalars import JSON

from metisgraph.api.graphql.applies_types import Applies, applies_view
from metisgraph.api.graphql.common_types import (
    Environment,
    ToolStats,
    environment_view,
    tool_stats_view,
)
from metisgraph.api.graphql.fix_types import HitFix, hit_fix
from metisgraph.api.graphql.recall_caveat_types import (
    ABSTENTION,
    Abstention,
    RecallWarning,
    abstention_view,
)
from metisgraph.api.graphql.snippet_views import BridgeSnippet, bridge_snippet
from metisgraph.api.graphql.views import View, derived
from metisgraph.api.graphql.why_types import ChannelScore, FeatureTerm, TrustFactor, feature_terms
from metisgraph.graph import Conflict as FoundConflict
from metisgraph.graph import Hit, RecallOutcome, native_value
from metisgraph.graph import PatternHit as FoundPattern

__all__ = ["Episode", "RecallHit", "RecallResult", "RecallWarning", "episode_view", "recall_result"]


@strawberry.type(description="A task an episode belongs to, and how it ended.")
class TaskInfo:
    id: str
    goal: str | None
    status: str | None
    outcome: str | None
    steps: int | None
    started_at: datetime | None
    ended_at: datetime | None
    constraints: list[str] = strawberry.field(
        default_factory=list, description="What the task had to respect, as recorded"
    )
    tests_failed: list[str] = strawberry.field(
        default_factory=list,
        description="Tests its harness verdict reports failing (at most 20; task(id) has all)",
    )


@strawberry.type(description="One unit of experience (sanitized: no raw text, no secrets).")
class Episode:
    id: str
    project: str
    task_id: str | None
    step: int | None
    kind: str | None
    title: str | None
    summary: str
    reasoning: str | None
    action_type: str | None
    action_command: str | None
    action_parameters: JSON | None = strawberry.field(
        description="The action's parameters as recorded (sanitized)"
    )
    observation: str | None
    error: str | None
    facts: JSON | None = strawberry.field(description="The structured facts recorded with it")
    outcome: str
    tags: list[str]
    source: str | None
    confidence: float | None
    review_status: str | None
    resolution: str | None
    resolved_by: str | None
    uses: int | None
    successes: int | None
    failures: int | None
    created_at: datetime | None
    duplicate_of: str | None = strawberry.field(
        default=None, description="The canonical episode this one was merged into (maintain)"
    )


@strawberry.type(description="A neighbouring step of the same task.")
class StepRef:
    id: str
    step: int | None
    summary: str | None
    outcome: str | None


@strawberry.type(description="An error the episode hit or resolved.")
class HitError:
    relation: str
    key: str
    kind: str
    category: str | None
    template: str | None
    frames: list[str]


@strawberry.type(description="What the trust factors were made from.")
class TrustEvidence:
    source: str | None
    prior: float = strawberry.field(description="The confidence before any report")
    prior_strength: float = strawberry.field(description="The prior's worth, in reports")
    successes: int
    failures: int
    weighted_successes: float = strawberry.field(
        description="As they count: the n-th report from one project, task and agent counts "
        "half of the one before"
    )
    weighted_failures: float
    independent_confirmations: int
    posterior_mean: float
    posterior_sd: float
    idle_days: float = strawberry.field(
        description="Since it was stored, last used or confirmed, on its project's clock"
    )


@strawberry.type(description="Why a hit ranked where it did.")
class Why:
    relevance: float
    trust_adjustment: float
    channels: list[ChannelScore]
    trust: list[TrustFactor]
    evidence: TrustEvidence
    dropped: list[str] = strawberry.field(
        description="Channels that failed for this question: the ranking lacks their evidence "
        "(RecallResult.warnings says why)"
    )
    tools: list[ToolStats] = strawberry.field(
        description="The tools the episode used, with how their uses went in its project"
    )
    features: list[FeatureTerm] = strawberry.field(
        description="Under the learned ranker (preset learned): each feature's term in the "
        "score, largest first; empty under the hand-set fusion"
    )


def _hit_why(root: RecallHit) -> Why:
    return _why(root.found)


def _hit_previous(root: RecallHit) -> StepRef | None:
    return _step(root.found.previous)


def _hit_next(root: RecallHit) -> StepRef | None:
    return _step(root.found.next)


def _hit_applies(root: RecallHit) -> Applies:
    return applies_view(root.found.applies)


def _hit_fixed_by(root: RecallHit) -> list[HitFix]:
    return [hit_fix(f) for f in root.found.fixed_by]


@strawberry.type
class RecallHit:
    # why, previous and next are built only when a document selects them (most select none)
    found: strawberry.Private[Hit]
    episode: Episode
    score: float
    why: Why = strawberry.field(resolver=_hit_why)
    snippets: list[BridgeSnippet]
    errors: list[HitError]
    environment: Environment | None
    task: TaskInfo | None
    previous: StepRef | None = strawberry.field(resolver=_hit_previous)
    next: StepRef | None = strawberry.field(resolver=_hit_next)
    flagged: list[str] = strawberry.field(
        description="e.g. 'pending review', 'superseded by … (a newer fix of the same error)'"
    )
    rank: int = strawberry.field(
        default=0, description="Place among everything returned, patterns included (1 = first)"
    )
    duplicates: list[str] = strawberry.field(
        default_factory=list, description="Episodes merged into this one as duplicates"
    )
    applies: Applies = strawberry.field(
        resolver=_hit_applies,
        description="Whether its conditions (environment, errors) hold in the caller's stated "
        "environment: one that does not hold ranks below one that does",
    )
    fixed_by: list[HitFix] = strawberry.field(
        resolver=_hit_fixed_by,
        description="What fixed the errors this step hit (the lineage's fix links), grouped "
        "by action: fixes first, by the runs where the action fixed it, then workarounds",
    )


@strawberry.type(description="The snippet a pattern recommends: the best its members used.")
class RecommendedSnippet:
    id: str
    name: str | None
    language: str | None
    kind: str | None
    template: str | None
    success_rate: float | None
    risk: str | None
    members: int | None = strawberry.field(description="Members of the pattern that used it")


@strawberry.type(description="A lesson consolidated from several tasks (maintain), no LLM.")
class Pattern:
    id: str
    project: str
    title: str | None
    summary: str = strawberry.field(description="Extractive: the seed's words, then the stats")
    support: int = strawberry.field(description="Independent sources: distinct tasks")
    episodes: int = strawberry.field(description="Member episodes")
    success_rate: float | None
    outcome: str | None
    kind: str | None
    environments: list[str]
    tools: list[str]
    error_keys: list[str]


@strawberry.type(description="A pattern among recall's results, ranked just above its best member.")
class PatternHit:
    pattern: Pattern
    score: float
    rank: int = strawberry.field(description="Place among everything returned (1 = first)")
    members: list[str] = strawberry.field(
        description="Member episode ids, the best-ranked member first, then closest to the question"
    )
    above: str = strawberry.field(description="The member hit it ranks above")
    recommends: RecommendedSnippet | None


@derived(
    FoundConflict,
    name="Conflict",
    description="Two memories that disagree, side by side: both returned, or a returned one "
    "and the episode it contradicts or supersedes (or is superseded by) outside the top k.",
)
class Conflict(View[FoundConflict]):
    a: Episode  # the episodes the ids name, given by the caller
    b: Episode


@strawberry.type
class RecallResult:
    hits: list[RecallHit]
    conflicts: list[Conflict]
    abstained: bool
    reason: str | None = strawberry.field(description="Why nothing was returned, when abstained")
    warnings: list[RecallWarning] = strawberry.field(
        description="Channels that failed and were dropped; the hits come from the others"
    )
    patterns: list[PatternHit] = strawberry.field(
        default_factory=list, description="Lessons beside the hits (filter.memoryTypes)"
    )
    abstention: Abstention | None = strawberry.field(default=None, description=ABSTENTION)


def episode_view(row: dict[str, Any]) -> Episode:
    return Episode(
        id=row["id"],
        project=row["project"],
        task_id=row.get("task_id"),
        step=row.get("step"),
        kind=row.get("kind"),
        title=row.get("title"),
        summary=row.get("summary") or "",
        reasoning=row.get("reasoning"),
        action_type=row.get("action_type"),
        action_command=row.get("action_command"),
        action_parameters=row.get("action_parameters"),
        observation=row.get("observation"),
        error=row.get("error_text"),
        facts=row.get("facts"),
        outcome=row.get("outcome") or "unknown",
        tags=list(row.get("tags") or []),
        source=row.get("source"),
        confidence=row.get("confidence"),
        review_status=row.get("review_status"),
        resolution=row.get("resolution"),
        resolved_by=row.get("resolved_by"),
        uses=row.get("uses"),
        successes=row.get("successes"),
        failures=row.get("failures"),
        created_at=native_value(row.get("created_at")),
        duplicate_of=row.get("duplicate_of"),
    )


def _pattern_hit(hit: FoundPattern) -> PatternHit:
    p = hit.pattern
    snippet = hit.snippet
    return PatternHit(
        pattern=Pattern(
            id=p["id"],
            project=p["project"],
            title=p.get("title"),
            summary=p.get("summary") or "",
            support=int(p.get("support") or 0),
            episodes=int(p.get("episodes") or 0),
            success_rate=p.get("success_rate"),
            outcome=p.get("outcome"),
            kind=p.get("kind"),
            environments=list(p.get("environments") or []),
            tools=list(p.get("tools") or []),
            error_keys=list(p.get("error_keys") or []),
        ),
        score=hit.score,
        rank=hit.rank,
        members=hit.members,
        above=hit.best_member,
        recommends=None
        if snippet is None
        else RecommendedSnippet(
            id=snippet["id"],
            name=snippet.get("name"),
            language=snippet.get("language"),
            kind=snippet.get("kind"),
            template=snippet.get("template"),
            success_rate=snippet.get("success_rate"),
            risk=snippet.get("risk"),
            members=snippet.get("members"),
        ),
    )


def _step(row: dict[str, Any] | None) -> StepRef | None:
    if not row:
        return None
    return StepRef(
        id=row["id"], step=row.get("step"), summary=row.get("summary"), outcome=row.get("outcome")
    )


def _task(row: dict[str, Any] | None) -> TaskInfo | None:
    if not row:
        return None
    return TaskInfo(
        id=row["id"],
        goal=row.get("goal"),
        status=row.get("status"),
        outcome=row.get("outcome"),
        steps=row.get("steps"),
        started_at=native_value(row.get("started_at")),
        ended_at=native_value(row.get("ended_at")),
        constraints=list(row.get("constraints") or []),
        tests_failed=list(row.get("tests_failed") or []),
    )


def _trust_adjustment(hit: Hit) -> float:
    """What trust added: to the relevance (hand), or the trust terms of the learned score."""
    learned = (v for k, v in hit.features.items() if k.startswith("trust."))
    return sum(learned) if hit.features else hit.score - hit.relevance


def _why(hit: Hit) -> Why:
    channels = [
        ChannelScore(
            channel=name,
            score=score,
            rank=hit.ranks.get(name, 0),
            contribution=hit.contributions.get(name, 0.0),
        )
        for name, score in sorted(hit.channels.items())
    ]
    trust = [TrustFactor(factor=k, value=v) for k, v in sorted(hit.trust.items())]
    return Why(
        relevance=hit.relevance,
        trust_adjustment=_trust_adjustment(hit),
        channels=channels,
        trust=trust,
        evidence=TrustEvidence(**hit.evidence),
        dropped=hit.dropped,
        tools=[tool_stats_view(t) for t in hit.tools],
        features=feature_terms(hit.features),
    )


def _hit(hit: Hit) -> RecallHit:
    return RecallHit(
        found=hit,
        episode=episode_view(hit.episode),
        score=hit.score,
        snippets=[bridge_snippet(s) for s in hit.snippets],
        errors=[
            HitError(
                relation=e["relation"],
                key=e["key"],
                kind=e["kind"],
                category=e.get("category"),
                template=e.get("template"),
                frames=list(e.get("frames") or []),
            )
            for e in hit.errors
        ],
        environment=environment_view(hit.environment),
        task=_task(hit.task),
        flagged=hit.flagged,
        rank=hit.rank,
        duplicates=hit.duplicates,
    )


def _conflict(conflict: FoundConflict, hits: dict[str, Hit]) -> Conflict:
    return Conflict.of(
        conflict,
        a=episode_view(hits[conflict.a].episode),
        b=episode_view(hits[conflict.b].episode),
    )


def recall_result(outcome: RecallOutcome) -> RecallResult:
    """What recall found, as the GraphQL result."""
    # A conflict's other side may be a partner fetched from outside the hits.
    by_id = {h.episode["id"]: h for h in (*outcome.partners, *outcome.hits)}
    return RecallResult(
        hits=[_hit(h) for h in outcome.hits],
        conflicts=[_conflict(c, by_id) for c in outcome.conflicts],
        abstained=outcome.abstained,
        reason=outcome.reason,
        warnings=[RecallWarning(channel=w.channel, reason=w.reason) for w in outcome.warnings],
        patterns=[_pattern_hit(p) for p in outcome.patterns],
        abstention=abstention_view(outcome.gate),
    )
