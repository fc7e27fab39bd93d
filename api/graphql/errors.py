"""Error masking: callers see errors they can act on; internal ones are logged with an id."""

from __future__ import annotations

import logging
import traceback
import uuid
from collections.abc import Iterator

from graphql.error import GraphQLError
from neo4j.exceptions import (
    ConnectionAcquisitionTimeoutError,
    ServiceUnavailable,
    SessionExpired,
    TransientError,
)
from strawberry.extensions import MaskErrors, SchemaExtension

from metisgraph.api.auth import Forbidden
from metisgraph.api.graphql.context import NotReady, UserError

__all__ = ["MaskInternalErrors", "UnavailableAs503", "store_state"]

_AWAY = (ServiceUnavailable, SessionExpired)  # Neo4j not reachable, or gone mid-request
# Neo4j answers, but its database is starting or stopping: away as much as a closed port.
_DATABASE_AWAY = "Neo.TransientError.General.DatabaseUnavailable"
RETRY_AFTER_S = 5
BUSY_RETRY_AFTER_S = 1


def store_state(error: BaseException | None) -> str | None:
    """ "away" when Neo4j cannot be reached or its database is not available; "busy" when it
    is up but this request got no turn: no pooled connection came free in time, or a
    transient failure (a deadlock, a lock or memory limit) outlasted the driver's retries;
    None for anything else. Issue 30: a loaded but healthy store is never called away, and
    its transient refusals are a 503 to retry, not an internal error."""
    if isinstance(error, _AWAY):
        return "away"
    if isinstance(error, TransientError):
        return "away" if error.code == _DATABASE_AWAY else "busy"
    if isinstance(error, ConnectionAcquisitionTimeoutError):
        return "busy"
    return None


log = logging.getLogger("metisgraph.api")


def _is_internal(error: GraphQLError) -> bool:
    original = error.original_error
    if original is None:  # syntax and validation errors from graphql-core: the caller's to fix
        return False
    # Coercion errors of variables arrive wrapped; they are the caller's to fix too.
    return not isinstance(original, UserError | Forbidden | ValueError | GraphQLError)


class MaskInternalErrors(MaskErrors):
    """Mask unexpected errors; log each with a reference the caller can quote."""

    def __init__(self) -> None:
        super().__init__(should_mask_error=_is_internal)

    def anonymise_error(self, error: GraphQLError) -> GraphQLError:
        original = error.original_error
        state = store_state(original)
        if state is not None:
            reason = type(original).__name__ + (f" ({c})" if (c := _code(original)) else "")
            log.warning("Neo4j %s at %s: %s", state, error.path, reason)
            if state == "away":
                message = f"the graph store (Neo4j) is unavailable; retry in {RETRY_AFTER_S} s"
            else:
                message = (
                    "the graph store (Neo4j) is busy: this request got no turn in time; "
                    f"retry in {BUSY_RETRY_AFTER_S} s"
                )
            return GraphQLError(
                message=message,
                nodes=error.nodes,
                source=error.source,
                positions=error.positions,
                path=error.path,
                extensions={"code": "UNAVAILABLE" if state == "away" else "STORE_BUSY"},
            )
        reference = uuid.uuid4().hex[:12]
        # The error's type, code and frames only: its message (a Neo4j error's too) can quote
        # the values of the request, which may hold memory text we must not log.
        log.error(
            "internal error %s at %s: %s%s\n%s",
            reference,
            error.path,
            type(original).__name__,
            f" ({code})" if (code := _code(original)) else "",
            "".join(traceback.format_tb(original.__traceback__)) if original else "",
        )
        return GraphQLError(
            message=f"Internal error (reference {reference}).",
            nodes=error.nodes,
            source=error.source,
            positions=error.positions,
            path=error.path,
            original_error=None,
        )


def _code(error: BaseException | None) -> str | None:
    code = getattr(error, "code", None)
    return code if isinstance(code, str) else None


class UnavailableAs503(SchemaExtension):
    """An operation that failed because Neo4j is away or busy, or the service is still
    starting, is answered 503 with ``Retry-After`` (5 s away or starting, 1 s busy): a caller
    (or a load balancer) can tell it from a bad request and knows when to come back. The
    errors are seen before they are masked."""

    def on_operation(self) -> Iterator[None]:
        yield
        result = self.execution_context.result
        errors = (result.errors if result is not None else None) or []
        states = {store_state(e.original_error) for e in errors}
        starting = any(isinstance(e.original_error, NotReady) for e in errors)
        if starting or states & {"away", "busy"}:
            response = getattr(self.execution_context.context, "response", None)
            if response is not None:
                wait = RETRY_AFTER_S if starting or "away" in states else BUSY_RETRY_AFTER_S
                response.status_code = 503
                response.headers["Retry-After"] = str(wait)
