"""Start-up in the background: a failure that can pass (Neo4j or the model briefly away) is
tried again until ready; one no retry mends (the store holds another model's vectors) stops
it at once, and /readyz and every request say so."""

from __future__ import annotations

import contextlib
import socket
import threading
import time
from collections.abc import Callable
from typing import Any

import pytest
from embedders import HashEmbedder

from metisgraph.graph import COUNTERS, stamp_store


class FlakyEmbedder:
    """The real embedder, whose first load fails as if its store were briefly away."""

    def __init__(self, real: Any) -> None:
        self._real = real
        self.loads = 0

    def load(self) -> None:
        self.loads += 1
        if self.loads == 1:
            raise RuntimeError("the model's volume is not mounted yet")
        self._real.load()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._real, name)


@pytest.mark.slow(20)
def test_readiness_comes_back_without_a_restart(app_settings: Any, embedder: Any) -> None:
    from starlette.testclient import TestClient

    from metisgraph.api.http.app import create_app

    settings = app_settings.model_copy(deep=True)
    settings.api.warm_up_retry_s = 0.05
    flaky = FlakyEmbedder(embedder)
    failures = COUNTERS.value("warm_up_failures")
    with TestClient(create_app(settings, embedder=flaky), base_url="http://127.0.0.1") as client:
        deadline = time.monotonic() + 120
        while (response := client.get("/readyz")).status_code != 200:
            assert time.monotonic() < deadline, response.json()
            time.sleep(0.1)
    assert flaky.loads == 2 and response.json()["error"] is None
    assert COUNTERS.value("warm_up_failures") == failures + 1


def _client_on(
    scratch_neo4j: Any, app_settings: Any, embedder: Any, retry_s: float, uri: str | None = None
) -> Any:
    """A TestClient of the app on the scratch Neo4j (at ``uri`` when given: a door before
    it), started in the background."""
    from starlette.testclient import TestClient

    from metisgraph.api.http.app import create_app
    from metisgraph.graph.settings import Neo4jSettings

    settings = app_settings.model_copy(deep=True)
    settings.neo4j = Neo4jSettings(
        uri=uri or scratch_neo4j.uri, username="neo4j", password=scratch_neo4j.password()
    )
    settings.api.warm_up_retry_s = retry_s
    return TestClient(create_app(settings, embedder=embedder), base_url="http://127.0.0.1")


def _readyz_until(client: Any, wanted: Callable[[dict[str, Any]], Any]) -> dict[str, Any]:
    deadline = time.monotonic() + 180
    while not wanted(body := client.get("/readyz").json()):
        assert time.monotonic() < deadline, body
        time.sleep(0.1)
    return body


RECALL = '{ recall(project: "p", query: "why does the worker leak") { abstained } }'


@pytest.mark.anyio
async def test_a_store_of_another_model_stops_start_up_at_once(
    scratch_neo4j: Any, scratch_store: Any, app_settings: Any
) -> None:
    await stamp_store(scratch_store, HashEmbedder("theirs").stamp())
    failures = COUNTERS.value("warm_up_failures")
    with _client_on(scratch_neo4j, app_settings, HashEmbedder("ours"), retry_s=0.02) as client:
        _readyz_until(client, lambda body: body["error"])
        time.sleep(1.0)  # retried at 0.02, 0.04, 0.08 … s: five tries, were it tried again
        said = client.get("/readyz")
        answer = client.post("/graphql", json={"query": RECALL}).json()
    body = said.json()
    assert said.status_code == 503 and body["ready"] is False and body["retrying"] is False
    assert body["error"].startswith("ModelChanged: the store's vectors were made by hash-")
    assert "metisgraph schema reembed" in body["error"]
    assert COUNTERS.value("warm_up_failures") == failures + 1
    (error,) = answer["errors"]
    assert error["message"].startswith("metisgraph cannot serve until its operator acts: Model")


class _Door:
    """A loopback port before the scratch Neo4j: shut until opened (bound, not listening, so a
    connection is refused there exactly as where no server runs), then a relay of the bytes
    both ways to the real server. Neo4j away and back without stopping and starting its JVM
    (~10-16 s of the suite, and the JVM's CPU, for the same refused connections)."""

    def __init__(self, target: int) -> None:
        self.target = target
        self.listener = socket.socket()
        self.listener.bind(("127.0.0.1", 0))
        self.uri = f"bolt://127.0.0.1:{self.listener.getsockname()[1]}"
        self.sockets: list[socket.socket] = [self.listener]

    def open(self) -> None:
        self.listener.listen()
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self.listener.accept()
            except OSError:  # shut: close() was called
                return
            server = socket.create_connection(("127.0.0.1", self.target))
            self.sockets += [client, server]
            for source, sink in ((client, server), (server, client)):
                threading.Thread(target=self._pump, args=(source, sink), daemon=True).start()

    @staticmethod
    def _pump(source: socket.socket, sink: socket.socket) -> None:
        with contextlib.suppress(OSError):
            while data := source.recv(65536):
                sink.sendall(data)
        with contextlib.suppress(OSError):
            sink.shutdown(socket.SHUT_WR)

    def close(self) -> None:
        for sock in self.sockets:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)  # wakes accept() and recv() in their threads
            sock.close()


@pytest.mark.anyio
async def test_neo4j_away_at_start_up_is_waited_for(
    scratch_neo4j: Any, scratch_store: Any, app_settings: Any
) -> None:
    door = _Door(scratch_neo4j.settings.port)
    try:
        with _client_on(scratch_neo4j, app_settings, HashEmbedder(), 0.05, door.uri) as client:
            away = _readyz_until(client, lambda body: body["error"])
            answer = client.post("/graphql", json={"query": RECALL}).json()
            door.open()
            back = _readyz_until(client, lambda body: body["ready"])
    finally:
        door.close()
    assert away["retrying"] is True and away["error"].startswith("ServiceUnavailable")
    assert answer["errors"][0]["message"].startswith("metisgraph is starting, try again shortly")
    assert back["error"] is None and back["retrying"] is False
