"""GraphQL for the audit trail: auditLog(project), for the project's admins."""

from __future__ import annotations

from datetime import datetime
from typing import Any

import strawberry

from metisgraph.api.audit import MAX_PAGE, audit_page
from metisgraph.api.graphql.context import Info, UserError
from metisgraph.api.graphql.graph_types import PageInfo
from metisgraph.graph import native_value

__all__ = ["AuditQuery"]


@strawberry.type(description="Who did what in a project; never a value of the memory.")
class AuditEntry:
    at: datetime
    actor: str = strawberry.field(description="key:<id>, token#<n>, anonymous or cli:<user>")
    action: str = strawberry.field(
        description="record, record_refused (every record of the call refused: count 0), "
        "approve, reject, hold, unreview, correct, forget, forget_project, export, key_create, "
        "key_revoke"
    )
    project: str
    target: str | None = strawberry.field(description="The id acted on, when one")
    count: int | None = strawberry.field(description="Records written or deleted, when many")


@strawberry.type
class AuditLog:
    entries: list[AuditEntry]
    page_info: PageInfo


def _datetime(value: Any) -> datetime:
    moment: datetime = native_value(value)
    return moment


@strawberry.type
class AuditQuery:
    @strawberry.field(  # type: ignore[untyped-decorator]
        description=f"A project's audit trail, newest first, at most {MAX_PAGE} a page (admin)."
    )
    async def audit_log(
        self, info: Info, project: str, first: int = 50, after: str | None = None
    ) -> AuditLog:
        services = info.context.ready_services()
        info.context.require(info, project)
        try:
            page = await audit_page(services.store, project, first, after)
        except ValueError as exc:
            raise UserError(str(exc)) from None
        entries = [
            AuditEntry(
                at=_datetime(e.at), actor=e.actor, action=e.action, project=e.project,
                target=e.target, count=e.count,
            )
            for e in page.entries
        ]  # fmt: skip
        more = PageInfo(end_cursor=page.end_cursor, has_next_page=page.has_next_page)
        return AuditLog(entries=entries, page_info=more)
