"""GraphQL types of the recall contract's arguments, and the resolver (what it returns:
api/graphql/recall_result_types.py).

Names are fixed (evaluations and portals rely on them):
recall(project, query, context: RecallContext, filter: RecallFilter, k): RecallResult.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from datetime import datetime
from enum import Enum
from typing import Annotated

import strawberry
from strawberry.types.nodes import SelectedField, Selection

from metisgraph.api.graphql.common_types import CallerEnvironment, environment_record
from metisgraph.api.graphql.context import Info
from metisgraph.api.graphql.recall_result_types import (
    Episode,
    RecallResult,
    RecallWarning,
    episode_view,
    recall_result,
)
from metisgraph.api.graphql.recall_service import answer
from metisgraph.graph import DEFAULT_MEMORY_TYPES, RecallFilters
from metisgraph.ingest.question import Question

__all__ = [
    "Episode",
    "RecallContext",
    "RecallFilter",
    "RecallQuery",
    "RecallResult",
    "RecallWarning",
    "episode_view",
    "recall_filters",
]


@strawberry.input(description="What the caller knows besides the question.")
class RecallContext:
    error: str | None = strawberry.field(default=None, description="Error text or stack trace")
    environment: CallerEnvironment | None = None
    tags: list[str] | None = None
    tools: list[str] | None = None
    projects: list[str] | None = strawberry.field(
        default=None, description="More projects to read (cross-project recall)"
    )


@strawberry.enum(description="Kinds of memory recall returns")
class MemoryType(Enum):
    EPISODE = "episode"
    PATTERN = "pattern"


@strawberry.input(description="Which memories may come back.")
class RecallFilter:
    outcome: list[str] | None = strawberry.field(
        default=None, description="success | failure | partial | unknown"
    )
    review_status: list[str] | None = strawberry.field(
        default=None, description="unreviewed | pending | approved (rejected never returns)"
    )
    since: datetime | None = None
    until: datetime | None = None
    min_confidence: float | None = None
    kinds: list[str] | None = strawberry.field(
        default=None, description="The episode's kind (bug_report, dialogue_turn, …)"
    )
    memory_types: list[MemoryType] | None = strawberry.field(
        default=None,
        description="EPISODE and/or PATTERN (default EPISODE): patterns are lessons maintain "
        "consolidated from several tasks",
    )
    tiers: list[str] | None = strawberry.field(
        default=None,
        description="warm | cold. Memory idle for long while its project kept working is "
        "cold: left out unless asked for (default: warm only)",
    )


def recall_filters(given: RecallFilter | None) -> RecallFilters:
    """The GraphQL filter as recall's one filter type (an empty list asks for nothing)."""
    if given is None:
        return RecallFilters()
    return RecallFilters(
        outcomes=tuple(given.outcome) if given.outcome else None,
        review=tuple(given.review_status) if given.review_status else None,
        since=given.since,
        until=given.until,
        min_confidence=given.min_confidence,
        kinds=tuple(given.kinds) if given.kinds else None,
        memory_types=tuple(t.value for t in given.memory_types)
        if given.memory_types
        else DEFAULT_MEMORY_TYPES,
        tiers=tuple(given.tiers) if given.tiers is not None else ("warm",),
    )


def _question(
    project: str,
    query: str,
    context: RecallContext | None,
    filter: RecallFilter | None,
    k: int,
    preset: str,
    conflicts: bool = True,
    steps: bool = True,
    abstain_below: float | None = None,
) -> Question:
    """The resolver's arguments as the question ingest prepares."""
    context = context or RecallContext()
    return Question(
        project=project,
        query=query,
        k=k,
        projects=tuple(context.projects or ()),
        error=context.error,
        environment=environment_record(context.environment),
        tags=tuple(context.tags or ()),
        tools=tuple(context.tools or ()),
        filters=recall_filters(filter),
        preset=preset,
        conflicts=conflicts,
        steps=steps,
        abstain_below=abstain_below,
    )


def _selects(selections: Sequence[Selection], name: str) -> bool:
    """Whether a selection set asks for a field, itself or through a fragment."""
    for selection in selections:
        if isinstance(selection, SelectedField):
            if selection.name == name:
                return True
        elif _selects(selection.selections, name):
            return True
    return False


def _hits_select(selections: Sequence[Selection], *names: str) -> bool:
    """Whether the hits' selection set asks for any of the fields (fragments included)."""
    for selection in selections:
        if isinstance(selection, SelectedField):
            if selection.name == "hits" and any(_selects(selection.selections, n) for n in names):
                return True
        elif _hits_select(selection.selections, *names):
            return True
    return False


@strawberry.type
class RecallQuery:
    @strawberry.field(description="Recall the experience that helps with a question.")
    async def recall(
        self,
        info: Info,
        project: str,
        query: str,
        context: RecallContext | None = None,
        filter: RecallFilter | None = None,
        k: int = 5,
        preset: Annotated[
            str,
            strawberry.argument(
                description="Channel weights and ranker: balanced (= hand), semantic, lexical, "
                "errors, rrf, learned (the learned ranker over the hand-set shortlist)"
            ),
        ] = "balanced",
        abstain_below: Annotated[
            float | None,
            strawberry.argument(
                description="Abstain when the closest memory's similarity (cosine, 0..1) is "
                "under this and no error or code location matches; 0 abstains only when "
                "nothing is found. Default: each project's threshold, measured on its store"
            ),
        ] = None,
    ) -> RecallResult:
        services = info.context.ready_services()
        # Conflicts are looked for only when asked for: they need every hit's vector.
        # So are the hits' neighbouring steps: two lookups a hit.
        selections = info.selected_fields[0].selections
        conflicts = _selects(selections, "conflicts")
        steps = _hits_select(selections, "previous", "next")
        question = _question(
            project, query, context, filter, k, preset, conflicts, steps, abstain_below
        )
        info.context.require(info, question.all_projects)
        filters = info.context.recallable(question.all_projects, question.filters)
        question = replace(question, filters=filters)
        return recall_result(await answer(services, question))
