"""What a lineage answers, as plain data: the rows of cypher/lineage.cypher, typed."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from metisgraph.graph.lineage.environments import EnvironmentDiff
from metisgraph.graph.rows import native_time

__all__ = [
    "Attempt",
    "EnvironmentView",
    "ErrorCounts",
    "ErrorSummary",
    "Fix",
    "Lineage",
    "ProjectCount",
    "Recurrence",
    "RelatedError",
    "Sighting",
    "SnippetView",
    "StepView",
    "TaskView",
]


@dataclass(frozen=True)
class StepView:
    """An episode as a lineage shows it."""

    project: str
    id: str
    task_id: str | None
    step: int | None
    created_at: datetime | None
    summary: str | None
    outcome: str | None
    kind: str | None
    action_command: str | None
    time_estimated: bool = False  # the run carried no time of its own for this step

    @classmethod
    def of(cls, row: dict[str, Any]) -> StepView:
        return cls(
            project=row["project"],
            id=row["id"],
            task_id=row.get("task_id"),
            step=row.get("step"),
            created_at=native_time(row.get("created_at")),
            summary=row.get("summary"),
            outcome=row.get("outcome"),
            kind=row.get("kind"),
            action_command=row.get("action_command"),
            time_estimated=bool(row.get("time_estimated")),
        )


@dataclass(frozen=True)
class TaskView:
    project: str
    id: str
    goal: str | None
    status: str | None
    agent: str | None

    @classmethod
    def of(cls, project: str, row: dict[str, Any] | None) -> TaskView | None:
        if row is None:
            return None
        return cls(project, row["id"], row.get("goal"), row.get("status"), row.get("agent"))


@dataclass(frozen=True)
class EnvironmentView:
    project: str
    key: str
    os: str | None
    os_version: str | None
    arch: str | None
    runtime: str | None
    runtime_version: str | None

    @classmethod
    def of(cls, project: str, row: dict[str, Any] | None) -> EnvironmentView | None:
        if row is None:
            return None
        return cls(
            project,
            row["key"],
            row.get("os"),
            row.get("os_version"),
            row.get("arch"),
            row.get("runtime"),
            row.get("runtime_version"),
        )


@dataclass(frozen=True)
class ErrorCounts:
    """An error of one project and how often it was sighted: what every view of one shares."""

    project: str
    key: str
    kind: str | None
    category: str | None
    signature: str | None
    template: str | None
    sightings: int
    tasks: int
    first_seen: datetime | None
    last_seen: datetime | None

    @staticmethod
    def counted(row: dict[str, Any], first: Any, last: Any) -> dict[str, Any]:
        """The shared fields from a row of any error query (``first``/``last``: its times)."""
        return {
            "project": row["project"],
            "key": row["key"],
            "kind": row.get("kind"),
            "category": row.get("category"),
            "signature": row.get("signature"),
            "template": row.get("template"),
            "sightings": row["sightings"],
            "tasks": row["tasks"],
            "first_seen": native_time(first),
            "last_seen": native_time(last),
        }


@dataclass(frozen=True)
class ErrorSummary(ErrorCounts):
    """One member of the error in one project, with its sightings in the window."""

    sample: str | None
    first_episode: str | None  # the episode of the first sighting in the window
    last_episode: str | None

    @classmethod
    def of(cls, row: dict[str, Any]) -> ErrorSummary:
        first, last = row.get("first") or {}, row.get("last") or {}
        return cls(
            **cls.counted(row, first.get("created_at"), last.get("created_at")),
            sample=row.get("sample"),
            first_episode=first.get("id"),
            last_episode=last.get("id"),
        )


@dataclass(frozen=True)
class Sighting:
    episode: StepView
    task: TaskView | None
    environment: EnvironmentView | None
    tools: list[str]


@dataclass(frozen=True)
class Attempt:
    """A step that acted on the error (the evidence of a fix) without ending it."""

    episode: StepView
    environment: EnvironmentView | None
    errors: list[str]  # the kinds of errors this step hit
    tools: list[str]
    why: list[str] = field(default_factory=list)  # "rule: what it did", per error


@dataclass(frozen=True)
class SnippetView:
    project: str
    id: str
    name: str | None
    kind: str | None
    language: str | None
    description: str | None


@dataclass(frozen=True)
class Fix:
    """A step that dealt with the error on evidence (RESOLVED), with its code (FIXES)."""

    episode: StepView
    task: TaskView | None
    environment: EnvironmentView | None
    snippets: list[SnippetView]
    via: list[str]  # RESOLVED (the step, on evidence) and FIXES (its code)
    kind: str = "fixed"  # fixed: removed the cause; workaround: got past it
    why: list[str] = field(default_factory=list)  # "rule: what it did", per error
    confidence: float | None = None


@dataclass(frozen=True)
class Recurrence:
    """A sighting after a fix: a regression, with how its environment differs from the fix's."""

    episode: StepView
    fix: StepView
    environment: EnvironmentView | None
    fix_environment: EnvironmentView | None
    diff: EnvironmentDiff

    @property
    def same_project(self) -> bool:
        return self.episode.project == self.fix.project


@dataclass(frozen=True)
class RelatedError:
    """An error met in the same tasks; preceded/followed/together count tasks by order."""

    project: str
    key: str
    kind: str | None
    signature: str | None
    template: str | None
    tasks: int
    preceded: int
    followed: int
    together: int


@dataclass(frozen=True)
class ProjectCount:
    project: str
    sightings: int
    tasks: int
    fixes: int
    recurrences: int
    first_seen: datetime | None
    last_seen: datetime | None


@dataclass
class Lineage:
    """An error's history in the projects asked about, in time order."""

    errors: list[ErrorSummary]
    sightings: list[Sighting]
    next_after: str | None  # the cursor of the next page of sightings; None: the last page
    attempts: list[Attempt]
    fixes: list[Fix]
    recurrences: list[Recurrence]
    recurrence_count: int
    related: list[RelatedError]
    projects: list[ProjectCount]
    warnings: list[str] = field(default_factory=list)

    @property
    def sighting_count(self) -> int:
        return sum(e.sightings for e in self.errors)

    @property
    def first(self) -> ErrorSummary | None:
        """The member sighted first (its first_seen and first_episode)."""
        seen = [e for e in self.errors if e.first_seen is not None]
        return min(seen, key=lambda e: (e.first_seen, e.project), default=None)

    @property
    def last(self) -> ErrorSummary | None:
        """The member sighted last (its last_seen and last_episode)."""
        seen = [e for e in self.errors if e.last_seen is not None]
        return max(seen, key=lambda e: (e.last_seen, e.project), default=None)
