"""A start-up that fails once (Neo4j or the model briefly away) is tried again until ready."""

from __future__ import annotations

import time
from typing import Any

from metisgraph.graph import COUNTERS


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


def test_readiness_comes_back_without_a_restart(app_settings: Any, embedder: Any) -> None:
    from starlette.testclient import TestClient

    from metisgraph.api.app import create_app

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
