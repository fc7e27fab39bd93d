"""Browsing the graph: projects, errors ranked and paged, one error, one task, any node and
its neighbourhood — by global ids, inside the projects asked about; search, trends, and
projects compared side by side."""

import typing

from metisgraph.graph.faces import lazy_face as _lazy_face

if typing.TYPE_CHECKING:
    from metisgraph.graph.explore.compare import (
        MAX_COMPARE,
        MAX_DEALT,
        Comparison,
        Contrast,
        Dealt,
        SharedError,
        Side,
        compare,
    )
    from metisgraph.graph.explore.detail import (
        MAX_TASK_STEPS,
        ErrorDetail,
        StepError,
        StepSnippet,
        TaskChain,
        TaskStep,
        error_detail,
        task_chain,
    )
    from metisgraph.graph.explore.listing import (
        MAX_ERRORS_PAGE,
        ErrorPage,
        ErrorRow,
        ProjectRow,
        error_page,
        projects,
        warm_error_pages,
    )
    from metisgraph.graph.explore.neighbourhood import (
        MAX_DEPTH,
        MAX_NEIGHBOURHOOD,
        Edge,
        GraphNode,
        Neighbourhood,
        neighbourhood,
        nodes_by_ref,
    )
    from metisgraph.graph.explore.order import ErrorOrder
    from metisgraph.graph.explore.search import (
        MAX_SEARCH,
        EpisodeHit,
        episodes_by_text,
        errors_by_members,
    )
    from metisgraph.graph.explore.titles import (
        HIDDEN_PROPERTIES,
        VECTOR_PROPERTIES,
        shown_properties,
        title_of,
    )
    from metisgraph.graph.explore.trends import (
        MAX_TOP,
        WeekCount,
        new_errors,
        recurring_errors,
        weekly_sightings,
    )

__all__ = [
    "HIDDEN_PROPERTIES",
    "MAX_COMPARE",
    "MAX_DEALT",
    "MAX_DEPTH",
    "MAX_ERRORS_PAGE",
    "MAX_NEIGHBOURHOOD",
    "MAX_SEARCH",
    "MAX_TASK_STEPS",
    "MAX_TOP",
    "VECTOR_PROPERTIES",
    "Comparison",
    "Contrast",
    "Dealt",
    "Edge",
    "EpisodeHit",
    "ErrorDetail",
    "ErrorOrder",
    "ErrorPage",
    "ErrorRow",
    "GraphNode",
    "Neighbourhood",
    "ProjectRow",
    "SharedError",
    "Side",
    "StepError",
    "StepSnippet",
    "TaskChain",
    "TaskStep",
    "WeekCount",
    "compare",
    "episodes_by_text",
    "error_detail",
    "error_page",
    "errors_by_members",
    "neighbourhood",
    "new_errors",
    "nodes_by_ref",
    "projects",
    "recurring_errors",
    "shown_properties",
    "task_chain",
    "title_of",
    "warm_error_pages",
    "weekly_sightings",
]

if not typing.TYPE_CHECKING:
    _lazy_face(__name__)
