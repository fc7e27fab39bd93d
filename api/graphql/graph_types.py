"""GraphQL views of graph nodes that lineage, browsing and analytics share: a step, a task,
an environment — each with its global id, so a portal can open it with node(id) or task(id)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

import strawberry

from metisgraph.graph import NodeRef
from metisgraph.graph.explore import ErrorRow
from metisgraph.graph.lineage import EnvironmentView, ErrorSummary, StepView, TaskView

__all__ = [
    "EnvironmentSummary",
    "ErrorFields",
    "PageInfo",
    "Step",
    "TaskSummary",
    "environment_summary",
    "error_fields",
    "step",
    "task_summary",
]


@strawberry.type(description="Where a list stops and how to go on (keyset cursors).")
class PageInfo:
    end_cursor: str | None = strawberry.field(description="Pass as `after` for the next page")
    has_next_page: bool


@strawberry.type(description="An episode as a timeline shows it.")
class Step:
    id: strawberry.ID = strawberry.field(description="Global id: node(id) opens it")
    project: str
    episode_id: str
    task_id: strawberry.ID | None = strawberry.field(description="Global id of its task")
    step: int | None
    created_at: datetime | None
    summary: str | None
    outcome: str | None
    kind: str | None
    command: str | None
    time_estimated: bool = strawberry.field(
        default=False,
        description="createdAt is estimated: the run carried no time of its own for this step",
    )


@strawberry.type(description="A task, briefly: task(id) gives its whole chain.")
class TaskSummary:
    id: strawberry.ID
    project: str
    task_id: str
    goal: str | None
    status: str | None
    agent: str | None


@strawberry.type(description="A fingerprinted runtime context.")
class EnvironmentSummary:
    id: strawberry.ID
    project: str
    key: str
    os: str | None
    os_version: str | None
    arch: str | None
    runtime: str | None
    runtime_version: str | None


@strawberry.type(description="An error of one project and how often it was sighted.")
class ErrorFields:
    id: strawberry.ID = strawberry.field(description="Global id: error(id), lineage(error: {id})")
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


def error_fields(e: ErrorRow | ErrorSummary) -> dict[str, Any]:
    """The fields every view of an error shares, from a browsed or a lineage error."""
    return {
        "id": strawberry.ID(NodeRef("Error", e.project, e.key).id),
        "project": e.project,
        "key": e.key,
        "kind": e.kind,
        "category": e.category,
        "signature": e.signature,
        "template": e.template,
        "sightings": e.sightings,
        "tasks": e.tasks,
        "first_seen": e.first_seen,
        "last_seen": e.last_seen,
    }


def step(view: StepView) -> Step:
    task = NodeRef("Task", view.project, view.task_id).id if view.task_id else None
    return Step(
        id=strawberry.ID(NodeRef("Episode", view.project, view.id).id),
        project=view.project,
        episode_id=view.id,
        task_id=strawberry.ID(task) if task else None,
        step=view.step,
        created_at=view.created_at,
        summary=view.summary,
        outcome=view.outcome,
        kind=view.kind,
        command=view.action_command,
        time_estimated=view.time_estimated,
    )


def task_summary(view: TaskView | None) -> TaskSummary | None:
    if view is None:
        return None
    return TaskSummary(
        id=strawberry.ID(NodeRef("Task", view.project, view.id).id),
        project=view.project,
        task_id=view.id,
        goal=view.goal,
        status=view.status,
        agent=view.agent,
    )


def environment_summary(view: EnvironmentView | None) -> EnvironmentSummary | None:
    if view is None:
        return None
    return EnvironmentSummary(
        id=strawberry.ID(NodeRef("Environment", view.project, view.key).id),
        project=view.project,
        key=view.key,
        os=view.os,
        os_version=view.os_version,
        arch=view.arch,
        runtime=view.runtime,
        runtime_version=view.runtime_version,
    )
