"""GraphQL for browsing: projects, errors, error(id), task(id), node(id), neighbourhood(id)."""

from __future__ import annotations

from datetime import datetime
from typing import Any, cast

import strawberry
from strawberry.scalars import JSON

from metisgraph.api.graphql.common_types import ToolStats, tool_stats_view
from metisgraph.api.graphql.context import Info, UserError
from metisgraph.api.graphql.graph_types import ErrorItem, ErrorNode, PageInfo
from metisgraph.api.graphql.tenancy import readable_projects, readable_ref, utc, visible_projects
from metisgraph.api.graphql.verdict_types import RunVerdict, run_verdict
from metisgraph.api.scopes import Scope
from metisgraph.graph import InvalidCursor, NodeRef
from metisgraph.graph.explore import (
    MAX_DEPTH,
    MAX_ERRORS_PAGE,
    MAX_NEIGHBOURHOOD,
    ErrorOrder,
    GraphNode,
    TaskChain,
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


@strawberry.type(description="A project the caller may read, with a few counts.")
class ProjectInfo:
    name: str
    created_at: datetime | None
    tasks: int
    episodes: int
    errors: int


@strawberry.type
class ErrorConnection:
    items: list[ErrorItem]
    total_count: int
    page_info: PageInfo


@strawberry.type(description="An error a step hit.")
class ErrorItemRef:
    id: strawberry.ID
    key: str
    kind: str | None
    signature: str | None


@strawberry.type(description="Code a step wrote, changed or ran.")
class SnippetRef:
    id: strawberry.ID
    name: str | None
    kind: str | None
    language: str | None
    relation: str = strawberry.field(description="GENERATED | MODIFIED | USED")


@strawberry.type(description="One step of a task's chain.")
class ChainStep:
    id: strawberry.ID
    episode_id: str
    step: int | None
    created_at: datetime | None
    summary: str | None
    outcome: str | None
    kind: str | None
    action_type: str | None
    command: str | None
    errors: list[ErrorItemRef]
    resolved: list[strawberry.ID] = strawberry.field(
        description="Errors this step fixed or worked round, on evidence"
    )
    tools: list[str]
    snippets: list[SnippetRef]
    environment: JSON | None
    action_parameters: JSON | None = strawberry.field(
        default=None, description="The action's parameters as recorded (sanitized)"
    )
    facts: JSON | None = strawberry.field(default=None, description="Its structured facts")
    dealt: JSON | None = strawberry.field(
        default=None,
        description="What it did about errors: [{key, kind: fixed | workaround | attempt, rule, "
        "why, confidence}]",
    )


@strawberry.type(description="A task and its chain of steps, with their errors, tools, snippets.")
class TaskNode:
    id: strawberry.ID
    project: str
    task_id: str
    goal: str | None
    status: str | None
    outcome: str | None
    agent: str | None
    started_at: datetime | None
    ended_at: datetime | None
    step_count: int
    steps: list[ChainStep]
    constraints: list[str] = strawberry.field(
        default_factory=list, description="What the task had to respect, as recorded"
    )
    verdicts: list[RunVerdict] = strawberry.field(
        default_factory=list,
        description="The harness verdicts that judged it, oldest first: which tests each run "
        "failed and passed",
    )


@strawberry.type(
    name="GraphNode", description="Any node: its kind, a title, its properties (no vectors)."
)
class GraphNodeView:
    id: strawberry.ID
    kind: str
    project: str
    key: str
    title: str
    depth: int = strawberry.field(description="Hops from the neighbourhood's center")
    properties: JSON


@strawberry.type
class GraphEdge:
    source: strawberry.ID
    target: strawberry.ID
    type: str
    properties: JSON


@strawberry.type(
    name="Neighbourhood",
    description="The nodes around one node inside its project, and their edges.",
)
class NeighbourhoodView:
    center: GraphNodeView
    nodes: list[GraphNodeView] = strawberry.field(description="The center first, by depth")
    edges: list[GraphEdge]
    truncated: bool = strawberry.field(description="The limit stopped the walk: there is more")


@strawberry.type
class ExploreQuery:
    @strawberry.field(description="The projects the caller may read, with counts.")
    async def projects(self, info: Info) -> list[ProjectInfo]:
        services = info.context.ready_services()
        rows = await projects(services.store, visible_projects(info.context.caller))
        return [
            ProjectInfo(
                name=r.name,
                created_at=r.created_at,
                tasks=r.tasks,
                episodes=r.episodes,
                errors=r.errors,
            )
            for r in rows
        ]

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
        return _task_node(chain) if chain else None

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
        view = _node(found)
        if found.details and caller.allows(ref.project, Scope.admin):
            view.properties = cast(
                JSON, {**cast(dict[str, Any], view.properties), "details": found.details}
            )
        return view

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
        return NeighbourhoodView(
            center=_node(around.center),
            nodes=[_node(n) for n in around.nodes],
            edges=[
                GraphEdge(
                    source=strawberry.ID(e.source.id),
                    target=strawberry.ID(e.target.id),
                    type=e.type,
                    properties=cast(JSON, e.properties),
                )
                for e in around.edges
            ],
            truncated=around.truncated,
        )


def _task_node(chain: TaskChain) -> TaskNode:
    steps = []
    for s in chain.steps:
        errors = [
            ErrorItemRef(
                id=strawberry.ID(NodeRef("Error", s.project, e["key"]).id),
                key=e["key"],
                kind=e.get("kind"),
                signature=e.get("signature"),
            )
            for e in s.errors
        ]
        snippets = [
            SnippetRef(
                id=strawberry.ID(NodeRef("Snippet", s.project, x["id"]).id),
                name=x.get("name"),
                kind=x.get("kind"),
                language=x.get("language"),
                relation=x["relation"],
            )
            for x in s.snippets
        ]
        steps.append(
            ChainStep(
                id=strawberry.ID(NodeRef("Episode", s.project, s.id).id),
                episode_id=s.id,
                step=s.step,
                created_at=s.created_at,
                summary=s.summary,
                outcome=s.outcome,
                kind=s.kind,
                action_type=s.action_type,
                command=s.action_command,
                errors=errors,
                resolved=[strawberry.ID(NodeRef("Error", s.project, k).id) for k in s.resolved],
                tools=s.tools,
                snippets=snippets,
                environment=cast(JSON, s.environment),
                action_parameters=cast(JSON, s.action_parameters),
                facts=cast(JSON, s.facts),
                dealt=cast(JSON, s.dealt),
            )
        )
    return TaskNode(
        id=strawberry.ID(NodeRef("Task", chain.project, chain.id).id),
        project=chain.project,
        task_id=chain.id,
        goal=chain.goal,
        status=chain.status,
        outcome=chain.outcome,
        agent=chain.agent,
        started_at=chain.started_at,
        ended_at=chain.ended_at,
        step_count=chain.step_count,
        steps=steps,
        constraints=chain.constraints,
        verdicts=[run_verdict(v) for v in chain.verdicts],
    )


def _node(n: GraphNode) -> GraphNodeView:
    return GraphNodeView(
        id=strawberry.ID(n.id),
        kind=n.ref.kind,
        project=n.ref.project,
        key=n.ref.key,
        title=n.title,
        depth=n.depth,
        properties=cast(JSON, n.properties),
    )
