"""Typed results: the fields of the GraphQL answers the client asks for."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field
from pydantic.alias_generators import to_camel

__all__ = [
    "Applies",
    "HitFix",
    "OutcomeStats",
    "PlanContext",
    "PlanMemory",
    "RecallHit",
    "RecallResult",
    "RecordResult",
    "SnippetHit",
]


class _Answer(BaseModel):
    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="ignore")


class PlanMemory(_Answer):
    label: str
    id: str
    kind: str
    text: str
    why: str
    score: float
    tokens: int
    related: list[str] = Field(default_factory=list)

    @property
    def takes_feedback(self) -> bool:
        """Whether recordOutcome applies to it (an episode — a fix or a workaround is the
        episode that dealt with an error — or a snippet; not a conflict, pattern or warning)."""
        return self.kind in ("success", "failure", "experience", "fix", "workaround", "snippet")


class PlanContext(_Answer):
    memories: list[PlanMemory]
    prompt: str
    tokens: int
    budget: int
    tokenizer: str
    left_out: int
    considered: int
    abstained: bool
    reason: str | None = None

    def memory(self, label: str) -> PlanMemory | None:
        return next((m for m in self.memories if m.label == label), None)


class RecallEpisode(_Answer):
    id: str
    summary: str
    outcome: str
    task_id: str | None = None
    uses: int | None = None
    successes: int | None = None
    failures: int | None = None


class HitFix(_Answer):
    """What fixed (or worked around) an error this hit met, from lineage's evidence."""

    kind: str  # fixed | workaround | resolved
    action: str  # the fixing step's command, or its summary
    runs: int  # runs in which this action did it
    confidence: float | None = None
    episode: str  # the fixing step
    why: str | None = None  # the evidence the link was claimed on
    error: str | None = None  # the error it fixed


class Applies(_Answer):
    """Whether the memory's conditions hold in the caller's stated environment."""

    status: str  # yes | no | unknown
    reasons: list[str] = Field(default_factory=list)


class RecallHit(_Answer):
    episode: RecallEpisode
    score: float
    fixed_by: list[HitFix] = Field(default_factory=list)
    applies: Applies | None = None


class RecallResult(_Answer):
    hits: list[RecallHit]
    abstained: bool
    reason: str | None = None


class FieldProblem(_Answer):
    field: str
    message: str


class RecordResult(_Answer):
    id: str | None
    status: str
    errors: list[FieldProblem] = Field(default_factory=list)


class OutcomeStats(_Answer):
    memory_id: str
    kind: str
    uses: int
    successes: int
    failures: int
    success_rate: float | None = None
    duplicate: bool = False  # this key had been counted already: the report counted once


class SnippetRef(_Answer):
    id: str
    name: str | None = None
    language: str
    template: str
    success_rate: float | None = None


class SnippetHit(_Answer):
    snippet: SnippetRef
    score: float
