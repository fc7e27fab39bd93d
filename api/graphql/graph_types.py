"""GraphQL views of graph nodes that lineage, browsing and analytics share: a step, a task,
an environment, an error — each with its global id, so a portal can open it with node(id),
task(id) or error(id). Each is derived from its graph view (``views.derived``)."""

from __future__ import annotations

import strawberry

from metisgraph.api.graphql.views import Node, View, derived
from metisgraph.graph.explore import ErrorDetail, ErrorRow
from metisgraph.graph.lineage import EnvironmentView, StepView, TaskView

__all__ = [
    "EnvironmentSummary",
    "ErrorItem",
    "ErrorNode",
    "PageInfo",
    "Step",
    "TaskSummary",
]

ERROR_ID = "Global id: error(id), lineage(error: {id})"
ERROR = Node("Error", key="key", local="key")


@strawberry.type(description="Where a list stops and how to go on (keyset cursors).")
class PageInfo:
    end_cursor: str | None = strawberry.field(description="Pass as `after` for the next page")
    has_next_page: bool


@derived(
    StepView,
    description="An episode as a timeline shows it.",
    node=Node("Episode", key="id", local="episode_id"),
    refs={"task_id": "Task"},
    rename={"command": "action_command"},
    about={
        "id": "Global id: node(id) opens it",
        "task_id": "Global id of its task",
        "time_estimated": "createdAt is estimated: the run carried no time of its own for "
        "this step",
    },
)
class Step(View[StepView]):
    pass


@derived(
    TaskView,
    description="A task, briefly: task(id) gives its whole chain.",
    node=Node("Task", key="id", local="task_id"),
)
class TaskSummary(View[TaskView]):
    pass


@derived(
    EnvironmentView,
    description="A fingerprinted runtime context.",
    node=Node("Environment", key="key", local="key"),
)
class EnvironmentSummary(View[EnvironmentView]):
    pass


@derived(
    ErrorRow,
    description="An error of one project, with its sightings in the window.",
    node=ERROR,
    about={"id": ERROR_ID, "open": "Never fixed, or sighted after its last fix"},
)
class ErrorItem(View[ErrorRow]):
    pass


@derived(
    ErrorDetail,
    description="One error with what names it and the other projects that met it.",
    node=ERROR,
    about={
        "id": ERROR_ID,
        "open": "Never fixed, or sighted after its last fix",
        "also_in": "Other projects (among those the caller may read) with the same error",
    },
)
class ErrorNode(View[ErrorDetail]):
    pass
