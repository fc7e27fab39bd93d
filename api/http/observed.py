"""Every HTTP request observed: a request id, one access log line, the request metrics.

The id is the caller's ``X-Request-Id`` when it is a short token (letters, digits, ``.``,
``_``, ``-``), else a new one; it is sent back in the answer and stamped on every log line
written while the request is served. The access line names the route (one of ours, or
``other``), never the query string, headers or body.
"""

from __future__ import annotations

import logging
import re
import time
import uuid

from starlette.datastructures import MutableHeaders
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from metisgraph.api.logs import REQUEST_ID
from metisgraph.api.metrics import REQUEST_SECONDS, REQUESTS

__all__ = ["ROUTES", "Observed"]

log = logging.getLogger("metisgraph.access")

ROUTES = frozenset({"/graphql", "/export", "/healthz", "/readyz", "/metrics"})
_GIVEN_ID = re.compile(r"[A-Za-z0-9._-]{1,64}")


def _request_id(scope: Scope) -> str:
    for name, value in scope.get("headers") or []:
        if name == b"x-request-id":
            given = bytes(value).decode("latin-1")
            if _GIVEN_ID.fullmatch(given):
                return given
    return uuid.uuid4().hex


class Observed:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        request_id = _request_id(scope)
        token = REQUEST_ID.set(request_id)
        status = 500  # unless an answer starts: an exception escaped

        async def answered(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
                MutableHeaders(scope=message)["x-request-id"] = request_id
            await send(message)

        started = time.perf_counter()
        try:
            await self.app(scope, receive, answered)
        finally:
            elapsed = time.perf_counter() - started
            route = scope["path"] if scope["path"] in ROUTES else "other"
            REQUESTS.labels(route, scope["method"], str(status)).inc()
            REQUEST_SECONDS.labels(route).observe(elapsed)
            operation = (scope.get("state") or {}).get("operation")
            log.info(
                "%s %s %d",
                scope["method"],
                route,
                status,
                extra={
                    "route": route,
                    "method": scope["method"],
                    "status": status,
                    "duration_ms": round(elapsed * 1000, 1),
                    "operation": operation,
                },
            )
            REQUEST_ID.reset(token)
