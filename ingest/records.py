"""The input format for memory: tasks, episodes and snippets.

One set of models validates every record, whether it arrives through GraphQL,
the CLI or a file; ``ingest/schemas/memory-record.v1.json`` is generated from
them (``metisgraph schema export``) and a test keeps the two identical.
"""

from __future__ import annotations

import re
from datetime import datetime
from enum import StrEnum
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    StringConstraints,
    field_validator,
)

from metisgraph.ingest.sanitize.redaction import redact_id

__all__ = [
    "MAX_CODE_CHARS",
    "MAX_ID_CHARS",
    "MAX_NAME_CHARS",
    "MAX_TAGS",
    "MAX_TAG_BYTES",
    "PROJECT_NAME",
    "SCHEMA_VERSION",
    "Action",
    "EnvironmentInput",
    "EpisodeRecord",
    "Outcome",
    "SnippetInput",
    "SnippetKind",
    "SnippetRecord",
    "SnippetRelation",
    "Source",
    "TaskRecord",
    "TaskStatus",
    "VerdictRecord",
    "printable_id",
]

SCHEMA_VERSION = "1"

PROJECT_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:@/-]{0,127}")
ProjectName = Annotated[str, StringConstraints(pattern=rf"^{PROJECT_NAME.pattern}$")]
MAX_ID_CHARS = 512  # its global id (graph/refs.py) stays within what node() decodes


def printable_id(value: str) -> str:
    """An id held as a project name is: it starts with a letter or a digit, and every
    character is printable — no control (NUL), no format character (a bidi override, a
    zero-width space), no line or paragraph separator, no lone surrogate. Ids are written
    into exports, logs and the explorer's page as they are (issue 30)."""
    if not value[:1].isalnum():
        raise ValueError(f"must start with a letter or a digit, got {value[:1]!r}")
    for n, char in enumerate(value):
        if not char.isprintable():
            raise ValueError(
                f"character {n} (U+{ord(char):04X}) is not printable: no control, format "
                "(bidi override, zero-width) or separator characters in an id"
            )
    return value


# Ids are stored and shown: a secret in one is redacted like any other text (redact_id).
RecordId = Annotated[
    str,
    StringConstraints(min_length=1, max_length=MAX_ID_CHARS),
    AfterValidator(printable_id),
    AfterValidator(redact_id),
]
Tag = Annotated[
    str,
    StringConstraints(
        pattern=r"^[^:\s][^:]{0,63}:.{1,256}$", strip_whitespace=True, max_length=321
    ),
]

# Episode tags are one range-indexed list: Neo4j refuses to index a list over ~8 KB, so a
# record with more would fail its whole batch. Real records carry a handful.
MAX_TAGS = 64
MAX_NAME_CHARS = 256
MAX_TAG_BYTES = 4_000


def _tags_fit(tags: list[str]) -> list[str]:
    size = sum(len(tag.encode("utf-8", "surrogatepass")) for tag in tags)
    if size > MAX_TAG_BYTES:
        raise ValueError(f"at most {MAX_TAG_BYTES:,} bytes of tags in all, got {size:,}")
    return tags


Tags = Annotated[list[Tag], Field(max_length=MAX_TAGS), AfterValidator(_tags_fit)]
# Names that become keys of their own nodes (range-indexed): far below the index limit.
Name = Annotated[str, StringConstraints(max_length=MAX_NAME_CHARS)]


class Outcome(StrEnum):
    success = "success"
    failure = "failure"
    partial = "partial"
    unknown = "unknown"


class Source(StrEnum):
    """Who vouches for an episode: it ran, a user said it, we inferred it, a reviewer wrote it."""

    executed = "executed"
    user = "user"
    inferred = "inferred"
    reviewer = "reviewer"


class TaskStatus(StrEnum):
    open = "open"
    resolved = "resolved"
    abandoned = "abandoned"


class SnippetKind(StrEnum):
    function = "function"
    class_ = "class"
    shell = "shell"
    api_template = "api_template"
    config = "config"
    sql = "sql"
    patch = "patch"


class SnippetRelation(StrEnum):
    generated = "GENERATED"
    used = "USED"
    modified = "MODIFIED"


class _Record(BaseModel):
    model_config = ConfigDict(extra="forbid", str_strip_whitespace=False)


class Action(_Record):
    """What was done: a command, an API call, an edit, a message."""

    type: str = Field(default="command", max_length=64)
    command: str | None = None
    parameters: dict[str, Any] = Field(default_factory=dict)


class EnvironmentInput(_Record):
    """An environment stated explicitly by the caller (extraction adds to it)."""

    os: str | None = None
    os_version: str | None = None
    arch: str | None = None
    runtime: str | None = None
    runtime_version: str | None = None
    packages: dict[Name, Name] = Field(default_factory=dict)


# Code is analysed whole (parsed, checked, templated), so longer code is refused, not cut.
MAX_CODE_CHARS = 200_000


class SnippetInput(_Record):
    """Code recorded inline with an episode, or on its own (see SnippetRecord)."""

    code: str = Field(min_length=1, max_length=MAX_CODE_CHARS)
    language: str | None = Field(default=None, max_length=64)
    kind: SnippetKind | None = None
    name: str | None = None
    description: str | None = None
    relation: SnippetRelation = SnippetRelation.generated
    tests: list[str] = Field(default_factory=list)
    examples: list[str] = Field(default_factory=list)

    @field_validator("code")
    @classmethod
    def _code_not_blank(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("code must not be blank")
        return value


class TaskRecord(_Record):
    """One issue or job being worked on; episodes hang off it in order."""

    record_type: Literal["task"] = "task"
    project: ProjectName
    id: RecordId | None = None
    goal: str = Field(min_length=1)
    constraints: list[str] = Field(default_factory=list)
    status: TaskStatus = TaskStatus.open
    outcome: Outcome = Outcome.unknown
    started_at: datetime | None = None
    ended_at: datetime | None = None
    tags: Tags = Field(default_factory=list)
    agent: str | None = Field(default=None, description="Agent or person that worked the task")
    run: str | None = Field(
        default=None,
        max_length=256,
        description="The agent run (one evaluation batch) the task was worked in: harness "
        "verdicts are matched to tasks by run and instance",
    )
    instance: str | None = Field(
        default=None, max_length=256, description="The benchmark instance the task is"
    )
    claimed_outcome: Outcome | None = Field(
        default=None,
        description="What the agent itself claimed; a harness verdict, when one arrives, "
        "sets `outcome` and this is kept beside it",
    )

    @field_validator("goal")
    @classmethod
    def _goal_not_blank(cls, value: str) -> str:
        # Found by the 10,000-record fuzz: a goal of blanks was written, like an episode's
        # blank summary, which was already refused.
        if not value.strip():
            raise ValueError("goal must not be blank")
        return value


class EpisodeRecord(_Record):
    """One unit of experience: situation, decision, action, observation, outcome."""

    record_type: Literal["episode"] = "episode"
    project: ProjectName
    id: RecordId | None = Field(
        default=None, description="The caller's id; generated from the content when absent"
    )
    task_id: RecordId | None = None
    step: int | None = Field(default=None, ge=0, le=2**31 - 1, description="Order within the task")
    kind: str | None = Field(default=None, max_length=64)
    title: str | None = None
    summary: str = Field(min_length=1, description="The abstracted core content")
    facts: dict[str, Any] = Field(default_factory=dict)
    reasoning: str | None = None
    action: Action | None = None
    observation: str | None = Field(
        default=None,
        description="What came back. Over 100,000 characters, its head and tail are stored",
    )
    error: str | None = Field(
        default=None,
        description="Error text or stack trace, if any (over 100,000 characters: head and tail)",
    )
    outcome: Outcome = Outcome.unknown
    tags: Tags = Field(default_factory=list)
    source: Source = Source.inferred
    confidence: float | None = Field(default=None, ge=0.0, le=1.0)
    created_at: datetime | None = None
    environment: EnvironmentInput | None = None
    tools: list[Name] = Field(default_factory=list)
    snippets: list[SnippetInput] = Field(default_factory=list)
    cites: list[RecordId] = Field(
        default_factory=list,
        max_length=50,
        description="Ids of the memories (episodes, snippets) the step relied on, e.g. the "
        "planContext memories it cited: once the step or its task ends in success, each "
        "counts as used (its decay clock restarts)",
    )

    @field_validator("summary")
    @classmethod
    def _summary_not_blank(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("summary must not be blank")
        return value


class VerdictRecord(_Record):
    """An evaluation harness's verdict on one instance of one run (SWE-bench reports)."""

    record_type: Literal["verdict"] = "verdict"
    project: ProjectName
    run: str = Field(min_length=1, max_length=256)
    instance: str = Field(min_length=1, max_length=256)
    resolved: bool
    tests: dict[str, dict[str, list[str]]] = Field(
        default_factory=dict,
        description="Tests by group (FAIL_TO_PASS ...) and result (success, failure)",
    )
    harness: str | None = Field(default=None, max_length=64, description="The report's shape")
    source: str | None = Field(
        default=None,
        max_length=1024,
        description="The report file it was read from, from the run's folder on",
    )


class SnippetRecord(SnippetInput):
    """A snippet recorded on its own (GraphQL ``recordSnippet``, or a file line)."""

    record_type: Literal["snippet"] = "snippet"
    project: ProjectName
    id: RecordId | None = None
    episode_id: RecordId | None = Field(
        default=None, description="The episode that generated, used or modified it"
    )
    environment: EnvironmentInput | None = None
