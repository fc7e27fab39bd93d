"""What recall is asked, ready for the graph: the request, its vectors and its filters.

ingest prepares a question into a ``RecallRequest`` (``metisgraph.ingest.question``); the
graph answers it (``graph.recall.recall``). These are recall's public input types.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Protocol

from metisgraph.graph.applicability import CallerConditions
from metisgraph.graph.decay import TIERS
from metisgraph.graph.recall_settings import RecallSettings

__all__ = [
    "ALL_OUTCOMES",
    "DEFAULT_MEMORY_TYPES",
    "MEMORY_TYPES",
    "RECALLABLE_REVIEW",
    "EnvironmentQuery",
    "Judgement",
    "QuestionVectors",
    "RecallFilters",
    "RecallRequest",
    "SnippetJudge",
]

ALL_OUTCOMES = ("success", "failure", "partial", "unknown")
MEMORY_TYPES = ("episode", "pattern")
# Patterns come back when asked for: with them on by default, R@5 on trace2fix-defects4j
# fell from 0.900 to 0.871 (a pattern's members crowd out other hits; docs/consolidation.md).
DEFAULT_MEMORY_TYPES = ("episode",)
# Rejected memory is not among them: it never comes back (every channel asks for
# `recallable` episodes, and a rejection makes an episode or a snippet unrecallable).
RECALLABLE_REVIEW = ("unreviewed", "pending", "approved")
# What a caller who may not review the project sees: pending memories (risky, waiting for a
# reviewer) left out (api/graphql/context.py `recallable`; graph/warm_reads.py asks with it).
NOT_REVIEWING = tuple(s for s in RECALLABLE_REVIEW if s != "pending")


@dataclass(frozen=True)
class RecallFilters:
    """Which memories may come back; a filter left at None narrows nothing."""

    outcomes: tuple[str, ...] | None = None
    review: tuple[str, ...] | None = None
    since: datetime | None = None
    until: datetime | None = None
    min_confidence: float | None = None
    kinds: tuple[str, ...] | None = None
    # Which kinds of memory come back (episodes, patterns); not a Cypher filter: patterns
    # off means no pattern channel and no pattern in the result.
    memory_types: tuple[str, ...] = DEFAULT_MEMORY_TYPES
    # The decay tiers asked for (graph/decay.py): the cold tier only on request. Recall
    # fills `tier_since`, the earliest warm `active_at`, from the projects' clocks.
    tiers: tuple[str, ...] = ("warm",)
    tier_since: datetime | None = None

    def wants(self, memory_type: str) -> bool:
        return memory_type in self.memory_types

    def narrowing(self) -> dict[str, Any]:
        """The filters that narrow anything, by the name of their piece in recall.cypher
        (``filter_<name>``), with their values.

        Every episode has an outcome, a review status, a creation time and a confidence, so
        a filter that lets everything through would only make the index check each
        candidate against what it already satisfies: it is left out.
        """
        found: dict[str, Any] = {}
        if self.outcomes is not None and set(self.outcomes) != set(ALL_OUTCOMES):
            found["outcomes"] = list(self.outcomes)
        if self.review is not None and set(self.review) != set(RECALLABLE_REVIEW):
            found["review"] = list(self.review)
        if self.since is not None:
            found["since"] = self.since
        if self.until is not None:
            found["until"] = self.until
        if self.min_confidence:
            found["min_confidence"] = self.min_confidence
        if self.kinds is not None:
            found["kinds"] = list(self.kinds)
        if self.tier_since is not None and set(self.tiers) != set(TIERS):
            found["warm" if "warm" in self.tiers else "cold"] = self.tier_since
        return found


@dataclass(frozen=True)
class EnvironmentQuery:
    """The caller's environment as the environment channel asks for it, and as a memory's
    conditions are checked against (graph/applicability.py)."""

    os: str | None = None
    runtime: str | None = None
    runtime_version: str | None = None
    packages: tuple[tuple[str, str], ...] = ()
    arch: str | None = None
    os_version: str | None = None

    def params(self) -> dict[str, Any]:
        return {
            "os": self.os.lower() if self.os else None,
            "arch": self.arch.lower() if self.arch else None,
            "runtime": self.runtime.lower() if self.runtime else None,
            "runtime_version": self.runtime_version,
            "packages": [list(p) for p in self.packages],
        }

    def conditions(
        self, error_keys: tuple[str, ...] = (), error_kinds: tuple[str, ...] = ()
    ) -> CallerConditions:
        """What a memory's conditions are checked against: this environment, these errors."""
        return CallerConditions(
            os=self.os, os_version=self.os_version, arch=self.arch, runtime=self.runtime,
            runtime_version=self.runtime_version, packages=self.packages,
            error_keys=error_keys, error_kinds=error_kinds,
        )  # fmt: skip


@dataclass(frozen=True)
class QuestionVectors:
    """The question's embeddings: the whole of it, its first line, its first error."""

    text: list[float]
    title: list[float] | None = None  # when the question has more than one line
    error: list[float] | None = None  # "<kind>: <template>" of its first error, when any


class Judgement(Protocol):
    """Whether a snippet across the bridge can run in the caller's environment, and why."""

    @property
    def status(self) -> str: ...  # compatible | unknown | incompatible

    @property
    def reasons(self) -> Sequence[str]: ...


SnippetJudge = Callable[[Mapping[str, Any]], Judgement]


@dataclass(frozen=True)
class RecallRequest:
    """A question, ready for the graph: sanitized text and extracted links (no vectors: the
    channels that need none are asked while they are computed)."""

    projects: tuple[str, ...]
    text: str
    k: int = 5
    error_keys: tuple[str, ...] = ()
    error_kinds: tuple[str, ...] = ()  # the kinds of the question's errors (applicability)
    symbols: tuple[str, ...] = ()
    symbol_weights: tuple[float, ...] = ()  # parallel to symbols; 1.0 each when empty
    tags: tuple[str, ...] = ()
    words: tuple[str, ...] = ()
    tools: tuple[str, ...] = ()
    environment: EnvironmentQuery | None = None
    filters: RecallFilters = field(default_factory=RecallFilters)
    exclude: frozenset[str] = frozenset()
    settings: RecallSettings = field(default_factory=RecallSettings)
    lexical: str | None = None  # the text for the full-text channels, when not `text`
    judge: SnippetJudge | None = None  # the caller's verdict on each snippet across the bridge
    # Look for conflicts among the hits; False (the caller does not show them) also leaves
    # out the episodes' vectors they are found with, the expansion's largest values.
    conflicts: bool = True
    # Read each hit's neighbouring steps (previous, next); False when the caller does not
    # show them (planContext, a document that selects neither): two lookups a hit fewer.
    steps: bool = True
    # Each project's abstention thresholds (for any question, for one naming code the project
    # does not know) and their source (calibrated | default), measured on its store
    # (graph/abstention.py); settings.abstain_below, when set, beats them.
    gates: Mapping[str, tuple[float, float, str]] = field(default_factory=dict)
    # Each project's own learned ranker, installed by `eval train-ranker`
    # (graph/project_ranker.py): `ranker: learned` reads it in place of the shipped one.
    # A graph.ranker.LinearRanker each (not named here: the ranker's module reads the
    # features, which read this request).
    rankers: Mapping[str, Any] = field(default_factory=dict)

    def caller(self) -> CallerConditions | None:
        """What a memory's conditions are checked against: the environment stated, the
        question's errors; None when no environment is stated."""
        if self.environment is None:
            return None
        return self.environment.conditions(self.error_keys, self.error_kinds)
