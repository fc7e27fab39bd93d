"""A recall question as a caller asks it, and the checks it must pass before it is prepared."""

from __future__ import annotations

from dataclasses import dataclass, field

from metisgraph.graph import (
    ALL_OUTCOMES,
    PRESETS,
    RECALLABLE_REVIEW,
    TIERS,
    RecallFilters,
    RecallSettings,
)
from metisgraph.ingest.adapters.hazards import hazards
from metisgraph.ingest.records import MAX_TAGS, EnvironmentInput

__all__ = [
    "MAX_CONTEXT_NAME_CHARS",
    "MAX_CONTEXT_TAGS",
    "MAX_CONTEXT_TOOLS",
    "MAX_K",
    "MAX_PROJECTS",
    "MAX_QUESTION_CHARS",
    "Question",
    "QuestionError",
    "check",
    "check_names",
]

MAX_K = 100
MAX_PROJECTS = 20
# A question with a pasted trace or log is long; megabytes are a mistake (or an attack):
# sanitizing them alone would hold the server for seconds.
MAX_QUESTION_CHARS = 200_000
# Tags and tools are matched one by one against stored ones (each redacted first): a record
# carries at most MAX_TAGS tags, a tag or a tool name a few hundred characters.
MAX_CONTEXT_TAGS = MAX_TAGS
MAX_CONTEXT_TOOLS = 256
MAX_CONTEXT_NAME_CHARS = 512


class QuestionError(ValueError):
    """A question that cannot be asked as it is; the message names the field."""


@dataclass(frozen=True)
class Question:
    """What a caller asks: the question, where to look, what they know, what to keep out."""

    project: str
    query: str
    k: int = 5
    projects: tuple[str, ...] = ()  # more readable projects (cross-project recall)
    error: str | None = None
    environment: EnvironmentInput | None = None
    tags: tuple[str, ...] = ()
    tools: tuple[str, ...] = ()
    filters: RecallFilters = field(default_factory=RecallFilters)
    preset: str = "balanced"
    exclude: frozenset[str] = frozenset()
    # Settings that are no preset (an evaluation trying weights); they beat ``preset``.
    settings: RecallSettings | None = None
    conflicts: bool = True  # look for conflicts among the hits (False: the caller skips them)
    steps: bool = True  # read each hit's previous and next step (False: the caller skips them)
    # Abstain under this best similarity (cosine); None: each project's measured threshold.
    abstain_below: float | None = None

    @property
    def all_projects(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys((self.project, *self.projects)))


def check(q: Question) -> None:
    """Raise QuestionError, naming the field, when the question cannot be asked."""
    if not 1 <= q.k <= MAX_K:
        raise QuestionError(f"k must be between 1 and {MAX_K}, got {q.k}")
    if not q.query.strip():
        raise QuestionError("query must not be blank")
    for name, text in (("query", q.query), ("context.error", q.error or "")):
        if len(text) > MAX_QUESTION_CHARS:
            raise QuestionError(f"{name}: at most {MAX_QUESTION_CHARS} characters, got {len(text)}")
    if len(q.all_projects) > MAX_PROJECTS:
        raise QuestionError(f"at most {MAX_PROJECTS} projects per recall")
    check_names("context.tags", q.tags, MAX_CONTEXT_TAGS)
    check_names("context.tools", q.tools, MAX_CONTEXT_TOOLS)
    # Not text (a lone surrogate): the tokenizer, the redaction and the cache key fail on it.
    context = {"error": q.error or "", "tags": list(q.tags), "tools": list(q.tools)}
    for where, message in hazards({"query": q.query, "context": context}):
        raise QuestionError(f"{'.'.join(str(p) for p in where)}: {message}")
    if q.abstain_below is not None and not 0.0 <= q.abstain_below <= 1.0:
        raise QuestionError(f"abstainBelow must be between 0 and 1, got {q.abstain_below}")
    if q.preset not in PRESETS:
        raise QuestionError(f"unknown preset {q.preset!r}; known: {', '.join(PRESETS)}")
    _check_filters(q.filters)


def check_names(field: str, names: tuple[str, ...], most: int) -> None:
    """QuestionError naming the field (and the item) when there are too many names or one is
    too long."""
    if len(names) > most:
        raise QuestionError(f"{field}: at most {most} a question, got {len(names)}")
    for n, name in enumerate(names):
        if len(name) > MAX_CONTEXT_NAME_CHARS:
            raise QuestionError(
                f"{field}[{n}]: at most {MAX_CONTEXT_NAME_CHARS} characters, got {len(name)}"
            )


def _check_filters(f: RecallFilters) -> None:
    if f.since and f.until and f.since > f.until:
        raise QuestionError("filter.since is after filter.until")
    bad = set(f.outcomes or ()) - set(ALL_OUTCOMES)
    if bad:
        known = ", ".join(ALL_OUTCOMES)
        raise QuestionError(f"unknown outcome(s) {sorted(bad)}; known: {known}")
    if f.min_confidence is not None and not 0.0 <= f.min_confidence <= 1.0:
        raise QuestionError(f"filter.minConfidence must be between 0 and 1, got {f.min_confidence}")
    if not f.tiers or set(f.tiers) - set(TIERS):
        raise QuestionError(f"filter.tiers: one or more of {', '.join(TIERS)}, got {list(f.tiers)}")
    unknown = set(f.review or ()) - set(RECALLABLE_REVIEW)
    if unknown:
        known = ", ".join(RECALLABLE_REVIEW)
        raise QuestionError(
            f"unknown or unrecallable review status(es) {sorted(unknown)}; known: {known}"
            " (rejected memories never return)"
        )
