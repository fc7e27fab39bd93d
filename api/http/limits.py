"""A stated concurrency limit: so many requests served at once, so many waiting, then 503.

The slots are for work: the app puts the limit behind authentication and behind the body's
read (api/http/bodies.py), around GraphQL, the MCP tool calls and the export — one set of
slots shared by all three (``around``). A caller that is not yet known, a body still on its
way or a long-lived event stream (api/http/streams.py) never holds one.

Past the limit a request waits for a slot, in arrival order, at most ``queue_wait_s``; when
``max_queued`` are waiting already, or the wait runs out, it is answered at once with 503 and
``Retry-After``, so that a burst is refused clearly instead of piling up until every caller
times out. The probes (``/healthz``, ``/readyz``, ``/metrics``) are never held back.
"""

from __future__ import annotations

import asyncio

import anyio
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Receive, Scope, Send

from metisgraph.api.metrics import IN_FLIGHT, OVERLOAD, QUEUED
from metisgraph.api.settings import ApiSettings

__all__ = ["ConcurrencyLimit"]

_PROBES = frozenset({"/healthz", "/readyz", "/metrics"})


class ConcurrencyLimit:
    def __init__(
        self, app: ASGIApp, *, max_concurrent: int, max_queued: int, queue_wait_s: float
    ) -> None:
        self.app = app
        self.max_concurrent = max_concurrent
        self.max_queued = max_queued
        self.queue_wait_s = queue_wait_s
        self.waiting = 0
        self._slots: asyncio.Semaphore | None = None  # made in the event loop, on first use

    @classmethod
    def settings(cls, api: ApiSettings) -> ConcurrencyLimit:
        """The service's slots, for the apps handed to ``around``."""
        return cls(
            _nothing,
            max_concurrent=api.max_concurrent_requests,
            max_queued=api.max_queued_requests,
            queue_wait_s=api.queue_wait_s,
        )

    def around(self, app: ASGIApp) -> ASGIApp:
        """Another app served within these same slots."""

        async def limited(scope: Scope, receive: Receive, send: Send) -> None:
            await self._serve(app, scope, receive, send)

        return limited

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        await self._serve(self.app, scope, receive, send)

    async def _serve(self, app: ASGIApp, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["path"] in _PROBES:
            await app(scope, receive, send)
            return
        if self._slots is None:
            self._slots = asyncio.Semaphore(self.max_concurrent)
        slots = self._slots
        if slots.locked():
            if self.waiting >= self.max_queued:
                await self._refuse("queue_full", scope, receive, send)
                return
            self.waiting += 1
            QUEUED.inc()
            acquired = False
            try:
                with anyio.move_on_after(self.queue_wait_s):
                    await slots.acquire()
                    acquired = True
            finally:
                self.waiting -= 1
                QUEUED.dec()
            if not acquired:
                await self._refuse("waited_too_long", scope, receive, send)
                return
        else:
            await slots.acquire()
        IN_FLIGHT.inc()
        try:
            await app(scope, receive, send)
        finally:
            IN_FLIGHT.dec()
            slots.release()

    async def _refuse(self, reason: str, scope: Scope, receive: Receive, send: Send) -> None:
        OVERLOAD.labels(reason).inc()
        message = (
            f"busy: {self.max_concurrent} requests served at once and {self.max_queued} "
            "waiting (METISGRAPH_MAX_CONCURRENT_REQUESTS, METISGRAPH_MAX_QUEUED_REQUESTS); "
            "retry shortly"
        )
        response = JSONResponse(
            {"errors": [{"message": message, "extensions": {"code": "BUSY"}}]},
            status_code=503,
            headers={"Retry-After": "1"},
        )
        await response(scope, receive, send)


async def _nothing(scope: Scope, receive: Receive, send: Send) -> None:
    raise RuntimeError("ConcurrencyLimit.settings: serve apps through around()")
