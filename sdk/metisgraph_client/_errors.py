"""What can go wrong talking to metisgraph, as exceptions a caller can tell apart."""

from __future__ import annotations

__all__ = [
    "AuthError",
    "MetisgraphError",
    "NotReady",
    "QueryError",
    "RateLimited",
    "TransportError",
    "Unavailable",
]


class MetisgraphError(Exception):
    """Anything the client raises."""


class TransportError(MetisgraphError):
    """The service could not be reached, or answered with an HTTP error (after retries)."""


class _AskedToWait(TransportError):
    """An answer that says when to come back: ``retry_after`` seconds (None: not said)."""

    def __init__(self, message: str, retry_after: float | None = None) -> None:
        super().__init__(message)
        self.retry_after = retry_after


class RateLimited(_AskedToWait):
    """HTTP 429: over the key's request rate or its records-a-day quota. The service did
    not run the request. ``retry_after``: the seconds it asked the caller to wait."""


class Unavailable(_AskedToWait):
    """HTTP 502, 503 or 504: the service is busy (``code`` "BUSY": its concurrency limit
    refused the request before running it), the graph store is away ("UNAVAILABLE") or up
    but too busy to take the request in time ("STORE_BUSY"; like UNAVAILABLE, part of it
    may have run), or a proxy failed. ``retry_after``: the seconds the service asked for,
    if it said."""

    def __init__(self, message: str, retry_after: float | None = None,
                 code: str | None = None) -> None:  # fmt: skip
        super().__init__(message, retry_after)
        self.code = code


class AuthError(MetisgraphError):
    """No valid token, or the token may not use a project named in the request."""


class NotReady(MetisgraphError):
    """The service is starting (Neo4j, schema or model not ready yet)."""

    def __init__(self, message: str, retry_after: float | None = None) -> None:
        super().__init__(message)
        self.retry_after = retry_after


class QueryError(MetisgraphError):
    """The service refused the request; the message names the field."""

    def __init__(self, messages: list[str]) -> None:
        super().__init__("; ".join(messages))
        self.messages = messages
