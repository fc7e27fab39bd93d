"""Error masking: callers see errors they can act on; internal ones are logged with an id."""

from __future__ import annotations

import logging
import traceback
import uuid

from graphql.error import GraphQLError
from strawberry.extensions import MaskErrors

from metisgraph.api.auth import Forbidden
from metisgraph.api.context import UserError

__all__ = ["MaskInternalErrors"]

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
