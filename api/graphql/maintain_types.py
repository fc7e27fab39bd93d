"""GraphQL for maintenance: consolidate one project on request (what `metisgraph maintain`
and the periodic run in `serve` do), for callers and for the MCP `maintain` tool."""

from __future__ import annotations

import strawberry

from metisgraph.api.graphql.context import Info
from metisgraph.api.graphql.maintain_service import maintain
from metisgraph.api.graphql.views import View, derived
from metisgraph.graph import MaintainReport

__all__ = ["MaintainMutation"]


@derived(
    MaintainReport,
    name="MaintainResult",
    description="What one maintain run did in a project (docs/consolidation.md).",
    skip=("seconds",),
    about={
        "episodes": "Embedded episodes read",
        "dirty": "New or changed since the last run",
        "unsituated": "Episodes whose conflicts and supersessions were written again",
        "compared": "Candidate pairs scored",
        "duplicates": "Episodes merged into a canonical one",
        "patterns": "Patterns created or updated",
        "dissolved": "Patterns deleted",
        "retired": "Snippets retired",
        "revived": "Retired snippets back in use",
        "abstain_below": "The project's abstention threshold, measured again",
    },
)
class MaintainResult(View[MaintainReport]):
    pass


@strawberry.type
class MaintainMutation:
    @strawberry.mutation(
        description="Consolidate a project now: near-duplicate episodes merge, lessons "
        "(patterns) are drawn, dead snippets retire, conflicts are related again, the "
        "abstention threshold is measured again. The "
        "METISGRAPH_MAINTAIN_* settings apply."
    )
    async def maintain(self, info: Info, project: str) -> MaintainResult:
        services = info.context.ready_services()
        info.context.require(info, project)
        (report,) = await maintain(services, [project])
        await info.context.audit("maintain", project, count=report.duplicates)
        return MaintainResult.of(report)
