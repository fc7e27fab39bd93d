"""A request body read whole, bounded in size and in time, before the work behind it starts.

A declared Content-Length over the limit is refused at once (413); a streamed body is counted
as it arrives and refused when it passes the limit. The whole body must arrive within
``deadline_s``: a caller that declares 100,000 bytes and sends one every two seconds is
answered 408 when the deadline passes, and never holds a request slot while it trickles (the
slots are taken behind this, on a body already read). The app behind is handed the body as
one message; what the client sends after it (``http.disconnect``) still reaches the app.
"""

from __future__ import annotations

import anyio
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from metisgraph.graph import COUNTERS

__all__ = ["BodyRead"]


class _TooLarge(Exception):
    pass


class _Gone(Exception):
    pass


class BodyRead:
    def __init__(self, app: ASGIApp, max_bytes: int, deadline_s: float) -> None:
        self.app = app
        self.max_bytes = max_bytes
        self.deadline_s = deadline_s

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = dict(scope.get("headers") or [])
        declared = headers.get(b"content-length", b"").decode("latin-1")
        if declared.isdigit() and int(declared) > self.max_bytes:
            await self._too_large(scope, receive, send)
            return
        body: bytes | None = None
        try:
            with anyio.move_on_after(self.deadline_s):
                body = await self._read(receive)
        except _TooLarge:
            await self._too_large(scope, receive, send)
            return
        except _Gone:  # the client went away mid-body: nobody to answer
            return
        if body is None:
            COUNTERS.increment("requests_refused", reason="slow_body")
            message = (
                f"request body not received within {self.deadline_s:g} s "
                "(METISGRAPH_BODY_TIMEOUT_S)"
            )
            response = JSONResponse(
                {"errors": [{"message": message, "extensions": {"code": "BODY_TIMEOUT"}}]},
                status_code=408,
                headers={"Connection": "close"},
            )
            await response(scope, receive, send)
            return
        await self.app(scope, _replay(body, receive), send)

    async def _read(self, receive: Receive) -> bytes:
        chunks: list[bytes] = []
        seen = 0
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                raise _Gone
            chunk = message.get("body", b"")
            seen += len(chunk)
            if seen > self.max_bytes:
                raise _TooLarge
            chunks.append(chunk)
            if not message.get("more_body", False):
                return b"".join(chunks)

    async def _too_large(self, scope: Scope, receive: Receive, send: Send) -> None:
        message = f"request body over {self.max_bytes:,} bytes (METISGRAPH_MAX_BODY_BYTES)"
        response = JSONResponse(
            {"errors": [{"message": message}]}, status_code=413, headers={"Connection": "close"}
        )
        await response(scope, receive, send)


def _replay(body: bytes, receive: Receive) -> Receive:
    """The body as one message, then whatever the client sends next."""
    given = False

    async def replayed() -> Message:
        nonlocal given
        if not given:
            given = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return replayed
