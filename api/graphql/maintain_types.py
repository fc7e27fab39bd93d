"""GraphQL for maintenance: consolidate one project on request (what `metisgraph maintain`
and the periodic run in `serve` do), for callers and for the MCP `maintain` tool."""

from __future__ import annotations

import strawberry

from metisgraph.api.graphql.context import Info
from metisgraph.api.graphql.maintain_service import maintain

__all__ = ["MaintainMutation"]


@strawberry.type(description="What one maintain run did in a project (docs/consolidation.md).")
class MaintainResult:
    project: str
    episodes: int = strawberry.field(description="Embedded episodes read")
    dirty: int = strawberry.field(description="New or changed since the last run")
    unsituated: int = strawberry.field(
        description="Episodes whose conflicts and supersessions were written again"
    )
    compared: int = strawberry.field(description="Candidate pairs scored")
    duplicates: int = strawberry.field(description="Episodes merged into a canonical one")
    patterns: int = strawberry.field(description="Patterns created or updated")
    dissolved: int = strawberry.field(description="Patterns deleted")
    retired: int = strawberry.field(description="Snippets retired")
    revived: int = strawberry.field(description="Retired snippets back in use")
    abstain_below: float | None = strawberry.field(
        default=None, description="The project's abstention threshold, measured again"
    )


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
        return MaintainResult(
            project=report.project,
            episodes=report.episodes,
            dirty=report.dirty,
            unsituated=report.unsituated,
            compared=report.compared,
            duplicates=report.duplicates,
            patterns=report.patterns,
            dissolved=report.dissolved,
            retired=report.retired,
            revived=report.revived,
            abstain_below=report.abstain_below,
        )
