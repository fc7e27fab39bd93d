"""The parts of a recall hit's `why`: each channel's score, each trust factor, and — under the
learned ranker — each feature's term in the score."""

from __future__ import annotations

import strawberry

__all__ = ["ChannelScore", "FeatureTerm", "TrustFactor", "feature_terms"]


@strawberry.type
class ChannelScore:
    channel: str
    score: float = strawberry.field(description="The channel's own score (cosine, Lucene, …)")
    rank: int
    contribution: float = strawberry.field(description="What it added to the relevance")


@strawberry.type
class TrustFactor:
    factor: str
    value: float = strawberry.field(description="1 is neutral; below lowers, above raises")


@strawberry.type(description="One feature's term in a learned ranker's score (docs/recall.md)")
class FeatureTerm:
    feature: str
    contribution: float = strawberry.field(
        description="weight x (value - mean) / scale: what it added to the score"
    )


def feature_terms(terms: dict[str, float]) -> list[FeatureTerm]:
    """The terms, largest effect first."""
    ordered = sorted(terms.items(), key=lambda kv: (-abs(kv[1]), kv[0]))
    return [FeatureTerm(feature=name, contribution=value) for name, value in ordered]
