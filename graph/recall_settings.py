"""How recall weighs its channels and trust: data, with named presets (measured, not guessed).

The figures behind the defaults come from `metisgraph eval retrieval` on the development
sets; docs/recall.md records the comparison of fusion methods and presets.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import Literal

from metisgraph.graph.confidence import CONFIDENCE, ConfidenceSettings
from metisgraph.graph.decay import DecaySettings

__all__ = ["PRESETS", "ChannelWeights", "RecallSettings", "TrustSettings", "preset"]


class ChannelWeights:
    """A preset's channel weights where they differ from each channel's own
    (graph/channel_registry.py declares every channel and its weight); 0 turns a channel
    off."""

    __slots__ = ("_given",)

    def __init__(self, **given: float) -> None:
        self._given: Mapping[str, float] = MappingProxyType(dict(given))

    def given(self, channel: str) -> float | None:
        """The weight this preset gives the channel, None where it keeps the channel's."""
        return self._given.get(channel)

    def names(self) -> tuple[str, ...]:
        return tuple(self._given)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ChannelWeights) and dict(self._given) == dict(other._given)

    def __hash__(self) -> int:
        return hash(tuple(sorted(self._given.items())))

    def __repr__(self) -> str:
        given = ", ".join(f"{k}={v}" for k, v in self._given.items())
        return f"ChannelWeights({given})"


@dataclass(frozen=True)
class TrustSettings:
    """Trust factors multiply into a score as beta * ln(factor): a nudge, not a filter."""

    beta: float = 1.0
    review: dict[str, float] = field(
        default_factory=lambda: {"approved": 1.1, "unreviewed": 1.0, "pending": 0.85}
    )
    confidence: ConfidenceSettings = CONFIDENCE  # priors by source, repeats, caution
    decay: DecaySettings = field(default_factory=DecaySettings)  # idle time, the cold tier
    # Whether the memory's conditions hold in the caller's stated environment
    # (graph/applicability.py): one that does not hold ranks below one that does. ln 0.25 =
    # -1.39 in score units: about what separates two wordings of the same problem (0.1 to
    # 2.3 on the applicability fixture, docs/recall.md), well under what separates the same
    # problem from another one (2.5 and more there), so a failure from another architecture
    # or release gives way to the same failure under the caller's conditions, not to an
    # unrelated memory.
    applies: dict[str, float] = field(
        default_factory=lambda: {"yes": 1.0, "unknown": 1.0, "no": 0.25}
    )


@dataclass(frozen=True)
class RecallSettings:
    fusion: Literal["zscore", "rrf"] = "zscore"
    # What orders the shortlist (the fused best k x 3): "hand" = the fused score plus the
    # trust adjustment; "learned" = the shipped linear ranker over each candidate's
    # features (graph/rank_features.py, graph/ranker.py).
    ranker: Literal["hand", "learned"] = "hand"
    features: bool = False  # keep the shortlist's features on the outcome (eval reads them)
    weights: ChannelWeights = field(default_factory=ChannelWeights)
    trust: TrustSettings = field(default_factory=TrustSettings)
    candidates: int = 50  # per channel
    # Episodes a graph channel reads through each node the question matched (an error, a
    # symbol, a tag, a tool, an environment): an error seen 17,000 times or a tag on a tenth
    # of the store would otherwise be read whole on every question, at a cost that grows
    # with the store (docs/recall.md, "Graph channels at scale").
    fanout: int = 1000
    rrf_k: int = 60
    error_similarity: float = 0.8  # cosine: an error template this close is the same error
    # Best cosine under this, and no error or code match: abstain. None: the project's own
    # threshold, measured on its store (graph/abstention.py); a request may set its own.
    abstain_below: float | None = None
    conflict_similarity: float = 0.75  # situations this close with opposite outcomes conflict
    # A pattern is returned, and ranks just above its best member, only with this many
    # independent sources (distinct tasks): a lesson seen once or twice is an anecdote.
    pattern_min_support: int = 3
    pattern_members: int = 20  # members shown per pattern, closest to the question first


PRESETS: dict[str, RecallSettings] = {
    "balanced": RecallSettings(),
    "hand": RecallSettings(),  # the hand-set fusion, whatever the default becomes
    "learned": RecallSettings(ranker="learned"),
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
