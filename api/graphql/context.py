"""The typed GraphQL context: services, the caller, per-request state."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace
from typing import Any

from strawberry.types import Info as StrawberryInfo

from metisgraph.api.audit import audit
from metisgraph.api.auth import ANONYMOUS, Caller, Forbidden
from metisgraph.api.keys import QuotaExceeded, reserve_records
from metisgraph.api.scopes import Scope, required
from metisgraph.api.services import Services
from metisgraph.graph import NOT_REVIEWING, RecallFilters

__all__ = ["Context", "Info", "NotReady", "TooMany", "UserError"]


class UserError(Exception):
    """An error the caller can act on: shown as is, never masked."""


class NotReady(UserError):
    """The service is still starting (Neo4j, schema or model not ready)."""


class TooMany(UserError):
    """Over a rate or a quota: the answer is 429 with Retry-After."""


@dataclass
class Context:
    services: Services
    caller: Caller
    request: Any = None
    response: Any = None  # strawberry's sub-response: its status and headers reach the caller

    @classmethod
    def of_request(cls, request: Any, response: Any = None) -> Context:
        """The context of an authenticated request (its state holds the services and the
        caller ``Authenticated`` found): one construction for /graphql and the MCP tools,
        so both apply the same caller. ``response``: strawberry's sub-response, if any."""
        caller: Caller = getattr(request.state, "caller", ANONYMOUS)
        return cls(
            services=request.state.services, caller=caller, request=request, response=response
        )

    def ready_services(self) -> Services:
        readiness = self.services.readiness
        if readiness.lasting:  # not "try again": no retry mends it (answered without 503)
            raise UserError(f"metisgraph cannot serve until its operator acts: {readiness.error}")
        if not readiness.ready:
            detail = f": {readiness.error}" if readiness.error else ""
            raise NotReady(f"metisgraph is starting, try again shortly{detail}")
        return self.services

    def require(self, info: StrawberryInfo[Context, None], projects: str | Iterable[str]) -> Scope:
        """The caller holds, on every project, the scope this root field needs (``REQUIRED``
        in metisgraph.api.scopes); Forbidden otherwise. Returns the scope."""
        parent, field = info.path.typename or "", info.field_name
        scope = required(parent, field)
        if scope is None:  # fail closed: a field nobody gave a scope serves nobody
            raise Forbidden(f"{parent}.{field} needs a scope in metisgraph.api.scopes.REQUIRED")
        self.caller.require(projects, scope)
        return scope

    def recallable(self, projects: Iterable[str], filters: RecallFilters) -> RecallFilters:
        """Pending memories (risky, waiting for a reviewer) reach only a caller who may review
        every project asked; anyone else's recall and planContext leave them out. Asking for
        pending ones alone without the review scope is Forbidden."""
        wanted = list(projects)
        if all(self.caller.allows(p, Scope.review) for p in wanted):
            return filters
        asked = filters.review
        kept = tuple(s for s in asked if s != "pending") if asked else NOT_REVIEWING
        if not kept:
            self.caller.require(wanted, Scope.review)
        return replace(filters, review=kept)

    async def reserve_records(self, count: int) -> None:
        """Count ``count`` records against the caller's quota of the day; 429 when full."""
        default = self.services.settings.api.records_per_day
        try:
            await reserve_records(self.services.store, self.caller, count, default)
        except QuotaExceeded as exc:
            self.retry_after(exc.retry_after)
            raise TooMany(f"{exc}; try again in {exc.retry_after} s") from None

    def retry_after(self, seconds: int) -> None:
        if self.response is not None:
            self.response.status_code = 429
            self.response.headers["Retry-After"] = str(seconds)

    async def audit(
        self, action: str, project: str, *, target: str | None = None, count: int | None = None
    ) -> None:
        """Keep who did ``action`` in ``project`` in the audit trail (never a value)."""
        await audit(
            self.services.store, self.caller.name, action, project, target=target, count=count
        )


Info = StrawberryInfo[Context, None]
