"""No caller can take the request slots from the others (issue 30, item 1): a slot is taken
only for authenticated work on a body already read; event streams (GET /mcp) have a bounded
pool of their own; a body that trickles in is cut off with a 408."""

from __future__ import annotations

import time
from typing import Any
from urllib.parse import urlsplit

import anyio
import httpx
import pytest

STREAMS = 16  # as many as the default request slots (METISGRAPH_MAX_CONCURRENT_REQUESTS)
PROJECTS = "{ projects { name } }"


def _whole_answer(received: bytes) -> bool:
    """The answer's head and as much body as it declares (they may come in two packets)."""
    head, found, body = received.partition(b"\r\n\r\n")
    if not found:
        return False
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            return len(body) >= int(value.strip())
    return True


async def _slow_body(url: str, token: str, answer: list[bytes]) -> None:
    """POST /graphql declaring 100,000 bytes and sending one every 2 s, until answered."""
    parts = urlsplit(url)
    async with await anyio.connect_tcp(parts.hostname or "", parts.port or 80) as sock:
        head = (
            f"POST /graphql HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {token}\r\n"
            "Content-Type: application/json\r\nContent-Length: 100000\r\n\r\n{"
        )
        await sock.send(head.encode())
        received = b""
        with anyio.move_on_after(60):
            while not _whole_answer(received):
                with anyio.move_on_after(2):
                    try:
                        received += await sock.receive()
                    except (anyio.EndOfStream, anyio.BrokenResourceError):
                        break
                    continue
                try:
                    await sock.send(b" ")
                except (anyio.BrokenResourceError, OSError):
                    break
        answer.append(received)


async def _hold_stream(
    http: httpx.AsyncClient, url: str, token: str, statuses: list[int], done: anyio.Event
) -> None:
    headers = {"Authorization": f"Bearer {token}", "Accept": "text/event-stream"}
    async with http.stream("GET", f"{url}/mcp", headers=headers) as response:
        statuses.append(response.status_code)
        if response.status_code == 200:
            await done.wait()  # idle, open, until the test is over


@pytest.mark.slow
@pytest.mark.anyio
async def test_idle_streams_and_a_slow_body_do_not_starve_another_tenant(
    app_settings: Any, embedder: Any, serve: Any, store: Any, project: str
) -> None:
    from metisgraph.api.http.app import create_app
    from metisgraph.api.keys import create_key

    settings = app_settings.model_copy(deep=True)
    settings.api.require_token = True
    settings.api.body_timeout_s = 4.0
    assert settings.api.max_concurrent_requests == STREAMS and settings.api.queue_wait_s == 10
    reader = (await create_key(store, [f"{project}-b"], ["read"], actor="test")).token
    tenant = (await create_key(store, [project], ["read"], actor="test")).token
    with serve(create_app(settings, embedder=embedder, wait_ready=True)) as url:
        limits = httpx.Limits(max_connections=STREAMS + 4)
        async with httpx.AsyncClient(timeout=60, limits=limits) as http:
            done = anyio.Event()
            statuses: list[int] = []
            slow: list[bytes] = []
            async with anyio.create_task_group() as tasks:
                for _ in range(STREAMS):
                    tasks.start_soon(_hold_stream, http, url, reader, statuses, done)
                tasks.start_soon(_slow_body, url, reader, slow)
                with anyio.fail_after(30):
                    while len(statuses) < STREAMS:
                        await anyio.sleep(0.05)
                await anyio.sleep(0.5)  # the slow body is on its way
                started = time.monotonic()
                answer = await http.post(
                    f"{url}/graphql",
                    json={"query": PROJECTS},
                    headers={"Authorization": f"Bearer {tenant}"},
                )
                elapsed = time.monotonic() - started
                metrics = (await http.get(f"{url}/metrics")).text
                with anyio.fail_after(30):
                    while not slow:
                        await anyio.sleep(0.1)
                done.set()
    # The other tenant is answered, well inside the 10 s a request waits for a slot.
    assert answer.status_code == 200, answer.text
    assert "errors" not in answer.json() and elapsed < 5.0, (elapsed, answer.text)
    # The streams have their own pool: the caller's share open, the rest refused at once.
    per_caller = settings.api.max_streams_per_caller
    assert sorted(statuses) == [200] * per_caller + [429] * (STREAMS - per_caller), statuses
    assert f"metisgraph_event_streams_open {float(per_caller)}" in metrics
    # The trickling body is cut off with a clear 408 naming the setting.
    assert slow[0].startswith(b"HTTP/1.1 408"), slow
    assert b"METISGRAPH_BODY_TIMEOUT_S" in slow[0] or b"Content-Length" in slow[0]
