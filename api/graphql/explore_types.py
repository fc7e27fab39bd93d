"""GraphQL for browsing: projects, errors, error(id), task(id), node(id), neighbourhood(id)."""

from __future__ import annotations

from datetime import datetime

import strawberry
from strawberry.scalars import JSON

from metisgraph.api.graphql.common_types import ToolStats, tool_stats_view
from metisgraph.api.graphql.context import Info, UserError
from metisgraph.api.graphql.graph_types import ErrorItem, ErrorNode, PageInfo
from metisgraph.api.graphql.tenancy import readable_projects, readable_ref, utc, visible_projects
from metisgraph.api.graphql.verdict_types import RunVerdict, run_verdict
from metisgraph.api.graphql.views import Node, View, derived
from metisgraph.api.scopes import Scope
from metisgraph.graph import InvalidCursor
from metisgraph.graph.explore import (
    MAX_DEPTH,
    MAX_ERRORS_PAGE,
    MAX_NEIGHBOURHOOD,
    Edge,
    ErrorOrder,
    GraphNode,
    Neighbourhood,
    ProjectRow,
    StepError,
    StepSnippet,
    TaskChain,
    TaskStep,
    error_detail,
    error_page,
    neighbourhood,
    nodes_by_ref,
    projects,
    task_chain,
)

__all__ = ["ExploreQuery"]

MAX_TOOLS = 500

strawberry.enum(
    ErrorOrder,
    description="COUNT: most sightings; RECENT: latest sighting; "
    "UNRESOLVED: open errors only (never fixed, or seen after the last fix)",
)


@derived(
    ProjectRow, name="ProjectInfo", description="A project the caller may read, with a few counts."
)
class ProjectInfo(View[ProjectRow]):
    pass


@strawberry.type
class ErrorConnection:
    items: list[ErrorItem]
    total_count: int
    page_info: PageInfo


@derived(
    StepError,
    name="ErrorItemRef",
    description="An error a step hit.",
    node=Node("Error", key="key", local="key"),
    skip=("project",),
)
class ErrorItemRef(View[StepError]):
    pass


@derived(
    StepSnippet,
    name="SnippetRef",
    description="Code a step wrote, changed or ran.",
    node=Node("Snippet", key="id"),
    skip=("project",),
    about={"relation": "GENERATED | MODIFIED | USED"},
)
class SnippetRef(View[StepSnippet]):
    pass


@derived(
    TaskStep,
    name="ChainStep",
    description="One step of a task's chain.",
    node=Node("Episode", key="id", local="episode_id"),
    skip=("project",),
    refs={"resolved": "Error"},
    rename={"command": "action_command"},
    about={
        "resolved": "Errors this step fixed or worked round, on evidence",
        "action_parameters": "The action's parameters as recorded (sanitized)",
        "facts": "Its structured facts",
        "dealt": "What it did about errors: [{key, kind: fixed | workaround | attempt, rule, "
        "why, confidence}]",
    },
)
class ChainStep(View[TaskStep]):
    dealt: JSON | None


def _verdicts(chain: TaskChain) -> list[RunVerdict]:
    return [run_verdict(v) for v in chain.verdicts]


@derived(
    TaskChain,
    name="TaskNode",
    description="A task and its chain of steps, with their errors, tools, snippets.",
    node=Node("Task", key="id", local="task_id"),
    computed={"verdicts": _verdicts},
    about={
        "constraints": "What the task had to respect, as recorded",
        "verdicts": "The harness verdicts that judged it, oldest first: which tests each run "
        "failed and passed",
    },
)
class TaskNode(View[TaskChain]):
    verdicts: list[RunVerdict]


@derived(
    GraphNode,
    name="GraphNode",
    description="Any node: its kind, a title, its properties (no vectors).",
    skip=("ref", "details"),
    computed={
        "kind": lambda n: n.ref.kind,
        "project": lambda n: n.ref.project,
        "key": lambda n: n.ref.key,
    },
    about={"depth": "Hops from the neighbourhood's center"},
    order=("id", "kind", "project", "key", "title", "depth", "properties"),
)
class GraphNodeView(View[GraphNode]):
    id: strawberry.ID
    kind: str
    project: str
    key: str


@derived(
    Edge,
    name="GraphEdge",
    computed={"source": lambda e: e.source.id, "target": lambda e: e.target.id},
    order=("source", "target", "type", "properties"),
)
class GraphEdge(View[Edge]):
    source: strawberry.ID
    target: strawberry.ID


@derived(
    Neighbourhood,
    name="Neighbourhood",
    description="The nodes around one node inside its project, and their edges.",
    about={
        "nodes": "The center first, by depth",
        "truncated": "The limit stopped the walk: there is more",
    },
)
class NeighbourhoodView(View[Neighbourhood]):
    pass


@strawberry.type
class ExploreQuery:
    @strawberry.field(description="The projects the caller may read, with counts.")
    async def projects(self, info: Info) -> list[ProjectInfo]:
        services = info.context.ready_services()
        rows = await projects(services.store, visible_projects(info.context.caller))
        return [ProjectInfo.of(r) for r in rows]

    @strawberry.field(
        description="Errors of the projects, ranked by orderBy; pages of at most "
        f"{MAX_ERRORS_PAGE}."
    )
    async def errors(
        self,
        info: Info,
        projects: list[str],
        order_by: ErrorOrder = ErrorOrder.COUNT,
        since: datetime | None = None,
        until: datetime | None = None,
        first: int = 50,
        after: str | None = None,
    ) -> ErrorConnection:
        services = info.context.ready_services()
        scope = readable_projects(info.context.caller, projects)
        try:
            page = await error_page(
                services.store,
                scope,
                order_by,
                since=utc(since),
                until=utc(until),
                first=first,
                after=after,
            )
        except (InvalidCursor, ValueError) as exc:
            raise UserError(str(exc)) from None
        return ErrorConnection(
            items=[ErrorItem.of(r) for r in page.rows],
            total_count=page.total,
            page_info=PageInfo(end_cursor=page.end_cursor, has_next_page=page.has_next),
        )

    @strawberry.field(
        description="A project's tools with how their uses went there, the most failing "
        f"first (failure rate, then failures, then uses); at most {MAX_TOOLS}."
    )
    async def tools(
        self, info: Info, project: str, first: int = 50, min_uses: int = 1
    ) -> list[ToolStats]:
        services = info.context.ready_services()
        info.context.require(info, project)
        if not 1 <= first <= MAX_TOOLS:
            raise UserError(f"first must be between 1 and {MAX_TOOLS}, got {first}")
        rows = await services.store.run(
            "project_tools", project=project, first=first, min_uses=max(min_uses, 0)
        )
        return [tool_stats_view(r) for r in rows]

    @strawberry.field(description="One error by its global id; null when not found.")
    async def error(self, info: Info, id: strawberry.ID) -> ErrorNode | None:
        services = info.context.ready_services()
        caller = info.context.caller
        ref = readable_ref(caller, id, "Error")
        if ref is None:
            return None
        found = await error_detail(services.store, ref.project, ref.key, visible_projects(caller))
        return ErrorNode.of(found) if found else None

    @strawberry.field(description="One task with its chain of steps; null when not found.")
    async def task(self, info: Info, id: strawberry.ID, limit: int = 500) -> TaskNode | None:
        services = info.context.ready_services()
        ref = readable_ref(info.context.caller, id, "Task")
        if ref is None:
            return None
        try:
            chain = await task_chain(services.store, ref.project, ref.key, limit)
        except ValueError as exc:
            raise UserError(str(exc)) from None
        return TaskNode.of(chain) if chain else None

    @strawberry.field(
        description="Any node by its global id; null when not found. An episode's instance "
        "details (the originals behind its placeholders, kept only where the operator opted "
        "in) are in properties.details for the project's admins alone."
    )
    async def node(self, info: Info, id: strawberry.ID) -> GraphNodeView | None:
        services = info.context.ready_services()
        caller = info.context.caller
        ref = readable_ref(caller, id)
        if ref is None:
            return None
        found = (await nodes_by_ref(services.store, [ref])).get(ref)
        if found is None:
            return None
        if found.details and caller.allows(ref.project, Scope.admin):
            return GraphNodeView.of(
                found, properties={**found.properties, "details": found.details}
            )
        return GraphNodeView.of(found)

    @strawberry.field(
        description=f"The nodes within depth (1 or {MAX_DEPTH}) of a node, inside its project, "
        f"at most limit (≤ {MAX_NEIGHBOURHOOD}); null when the node is not found."
    )
    async def neighbourhood(
        self, info: Info, id: strawberry.ID, depth: int = 1, limit: int = 100
    ) -> NeighbourhoodView | None:
        services = info.context.ready_services()
        ref = readable_ref(info.context.caller, id)
        if ref is None:
            return None
        try:
            around = await neighbourhood(services.store, ref, depth, limit)
        except ValueError as exc:
            raise UserError(str(exc)) from None
        if around is None:
            return None
        return NeighbourhoodView.of(around)
