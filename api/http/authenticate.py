"""Who is calling, decided before GraphQL sees the request: a bearer token (a
METISGRAPH_API_TOKENS entry or a key stored in Neo4j), or nobody where that is allowed;
then the caller's request rate. The caller goes into the request's state."""

from __future__ import annotations

import logging

from neo4j.exceptions import DriverError, Neo4jError
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Receive, Scope, Send

from metisgraph.api.auth import ANONYMOUS, Caller, TokenTable, bearer
from metisgraph.api.http.ratelimit import RateLimiter
from metisgraph.api.keys import KeyRing
from metisgraph.graph import COUNTERS

__all__ = ["Authenticated"]

log = logging.getLogger("metisgraph")


class Authenticated:
    """Bearer-token authentication and per-caller rates in front of an ASGI app.

    ``required``: every request needs a valid token; otherwise a request without one is
    anonymous (loopback, no tokens configured) and a request with a wrong one still fails.
    """

    def __init__(
        self, app: ASGIApp, tokens: TokenTable | None, required: bool, limiter: RateLimiter
    ) -> None:
        self.app = app
        self.tokens = tokens
        self.required = required
        self.limiter = limiter

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        headers = dict(scope.get("headers") or [])
        token = bearer(headers.get(b"authorization", b"").decode("latin-1"))
        state = scope.setdefault("state", {})
        try:
            caller = await self._caller(token, state.get("keys"))
        except (Neo4jError, DriverError) as exc:
            log.warning("key not checked: Neo4j answered %s", type(exc).__name__)
            await _refuse(scope, receive, send, 503, "keys cannot be checked now", retry=5)
            return
        if caller is None:
            COUNTERS.increment("requests_refused", reason="token")
            message = "a valid 'Authorization: Bearer <token>' header is required"
            await _refuse(scope, receive, send, 401, message)
            return
        wait = self.limiter.retry_after(caller)
        if wait is not None:
            COUNTERS.increment("requests_refused", reason="rate")
            message = f"over this caller's request rate; try again in {wait} s"
            await _refuse(scope, receive, send, 429, message, retry=wait)
            return
        state["caller"] = caller
        await self.app(scope, receive, send)

    async def _caller(self, token: str | None, keys: KeyRing | None) -> Caller | None:
        if token is None:
            return None if self.required else ANONYMOUS
        caller = self.tokens.caller_for(token) if self.tokens is not None else None
        if caller is None and keys is not None and KeyRing.is_key(token):
            caller = await keys.caller_for(token)
        return caller


async def _refuse(
    scope: Scope, receive: Receive, send: Send, status: int, message: str, retry: int = 0
) -> None:
    headers = {"Retry-After": str(retry)} if retry else {}
    if status == 401:
        headers["WWW-Authenticate"] = "Bearer"
    response = JSONResponse({"errors": [{"message": message}]}, status, headers=headers)
    await response(scope, receive, send)
