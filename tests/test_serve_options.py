"""How `metisgraph serve` runs uvicorn: a kept-alive connection outlives our Retry-After, and
a stop ends an event stream still open."""

from __future__ import annotations

import asyncio
import socket
import threading
import time
from typing import Any

import pytest
import uvicorn

from metisgraph.api.cli.main import serve_options
from metisgraph.api.graphql.errors import RETRY_AFTER_S
from metisgraph.api.settings import ApiSettings

REQUEST = b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"


async def _hello(scope: dict[str, Any], receive: Any, send: Any) -> None:
    if scope["type"] != "http":
        return
    headers = [(b"content-length", b"5")]
    await send({"type": "http.response.start", "status": 200, "headers": headers})
    await send({"type": "http.response.body", "body": b"hello"})


def _answer(connection: socket.socket) -> bytes:
    connection.sendall(REQUEST)
    data = b""
    while not data.endswith(b"hello"):
        chunk = connection.recv(4096)
        if not chunk:  # the server closed the connection
            break
        data += chunk
    return data


def _served(app: Any, **settings: Any) -> tuple[uvicorn.Server, threading.Thread, int]:
    """``app`` served as `metisgraph serve` serves (its options from ``settings``), in a
    thread, on a free loopback port: once it has started."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    options = serve_options(ApiSettings(host="127.0.0.1", port=port, **settings))
    server = uvicorn.Server(uvicorn.Config(app, **options, lifespan="off"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started and time.monotonic() < deadline:
        time.sleep(0.05)
    return server, thread, port


@pytest.mark.slow
def test_a_caller_that_waits_out_retry_after_finds_its_connection_open() -> None:
    # A caller told "Retry-After: 5" (Neo4j away) waits 5 s and sends again on the
    # connection it kept. uvicorn's default closed idle connections after 5 s, so the second
    # request raced the close: the load benchmark's ReadErrors while Neo4j was away.
    assert serve_options(ApiSettings())["timeout_keep_alive"] > RETRY_AFTER_S
    server, thread, port = _served(_hello)
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=10) as connection:
            assert _answer(connection).startswith(b"HTTP/1.1 200")
            time.sleep(RETRY_AFTER_S + 1)
            assert _answer(connection).startswith(b"HTTP/1.1 200")
    finally:
        server.should_exit = True
        thread.join(timeout=10)


async def _endless(scope: dict[str, Any], receive: Any, send: Any) -> None:
    """An event stream that never ends by itself (as GET /mcp's)."""
    if scope["type"] != "http":
        return
    headers = [(b"content-type", b"text/event-stream")]
    await send({"type": "http.response.start", "status": 200, "headers": headers})
    while True:
        await send({"type": "http.response.body", "body": b": idle\n\n", "more_body": True})
        await asyncio.sleep(0.2)


@pytest.mark.slow
def test_a_stopping_server_ends_an_open_event_stream_within_its_grace() -> None:
    # uvicorn waits for responses under way before it stops, for ever by default: a caller's
    # open event stream kept `metisgraph serve` (and its embedded Neo4j) up after a SIGTERM.
    server, thread, port = _served(_endless, shutdown_grace_s=0.5)
    with socket.create_connection(("127.0.0.1", port), timeout=10) as connection:
        connection.sendall(REQUEST)
        assert connection.recv(4096).startswith(b"HTTP/1.1 200")  # the stream is open
        server.should_exit = True
        thread.join(timeout=20)
        assert not thread.is_alive(), "the server still waits for the open stream"
