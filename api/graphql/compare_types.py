"""GraphQL compare for portals: projects side by side — the errors they share, where each
was fixed (on evidence), what fixed it in one project and failed in another, and how often
it came back after a fix. Every project named must be readable, or the query is refused."""

from __future__ import annotations

import strawberry

from metisgraph.api.graphql.context import Info, UserError
from metisgraph.api.graphql.graph_types import ERROR, ERROR_ID
from metisgraph.api.graphql.tenancy import readable_projects
from metisgraph.api.graphql.views import View, derived
from metisgraph.graph.explore import (
    MAX_COMPARE,
    MAX_DEALT,
    Comparison,
    Contrast,
    Dealt,
    SharedError,
    Side,
    compare,
)

__all__ = ["CompareQuery"]


@derived(
    Dealt,
    name="DealtWith",
    description="A step that dealt with a shared error in its project, on evidence.",
    about={
        "kind": "fixed: it removed the cause; workaround: it got past it; attempt: it acted "
        "on the error and did not end it",
        "rule": "module, frame, path, setting, name, retry, rerun, other-means",
        "why": "What the step did ('installs pyyaml for yaml')",
    },
)
class DealtWith(View[Dealt]):
    pass


@derived(
    Side,
    description="One project's side of a shared error.",
    node=ERROR,
    spread="error",
    skip=("first_fixed_at",),
    about={
        "id": ERROR_ID,
        "open": "Never fixed, or sighted after its last fix",
        "workarounds": "Steps that worked round it (no fix)",
        "attempt_count": "Steps that acted on it and did not end it",
        "recurrences": "Sightings after this project's own first fix",
        "after_fix_elsewhere": "Sightings before any fix of its own, after another project "
        "compared had fixed it",
        "fixed_by": f"Where it was fixed or worked round, oldest first (at most {MAX_DEALT})",
        "attempts": f"What was tried and did not end it, oldest first (at most {MAX_DEALT})",
    },
)
class SharedErrorSide(View[Side]):
    pass


@derived(
    Contrast,
    name="FixContrast",
    description="One way of dealing with a shared error (its rule and why) that fixed it in "
    "some projects and was tried without ending it in others.",
)
class FixContrast(View[Contrast]):
    pass


@derived(
    SharedError,
    name="SharedErrorView",
    description="An error (one key: one signature) two or more projects sighted.",
    about={
        "projects": "The projects compared that sighted it",
        "sides": "One a project, by name",
    },
    order=("key", "kind", "signature", "template", "projects", "sides", "contrasts"),
)
class SharedErrorView(View[SharedError]):
    kind: str | None
    signature: str | None
    template: str | None
    projects: list[str]


@derived(
    Comparison,
    name="ComparisonView",
    description="Projects side by side: the errors they share.",
    about={
        "shared_count": "Shared errors in all, beyond this list",
        "shared": "The most widespread first, then the most sighted",
    },
)
class ComparisonView(View[Comparison]):
    pass


@strawberry.type
class CompareQuery:
    @strawberry.field(
        description="Two or more projects side by side: the errors they share, where each "
        "was fixed, what fixed it in one and failed in another, recurrences after a fix; at "
        f"most first (≤ {MAX_COMPARE}) shared errors. Every project named must be readable."
    )
    async def compare(self, info: Info, projects: list[str], first: int = 20) -> ComparisonView:
        services = info.context.ready_services()
        scope = readable_projects(info.context.caller, projects)
        try:
            found = await compare(services.store, scope, first)
        except ValueError as exc:
            raise UserError(str(exc)) from None
        return ComparisonView.of(found)
