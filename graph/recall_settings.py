"""How recall weighs its channels and trust: data, with named presets (measured, not guessed).

The figures behind the defaults come from `metisgraph eval retrieval` on the development
sets; docs/recall.md records the comparison of fusion methods and presets.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Literal

from metisgraph.graph.confidence import CONFIDENCE, ConfidenceSettings
from metisgraph.graph.decay import DecaySettings

__all__ = ["PRESETS", "ChannelWeights", "RecallSettings", "TrustSettings", "preset"]

DENSE_CHANNELS = ("vector", "title", "context", "fulltext", "context_text")
GRAPH_CHANNELS = ("errors", "symbols", "tags", "tools", "environment", "patterns")


@dataclass(frozen=True)
class ChannelWeights:
    """Weight of each candidate channel in the fused score (0 turns a channel off)."""

    vector: float = 1.0  # the episode's own text, by meaning
    title: float = 0.5  # its title alone against the question's first line
    context: float = 1.0  # the episode with its neighbouring steps, by meaning
    fulltext: float = 1.0  # Lucene over the episode's text and code identifiers
    context_text: float = 2.0  # Lucene over the episode with its neighbours
    errors: float = 1.0  # same or similar error signatures
    symbols: float = 5.0  # same classes, modules, files (weighted by where they occur)
    tags: float = 0.3  # tags asked for, or named in the question
    tools: float = 0.3  # tools asked for
    environment: float = 0.2  # the caller's OS, runtime, package versions
    patterns: float = 0.5  # members of patterns close to the question (docs/consolidation.md)

    def of(self, channel: str) -> float:
        return float(getattr(self, channel))


@dataclass(frozen=True)
class TrustSettings:
    """Trust factors multiply into a score as beta * ln(factor): a nudge, not a filter."""

    beta: float = 1.0
    review: dict[str, float] = field(
        default_factory=lambda: {"approved": 1.1, "unreviewed": 1.0, "pending": 0.85}
    )
    confidence: ConfidenceSettings = CONFIDENCE  # priors by source, repeats, caution
    decay: DecaySettings = field(default_factory=DecaySettings)  # idle time, the cold tier


@dataclass(frozen=True)
class RecallSettings:
    fusion: Literal["zscore", "rrf"] = "zscore"
    weights: ChannelWeights = field(default_factory=ChannelWeights)
    trust: TrustSettings = field(default_factory=TrustSettings)
    candidates: int = 50  # per channel
    rrf_k: int = 60
    error_similarity: float = 0.8  # cosine: an error template this close is the same error
    abstain_below: float = 0.2  # best cosine under this, and no error/code match: abstain
    conflict_similarity: float = 0.75  # situations this close with opposite outcomes conflict
    # A pattern is returned, and ranks just above its best member, only with this many
    # independent sources (distinct tasks): a lesson seen once or twice is an anecdote.
    pattern_min_support: int = 3
    pattern_members: int = 20  # members shown per pattern, closest to the question first


PRESETS: dict[str, RecallSettings] = {
    "balanced": RecallSettings(),
    "semantic": RecallSettings(
        weights=ChannelWeights(fulltext=0.5, context_text=0.25, title=0.5, context=0.5)
    ),
    "lexical": RecallSettings(
        weights=ChannelWeights(vector=0.5, title=0.25, context=0.25, fulltext=1.5, context_text=1.0)
    ),
    "errors": RecallSettings(weights=ChannelWeights(errors=2.0, symbols=2.0)),
    "rrf": RecallSettings(fusion="rrf"),
}


def preset(name: str, **overrides: object) -> RecallSettings:
    """A named preset, optionally with fields replaced."""
    try:
        base = PRESETS[name]
    except KeyError:
        raise ValueError(f"unknown recall preset {name!r}; known: {', '.join(PRESETS)}") from None
    return replace(base, **overrides) if overrides else base  # type: ignore[arg-type]
