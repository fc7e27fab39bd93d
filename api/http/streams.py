"""Long-lived event streams (``GET /mcp``) in a bounded pool of their own.

A stream lasts as long as its client keeps the socket open, so it cannot share the request
slots: sixteen idle streams would hold all sixteen and every other tenant would wait and get
503. Streams are counted apart instead, at most ``per_caller`` for one caller (a key, a
METISGRAPH_API_TOKENS entry, or the anonymous caller) and ``total`` for the process; past
either the stream is refused at once — 429 for the caller's own share, 503 for the process's —
with ``Retry-After``. The caller is known here (this sits behind authentication).
"""

from __future__ import annotations

from collections import Counter

from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Receive, Scope, Send

from metisgraph.api.auth import ANONYMOUS, Caller
from metisgraph.api.metrics import STREAMS
from metisgraph.graph import COUNTERS

__all__ = ["ByMethod", "StreamPool"]


class StreamPool:
    def __init__(self, app: ASGIApp, *, per_caller: int, total: int) -> None:
        self.app = app
        self.per_caller = per_caller
        self.total = total
        self.open: Counter[str] = Counter()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        caller: Caller = (scope.get("state") or {}).get("caller", ANONYMOUS)
        name = caller.name
        if self.open[name] >= self.per_caller:
            message = (
                f"this caller holds {self.per_caller} event streams already "
                "(METISGRAPH_MAX_STREAMS_PER_CALLER); close one first"
            )
            await _refuse(scope, receive, send, 429, message, "caller")
            return
        if sum(self.open.values()) >= self.total:
            message = f"{self.total} event streams open (METISGRAPH_MAX_STREAMS); retry later"
            await _refuse(scope, receive, send, 503, message, "total")
            return
        self.open[name] += 1
        STREAMS.inc()
        try:
            await self.app(scope, receive, send)
        finally:
            STREAMS.dec()
            self.open[name] -= 1
            if not self.open[name]:
                del self.open[name]


class ByMethod:
    """``GET`` (a long-lived stream) to ``streams``, every other method to ``work``."""

    def __init__(self, streams: ASGIApp, work: ASGIApp) -> None:
        self.streams = streams
        self.work = work

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        get = scope["type"] == "http" and scope["method"] == "GET"
        await (self.streams if get else self.work)(scope, receive, send)


async def _refuse(
    scope: Scope, receive: Receive, send: Send, status: int, message: str, reason: str
) -> None:
    COUNTERS.increment("requests_refused", reason=f"streams_{reason}")
    body = {"errors": [{"message": message, "extensions": {"code": "TOO_MANY_STREAMS"}}]}
    response = JSONResponse(body, status_code=status, headers={"Retry-After": "5"})
    await response(scope, receive, send)
