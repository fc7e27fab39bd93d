"""GraphQL compare for portals: projects side by side — the errors they share, where each
was fixed (on evidence), what fixed it in one project and failed in another, and how often
it came back after a fix. Every project named must be readable, or the query is refused."""

from __future__ import annotations

import strawberry

from metisgraph.api.graphql.context import Info, UserError
from metisgraph.api.graphql.explore_types import ErrorItem
from metisgraph.api.graphql.graph_types import Step, error_fields, step
from metisgraph.api.graphql.tenancy import readable_projects
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


@strawberry.type(description="A step that dealt with a shared error in its project, on evidence.")
class DealtWith:
    episode: Step
    kind: str = strawberry.field(
        description="fixed: it removed the cause; workaround: it got past it; attempt: it acted "
        "on the error and did not end it"
    )
    rule: str = strawberry.field(
        description="module, frame, path, setting, name, retry, rerun, other-means"
    )
    why: str = strawberry.field(description="What the step did ('installs pyyaml for yaml')")
    confidence: float | None


@strawberry.type(description="One project's side of a shared error.")
class SharedErrorSide(ErrorItem):
    workarounds: int = strawberry.field(description="Steps that worked round it (no fix)")
    attempt_count: int = strawberry.field(description="Steps that acted on it and did not end it")
    recurrences: int = strawberry.field(description="Sightings after this project's own first fix")
    after_fix_elsewhere: int = strawberry.field(
        description="Sightings before any fix of its own, after another project compared had "
        "fixed it"
    )
    fixed_by: list[DealtWith] = strawberry.field(
        description=f"Where it was fixed or worked round, oldest first (at most {MAX_DEALT})"
    )
    attempts: list[DealtWith] = strawberry.field(
        description=f"What was tried and did not end it, oldest first (at most {MAX_DEALT})"
    )


@strawberry.type(
    description="One way of dealing with a shared error (its rule and why) that fixed it in "
    "some projects and was tried without ending it in others."
)
class FixContrast:
    rule: str
    why: str
    worked_in: list[str]
    failed_in: list[str]


@strawberry.type(description="An error (one key: one signature) two or more projects sighted.")
class SharedErrorView:
    key: str
    kind: str | None
    signature: str | None
    template: str | None
    projects: list[str] = strawberry.field(description="The projects compared that sighted it")
    sides: list[SharedErrorSide] = strawberry.field(description="One a project, by name")
    contrasts: list[FixContrast]


@strawberry.type(description="Projects side by side: the errors they share.")
class ComparisonView:
    projects: list[str]
    shared_count: int = strawberry.field(description="Shared errors in all, beyond this list")
    shared: list[SharedErrorView] = strawberry.field(
        description="The most widespread first, then the most sighted"
    )


def _dealt(d: Dealt) -> DealtWith:
    return DealtWith(
        episode=step(d.episode), kind=d.kind, rule=d.rule, why=d.why, confidence=d.confidence
    )


def _side(s: Side) -> SharedErrorSide:
    e = s.error
    return SharedErrorSide(
        **error_fields(e),
        fixes=e.fixes,
        fixed_at=e.fixed_at,
        open=e.open,
        workarounds=s.workarounds,
        attempt_count=s.attempt_count,
        recurrences=s.recurrences,
        after_fix_elsewhere=s.after_fix_elsewhere,
        fixed_by=[_dealt(d) for d in s.fixed_by],
        attempts=[_dealt(d) for d in s.attempts],
    )


def _contrast(c: Contrast) -> FixContrast:
    return FixContrast(rule=c.rule, why=c.why, worked_in=c.worked_in, failed_in=c.failed_in)


def _shared(x: SharedError) -> SharedErrorView:
    e = x.sides[0].error
    return SharedErrorView(
        key=x.key,
        kind=e.kind,
        signature=e.signature,
        template=e.template,
        projects=x.projects,
        sides=[_side(s) for s in x.sides],
        contrasts=[_contrast(c) for c in x.contrasts],
    )


def comparison_view(c: Comparison) -> ComparisonView:
    return ComparisonView(
        projects=c.projects, shared_count=c.shared_count, shared=[_shared(x) for x in c.shared]
    )


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
        return comparison_view(found)
