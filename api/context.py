"""The typed GraphQL context: services, the caller, per-request state."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from strawberry.types import Info as StrawberryInfo

from metisgraph.api.auth import ANONYMOUS, Caller
from metisgraph.api.services import Services

__all__ = ["Context", "Info", "NotReady", "UserError"]


class UserError(Exception):
    """An error the caller can act on: shown as is, never masked."""


class NotReady(UserError):
    """The service is still starting (Neo4j, schema or model not ready)."""


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
        if not readiness.ready:
            detail = f": {readiness.error}" if readiness.error else ""
            raise NotReady(f"metisgraph is starting, try again shortly{detail}")
        return self.services


Info = StrawberryInfo[Context, None]
