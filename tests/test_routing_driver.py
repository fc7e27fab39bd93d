"""The service through a routing (``neo4j://``) URI, as it runs against a cluster.

The embedded server is a single instance; asked for a routing table it names itself as
writer, reader and router. That is enough to prove the routing driver path end to end:
reads go out with READ access (a cluster's secondaries would take them), writes with WRITE.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from neo4j import AsyncNeo4jDriver
from starlette.testclient import TestClient

from metisgraph.api.http.app import create_app
from metisgraph.graph.settings import Neo4jSettings

RECORD = "mutation($input: EpisodeInput!) { recordEpisode(input: $input) { id status } }"
RECALL = """query($project: String!, $query: String!, $k: Int!) {
  recall(project: $project, query: $query, k: $k) { hits { episode { id } } } }"""


@pytest.fixture(scope="module")
def routed(
    neo4j_settings: Neo4jSettings, app_settings: Any, embedder: Any
) -> Iterator[tuple[Any, TestClient]]:
    assert neo4j_settings.uri is not None and neo4j_settings.uri.startswith("bolt://")
    routing = neo4j_settings.model_copy(
        update={"uri": "neo4j://" + neo4j_settings.uri.removeprefix("bolt://")}
    )
    settings = app_settings.model_copy(update={"neo4j": routing})
    app = create_app(settings, embedder=embedder, wait_ready=True)
    with TestClient(app, base_url="http://127.0.0.1") as client:
        yield app, client


def test_a_routing_uri_records_and_recalls(routed: tuple[Any, TestClient], project: str) -> None:
    _, client = routed
    assert isinstance(client.app_state["services"].driver, AsyncNeo4jDriver)  # the routing driver

    def post(query: str, variables: dict[str, Any]) -> dict[str, Any]:
        response = client.post("/graphql", json={"query": query, "variables": variables})
        assert response.status_code == 200, response.text
        body: dict[str, Any] = response.json()
        assert "errors" not in body, body
        return body["data"]

    recorded = post(
        RECORD,
        {
            "input": {
                "project": project,
                "id": "tz",
                "outcome": "success",
                "summary": "A report test failed at midnight: it compared the local date with UTC",
            }
        },
    )["recordEpisode"]
    assert recorded["status"] == "written", recorded
    found = post(
        RECALL, {"project": project, "query": "date comparison breaks at midnight", "k": 3}
    )["recall"]
    assert [h["episode"]["id"] for h in found["hits"]][:1] == ["tz"]


def test_the_routing_table_names_this_server_for_reads_and_writes(
    routed: tuple[Any, TestClient],
) -> None:
    _, client = routed
    assert client.get("/readyz").status_code == 200
    table = client.app_state["services"].driver._pool.routing_tables  # what the driver routed by
    (entry,) = [t for t in table.values() if t.readers]
    assert entry.readers and entry.writers and entry.routers
