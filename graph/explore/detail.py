"""One error, one task: what a portal shows when a person opens them."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from metisgraph.graph.explore.listing import ErrorRow
from metisgraph.graph.rows import native_time
from metisgraph.graph.store import GraphStore

__all__ = [
    "MAX_TASK_STEPS",
    "ErrorDetail",
    "StepError",
    "StepSnippet",
    "TaskChain",
    "TaskStep",
    "error_detail",
    "task_chain",
]

MAX_TASK_STEPS = 500


@dataclass(frozen=True)
class ErrorDetail(ErrorRow):
    """An error with what names it and the other readable projects that met it."""

    sample: str | None = None
    frames: list[str] = field(default_factory=list)
    also_in: list[str] = field(default_factory=list)  # other readable projects that met it


async def error_detail(
    store: GraphStore, project: str, key: str, readable: list[str] | None
) -> ErrorDetail | None:
    """The error, or None when the project holds none with that key."""
    rows = await store.run("explore_error", project=project, key=key, readable=readable)
    if not rows:
        return None
    r = rows[0]
    return ErrorDetail(
        **vars(ErrorRow.of(r)),
        sample=r.get("sample"),
        frames=list(r.get("frames") or []),
        also_in=list(r.get("also_in") or []),
    )


@dataclass(frozen=True)
class StepError:
    """An error a step hit."""

    project: str
    key: str
    kind: str | None
    signature: str | None


@dataclass(frozen=True)
class StepSnippet:
    """Code a step wrote, changed or ran."""

    project: str
    id: str
    name: str | None
    kind: str | None
    language: str | None
    relation: str  # GENERATED | MODIFIED | USED


@dataclass(frozen=True)
class TaskStep:
    """One episode of a task's chain, with what it met and used."""

    project: str
    id: str
    step: int | None
    created_at: datetime | None
    summary: str | None
    outcome: str | None
    kind: str | None
    action_type: str | None
    action_command: str | None
    errors: list[StepError]
    resolved: list[str]  # keys of the errors this step resolved
    tools: list[str]
    snippets: list[StepSnippet]
    environment: dict[str, Any] | None
    action_parameters: Any = None  # as recorded (a map), None when there were none
    facts: Any = None
    # {key, kind: fixed | workaround | attempt, rule, why, confidence}: what it did about errors
    dealt: list[dict[str, Any]] = field(default_factory=list)


@dataclass(frozen=True)
class TaskChain:
    project: str
    id: str
    goal: str | None
    status: str | None
    outcome: str | None
    agent: str | None
    started_at: datetime | None
    ended_at: datetime | None
    step_count: int
    steps: list[TaskStep] = field(default_factory=list)
    constraints: list[str] = field(default_factory=list)
    # The harness verdicts that judged it: {run, instance, resolved, harnesses,
    # tests_failed, tests_passed, recorded_at}, oldest first.
    verdicts: list[dict[str, Any]] = field(default_factory=list)


async def task_chain(
    store: GraphStore, project: str, task_id: str, limit: int = MAX_TASK_STEPS
) -> TaskChain | None:
    """The task with its steps in chain order (the first ``limit``), or None."""
    if not 1 <= limit <= MAX_TASK_STEPS:
        raise ValueError(f"limit: between 1 and {MAX_TASK_STEPS}, got {limit}")
    rows = await store.run("explore_task", project=project, id=task_id, limit=limit)
    if not rows:
        return None
    task, chain = rows[0]["task"], rows[0]["chain"]
    return TaskChain(
        project=task["project"],
        id=task["id"],
        goal=task.get("goal"),
        status=task.get("status"),
        outcome=task.get("outcome"),
        agent=task.get("agent"),
        started_at=native_time(task.get("started_at")),
        ended_at=native_time(task.get("ended_at")),
        step_count=rows[0]["steps"],
        steps=[_step(e) for e in chain],
        constraints=list(task.get("constraints") or []),
        verdicts=[_verdict(v) for v in task.get("verdicts") or []],
    )


def _verdict(v: dict[str, Any]) -> dict[str, Any]:
    return {
        **v,
        "recorded_at": native_time(v.get("recorded_at")),
        "tests_failed": list(v.get("tests_failed") or []),
        "tests_passed": list(v.get("tests_passed") or []),
        "harnesses": list(v.get("harnesses") or []),
        "sources": list(v.get("sources") or []),
    }


def _stored_map(value: Any) -> Any:
    """A map an episode keeps as JSON text (facts, action parameters), as a value."""
    if not isinstance(value, str) or not value:
        return None
    try:
        return json.loads(value)
    except ValueError:
        return None


def _step(e: dict[str, Any]) -> TaskStep:
    project = e["project"]
    return TaskStep(
        project=project,
        id=e["id"],
        step=e.get("step"),
        created_at=native_time(e.get("created_at")),
        summary=e.get("summary"),
        outcome=e.get("outcome"),
        kind=e.get("kind"),
        action_type=e.get("action_type"),
        action_command=e.get("action_command"),
        errors=[
            StepError(project, x["key"], x.get("kind"), x.get("signature"))
            for x in e.get("errors") or []
        ],
        resolved=list(e.get("resolved") or []),
        tools=list(e.get("tools") or []),
        snippets=[
            StepSnippet(
                project, x["id"], x.get("name"), x.get("kind"), x.get("language"), x["relation"]
            )
            for x in e.get("snippets") or []
        ],
        environment=e.get("environment"),
        action_parameters=_stored_map(e.get("action_parameters")),
        facts=_stored_map(e.get("facts")),
        dealt=list(e.get("dealt") or []),
    )
