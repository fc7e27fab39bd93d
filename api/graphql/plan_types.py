"""GraphQL for planning: planContext(project, task, k, budget) → memories and the prompt."""

from __future__ import annotations

from dataclasses import replace
from typing import Annotated

import strawberry

from metisgraph.api.graphql.common_types import EnvironmentInput, environment_record
from metisgraph.api.graphql.context import Info
from metisgraph.api.graphql.plan_prompt import Memory
from metisgraph.api.graphql.plan_service import PlanRequest, plan_context
from metisgraph.api.graphql.recall_types import (
    Episode,
    RecallFilter,
    RecallWarning,
    episode_view,
    recall_filters,
)
from metisgraph.api.graphql.snippet_types import Snippet, snippet_view
from metisgraph.graph import MEMORY_TYPES, Hit, RecallFilters

__all__ = ["PlanQuery"]


@strawberry.input(description="The task being planned, and what the agent knows now.")
class PlanTaskInput:
    goal: str
    description: str | None = None
    state: str | None = strawberry.field(default=None, description="Where the work stands now")
    error: str | None = strawberry.field(default=None, description="The last error, if any")
    environment: EnvironmentInput | None = None
    tools: list[str] | None = None
    projects: list[str] | None = strawberry.field(
        default=None, description="More projects to read (cross-project memory)"
    )


@strawberry.type(description="One numbered memory of the prompt, and why it was chosen.")
class PlanMemory:
    label: str = strawberry.field(description="M1, M2, … as the prompt cites it")
    id: str = strawberry.field(
        description="The episode, pattern or snippet it rests on (recordOutcome takes it); "
        "for a conflict, the first of the pair"
    )
    kind: str = strawberry.field(
        description="success | failure | experience | fix | workaround | pattern | snippet | "
        "warning | conflict (a fix or workaround: the step that ended an error a recalled step "
        "hit; its id is that step's)"
    )
    text: str = strawberry.field(description="The memory exactly as the prompt shows it")
    why: str
    score: float
    tokens: int
    related: list[str] = strawberry.field(description="Ids of the other memories it speaks of")
    episode: Episode | None
    snippet: Snippet | None


@strawberry.type(description="A plan-ready bundle: the memories and the rendered prompt.")
class PlanContext:
    memories: list[PlanMemory] = strawberry.field(description="In the prompt, best first")
    prompt: str
    tokens: int = strawberry.field(description="The prompt's tokens; never over the budget")
    budget: int
    tokenizer: str = strawberry.field(description="What counted the tokens (offline)")
    left_out: int = strawberry.field(description="Lower-ranked memories that did not fit")
    considered: int = strawberry.field(description="Memories found before the budget")
    abstained: bool = strawberry.field(description="Recall found no episode that fits")
    reason: str | None
    warnings: list[RecallWarning]


def _memory(n: int, memory: Memory, tokens: int) -> PlanMemory:
    text = memory.block(f"M{n}")
    source = memory.source
    snippet = source if memory.kind in ("snippet", "warning") else None
    return PlanMemory(
        label=f"M{n}", id=memory.id, kind=memory.kind, text=text, why=memory.why,
        score=memory.score, tokens=tokens, related=list(memory.related),
        episode=episode_view(source.episode) if isinstance(source, Hit) else None,
        snippet=snippet_view(snippet) if isinstance(snippet, dict) else None,
    )  # fmt: skip


def _filters(given: RecallFilter | None) -> RecallFilters:
    filters = recall_filters(given)
    if given is None or not given.memory_types:
        return replace(filters, memory_types=MEMORY_TYPES)
    return filters


@strawberry.type
class PlanQuery:
    @strawberry.field(  # type: ignore[untyped-decorator]
        description="The memory-informed planning prompt for a task, within a token budget: "
        "numbered memories (successes to follow, failures to avoid, code to reuse, warnings, "
        "conflicts), each with its id and why it was chosen. The service calls no model."
    )
    async def plan_context(
        self,
        info: Info,
        project: str,
        task: PlanTaskInput,
        k: Annotated[
            int,
            strawberry.argument(
                description="Memories to recall; 0 turns memory off (the prompt from the task "
                "alone, a control)"
            ),
        ] = 8,
        budget: Annotated[
            int, strawberry.argument(description="Most tokens the prompt may take")
        ] = 2000,
        require_verified: Annotated[
            bool,
            strawberry.argument(description="Only code a sandboxed run verified (verifySnippet)"),
        ] = False,
        filter: Annotated[
            RecallFilter | None,
            strawberry.argument(
                description="As recall's, but memoryTypes defaults to EPISODE and PATTERN: "
                "a lesson maintain drew from several tasks is worth planning with"
            ),
        ] = None,
        abstain_below: Annotated[
            float | None,
            strawberry.argument(
                description="As recall's: the similarity under which recall abstains "
                "(default: each project's threshold, measured on its store)"
            ),
        ] = None,
    ) -> PlanContext:
        services = info.context.ready_services()
        req = PlanRequest(
            project=project, goal=task.goal, description=task.description, state=task.state,
            error=task.error, environment=environment_record(task.environment),
            tools=tuple(task.tools or ()), projects=tuple(task.projects or ()), k=k,
            budget=budget, require_verified=require_verified, filters=_filters(filter),
            abstain_below=abstain_below,
        )  # fmt: skip
        info.context.require(info, req.all_projects)
        req = replace(req, filters=info.context.recallable(req.all_projects, req.filters))
        planned = await plan_context(services, req)
        fitted, recalled = planned.fitted, planned.recall
        shown = zip(fitted.memories, fitted.memory_tokens, strict=True)
        return PlanContext(
            memories=[_memory(n, m, t) for n, (m, t) in enumerate(shown, start=1)],
            prompt=fitted.prompt, tokens=fitted.tokens, budget=budget,
            tokenizer=planned.tokenizer, left_out=fitted.left_out,
            considered=len(planned.considered), abstained=recalled.abstained,
            reason=recalled.reason,
            warnings=[RecallWarning(channel=w.channel, reason=w.reason)
                      for w in recalled.warnings],
        )  # fmt: skip
