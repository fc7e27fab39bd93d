"""One answer of recall: an episode with its task, its scores and what it was ranked on.

Its own module (not graph/recall.py) so the ranking's feature code (graph/rank_features.py,
graph/learned_rank.py), which recall calls, reads it without importing recall back.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from metisgraph.graph.applicability import NOT_STATED, Applicability

__all__ = ["Hit"]


@dataclass
class Hit:
    episode: dict[str, Any]
    task: dict[str, Any] | None
    score: float
    relevance: float
    channels: dict[str, float]
    ranks: dict[str, int]
    contributions: dict[str, float]
    trust: dict[str, float]
    errors: list[dict[str, Any]] = field(default_factory=list)
    environment: dict[str, Any] | None = None
    previous: dict[str, Any] | None = None
    next: dict[str, Any] | None = None
    flagged: list[str] = field(default_factory=list)
    snippets: list[dict[str, Any]] = field(default_factory=list)  # + compatible, reasons
    dropped: list[str] = field(default_factory=list)  # channels that could not be asked
    duplicates: list[str] = field(default_factory=list)  # merged into this one (maintain)
    rank: int = 0  # its place among everything returned, patterns included (1 = first)
    evidence: dict[str, Any] = field(default_factory=dict)  # what the trust factors read
    superseded_by: list[str] = field(default_factory=list)  # newer fixes of the same error
    # What fixed the errors it hit (the lineage's fix links), grouped by action, fixes first:
    # {kind, action, runs, links, confidence, episode, summary, parameters, why, error}.
    fixed_by: list[dict[str, Any]] = field(default_factory=list)
    tools: list[dict[str, Any]] = field(default_factory=list)  # used, with their statistics
    # Whether its conditions (environment, errors) hold in the caller's stated environment
    applies: Applicability = NOT_STATED
    # ranker: learned — each feature's term in its score (graph/ranker.py), for `why`
    features: dict[str, float] = field(default_factory=dict)
