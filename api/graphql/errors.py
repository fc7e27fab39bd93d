"""Error masking: callers see errors they can act on; internal ones are logged with an id."""

from __future__ import annotations

import logging
import traceback
import uuid
from collections.abc import Iterator

from graphql.error import GraphQLError
from neo4j.exceptions import ServiceUnavailable, SessionExpired
from strawberry.extensions import MaskErrors, SchemaExtension

from metisgraph.api.auth import Forbidden
from metisgraph.api.graphql.context import NotReady, UserError

__all__ = ["MaskInternalErrors", "UnavailableAs503"]

_AWAY = (ServiceUnavailable, SessionExpired)  # Neo4j not reachable, or gone mid-request
RETRY_AFTER_S = 5

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
        away = error.original_error
        if isinstance(away, _AWAY):
            log.warning("Neo4j unavailable at %s: %s", error.path, type(away).__name__)
            return GraphQLError(
                message=f"the graph store (Neo4j) is unavailable; retry in {RETRY_AFTER_S} s",
                nodes=error.nodes,
                source=error.source,
                positions=error.positions,
                path=error.path,
                extensions={"code": "UNAVAILABLE"},
            )
        reference = uuid.uuid4().hex[:12]
        # The error's type, code and frames only: its message (a Neo4j error's too) can quote
        # the values of the request, which may hold memory text we must not log.
        original = error.original_error
        log.error(
            "internal error %s at %s: %s%s\n%s",
            reference,
            error.path,
            type(original).__name__,
            f" ({code})" if (code := getattr(original, "code", None)) else "",
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


class UnavailableAs503(SchemaExtension):
    """An operation that failed because Neo4j is away, or the service is still starting, is
    answered 503 with ``Retry-After``: a caller (or a load balancer) can tell it from a bad
    request and knows when to come back. The errors are seen before they are masked."""

    def on_operation(self) -> Iterator[None]:
        yield
        result = self.execution_context.result
        errors = (result.errors if result is not None else None) or []
        if any(isinstance(e.original_error, (*_AWAY, NotReady)) for e in errors):
            response = getattr(self.execution_context.context, "response", None)
            if response is not None:
                response.status_code = 503
                response.headers["Retry-After"] = str(RETRY_AFTER_S)
