"""Which names the service answers to: a Host header off the allow-list is refused.

A browser page on any site can make the browser call ``http://127.0.0.1:8000`` under a
name the page's owner controls (DNS rebinding): the request then carries that name in
``Host``. Without tokens on loopback it would reach full read, write and forget; checking
``Host`` against the names we serve ends it. Health probes stay open (load balancers and
orchestrators probe by address).
"""

from __future__ import annotations

from collections.abc import Iterable

from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Receive, Scope, Send

from metisgraph.graph import COUNTERS

__all__ = ["HostCheck", "host_allowed", "host_name"]

OPEN_PATHS = frozenset({"/healthz", "/readyz", "/metrics"})


def host_name(header: str) -> str:
    """The name in a Host header, without its port (``[::1]:8000`` → ``::1``), lower case."""
    header = header.strip().lower()
    if header.startswith("["):
        return header[1 : header.find("]")] if "]" in header else header
    return header.rsplit(":", 1)[0] if header.count(":") == 1 else header


def host_allowed(name: str, allowed: Iterable[str]) -> bool:
    """``name`` is allowed: listed, or under a listed ``*.domain``, or ``*`` is listed."""
    for pattern in allowed:
        if pattern == "*" or name == pattern:
            return True
        if pattern.startswith("*.") and name.endswith(pattern[1:]):
            return True
    return False


class HostCheck:
    """Refuse (400) HTTP and websocket requests whose Host is not an allowed name."""

    def __init__(self, app: ASGIApp, allowed: Iterable[str]) -> None:
        self.app = app
        self.allowed = tuple(a.strip().lower().strip("[]") for a in allowed if a.strip())

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket") or scope["path"] in OPEN_PATHS:
            await self.app(scope, receive, send)
            return
        headers = dict(scope.get("headers") or [])
        name = host_name(headers.get(b"host", b"").decode("latin-1"))
        if host_allowed(name, self.allowed):
            await self.app(scope, receive, send)
            return
        COUNTERS.increment("requests_refused", reason="host")
        message = f"Host {name!r} is not a name this service answers to (METISGRAPH_ALLOWED_HOSTS)"
        response = JSONResponse({"errors": [{"message": message}]}, status_code=400)
        await response(scope, receive, send)
