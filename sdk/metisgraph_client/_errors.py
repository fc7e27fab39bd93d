"""What can go wrong talking to metisgraph, as exceptions a caller can tell apart."""

from __future__ import annotations

__all__ = ["AuthError", "MetisgraphError", "NotReady", "QueryError", "TransportError"]


class MetisgraphError(Exception):
    """Anything the client raises."""


class TransportError(MetisgraphError):
    """The service could not be reached, or answered with an HTTP error (after retries)."""


class AuthError(MetisgraphError):
    """No valid token, or the token may not use a project named in the request."""


class NotReady(MetisgraphError):
    """The service is starting (Neo4j, schema or model not ready yet)."""


class QueryError(MetisgraphError):
    """The service refused the request; the message names the field."""

    def __init__(self, messages: list[str]) -> None:
        super().__init__("; ".join(messages))
        self.messages = messages
