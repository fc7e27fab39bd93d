"""/metrics, the request id and JSON access log, and the concurrency limit's 503s."""

from __future__ import annotations

import io
import json
import logging
from collections.abc import Iterator
from typing import Any

import anyio
import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families
from starlette.types import Receive, Scope, Send

from metisgraph.api.http.limits import ConcurrencyLimit
from metisgraph.api.logs import JsonFormatter

RECORD = """
mutation($input: EpisodeInput!) { recordEpisode(input: $input) { id status } }"""
RECALL = """
query($project: String!, $query: String!) {
  recall(project: $project, query: $query, k: 2) { hits { score } }
}"""


def _samples(client: Any) -> dict[tuple[str, frozenset[tuple[str, str]]], float]:
    response = client.get("/metrics")
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/plain")
    return {
        (sample.name, frozenset(sample.labels.items())): sample.value
        for family in text_string_to_metric_families(response.text)
        for sample in family.samples
    }


def _value(samples: dict[Any, float], name: str, **labels: str) -> float:
    return samples.get((name, frozenset(labels.items())), 0.0)


def test_metrics_count_requests_operations_ingest_and_probe_the_indexes(
    client: Any, gql: Any, project: str
) -> None:
    before = _samples(client)
    episode = {"project": project, "id": "metrics-1", "summary": "The cache grew without bound"}
    assert gql(RECORD, {"input": episode})["data"]["recordEpisode"]["status"] == "written"
    assert gql(RECORD, {"input": episode})["data"]["recordEpisode"]["status"] == "unchanged"
    assert "errors" not in gql(RECALL, {"project": project, "query": "memory keeps growing"})
    assert "errors" in gql("{ recall(project: 1) { hits { score } } }")
    after = _samples(client)

    def grew(name: str, **labels: str) -> float:
        return _value(after, name, **labels) - _value(before, name, **labels)

    posts = {"route": "/graphql", "method": "POST", "status": "200"}
    assert grew("metisgraph_http_requests_total", **posts) == 4
    record = {"operation": "recordEpisode", "type": "mutation", "outcome": "ok"}
    assert grew("metisgraph_graphql_operations_total", **record) == 2
    recall = {"operation": "recall", "type": "query", "outcome": "ok"}
    assert grew("metisgraph_graphql_operations_total", **recall) == 1
    invalid = {"operation": "recall", "type": "query", "outcome": "error"}
    assert grew("metisgraph_graphql_operations_total", **invalid) == 1
    assert grew("metisgraph_graphql_operation_duration_seconds_count", operation="recall") == 2
    assert grew("metisgraph_ingest_records_total", outcome="written") == 1
    assert grew("metisgraph_ingest_records_total", outcome="unchanged") == 1
    # The readiness and the vector index probes of /readyz, and the process's memory.
    assert _value(after, "metisgraph_ready") == 1
    assert _value(after, "metisgraph_vector_index_healthy", index="episode_vectors") == 1
    assert _value(after, "process_resident_memory_bytes") > 0


def test_recall_stage_timings_are_metrics_not_part_of_the_answer(
    client: Any, gql: Any, project: str
) -> None:
    # An answer says nothing of how the process's shared parts (the question-vector cache,
    # Neo4j) behaved for it: the stage timings are the process's figures, in /metrics.
    timed = gql(RECALL.replace("hits { score }", "timings"), {"project": project, "query": "a"})
    assert "Cannot query field 'timings'" in timed["errors"][0]["message"], timed
    before = _samples(client)
    assert "errors" not in gql(RECALL, {"project": project, "query": "memory keeps growing"})
    after = _samples(client)
    name = "metisgraph_recall_stage_duration_seconds_count"
    for stage in ("embed", "channels", "expand", "total"):
        assert _value(after, name, stage=stage) - _value(before, name, stage=stage) == 1, stage
    total = "metisgraph_recall_stage_duration_seconds_sum"
    assert _value(after, total, stage="total") > _value(before, total, stage="total")


@pytest.mark.anyio
async def test_neo4j_errors_are_counted_by_code(client: Any, store: Any) -> None:
    from neo4j.exceptions import CypherSyntaxError

    from metisgraph.graph import COUNTERS

    code = "Neo.ClientError.Statement.SyntaxError"
    before = COUNTERS.value("neo4j_errors", error=code)
    with pytest.raises(CypherSyntaxError):
        await store.run_text("RETURN nonsense(", read=True)
    with pytest.raises(CypherSyntaxError):
        await store.run_text("CREATE (", {})
    assert COUNTERS.value("neo4j_errors", error=code) == before + 2
    assert _value(_samples(client), "metisgraph_neo4j_errors_total", error=code) >= 2


@pytest.fixture
def access_log() -> Iterator[io.StringIO]:
    buffer = io.StringIO()
    handler = logging.StreamHandler(buffer)
    handler.setFormatter(JsonFormatter())
    logger = logging.getLogger("metisgraph.access")
    logger.addHandler(handler)
    level = logger.level
    logger.setLevel(logging.INFO)  # setLevel, not .level: the logger caches what is enabled
    try:
        yield buffer
    finally:
        logger.removeHandler(handler)
        logger.setLevel(level)


def test_each_request_has_an_id_and_one_json_line_without_values(
    client: Any, project: str, access_log: io.StringIO
) -> None:
    secret = "hunter2-never-logged"
    given = client.post(
        "/graphql",
        params={"note": secret},
        json={"query": RECALL, "variables": {"project": project, "query": secret}},
        headers={"X-Request-Id": "caller-id.42"},
    )
    assert given.headers["x-request-id"] == "caller-id.42"
    made = client.get(f"/healthz?token={secret}", headers={"X-Request-Id": "<not an id>"})
    assert len(made.headers["x-request-id"]) == 32 and made.headers["x-request-id"].isalnum()

    lines = [json.loads(line) for line in access_log.getvalue().splitlines()]
    routes = [(line["route"], line["status"]) for line in lines]
    assert routes == [("/graphql", 200), ("/healthz", 200)]
    assert lines[0]["request_id"] == "caller-id.42" and lines[0]["operation"] == "recall"
    assert lines[1]["request_id"] == made.headers["x-request-id"]
    assert all(line["duration_ms"] >= 0 and line["level"] == "info" for line in lines)
    assert secret not in access_log.getvalue()


@pytest.mark.anyio
async def test_past_the_limit_callers_get_503_with_retry_after_and_probes_still_pass() -> None:
    release = anyio.Event()
    entered = 0

    async def slow(scope: Scope, receive: Receive, send: Send) -> None:
        nonlocal entered
        entered += 1
        if scope["path"] == "/work":
            await release.wait()
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"done"})

    limited = ConcurrencyLimit(slow, max_concurrent=1, max_queued=1, queue_wait_s=0.5)
    transport = httpx.ASGITransport(app=limited)
    answers: dict[str, httpx.Response] = {}
    async with httpx.AsyncClient(transport=transport, base_url="http://test") as http:

        async def call(name: str) -> None:
            answers[name] = await http.get("/work")

        async with anyio.create_task_group() as tasks:
            tasks.start_soon(call, "first")  # holds the one slot
            await anyio.sleep(0.05)
            tasks.start_soon(call, "second")  # waits, then gives up after 0.5 s
            await anyio.sleep(0.05)
            await call("third")  # the queue is full: refused at once
            assert (await http.get("/readyz")).status_code == 200  # probes pass the limit
            await anyio.sleep(0.7)
            release.set()
        assert (await http.get("/work")).status_code == 200  # the slot was given back
    assert answers["first"].status_code == 200 and answers["first"].text == "done"
    for name in ("second", "third"):
        assert answers[name].status_code == 503
        assert answers[name].headers["retry-after"] == "1"
        assert answers[name].json()["errors"][0]["extensions"]["code"] == "BUSY"
    assert entered == 3  # the first, the probe and the last: no refused one reached the app
    assert limited.waiting == 0


@pytest.mark.slow
def test_a_write_stops_retrying_neo4j_at_the_api_bound(
    app_settings: Any, embedder: Any, dead_port: int
) -> None:
    """A write in flight when Neo4j goes away is retried by the driver. A command retries
    for NEO4J_RETRY_S (30 s) to wait a restart out; the API's driver stops at
    METISGRAPH_NEO4J_RETRY_S, so its caller gets a 503 to retry, not a request that outlives
    the caller's own timeout (the load benchmark's ReadTimeout)."""
    import time

    from neo4j.exceptions import ServiceUnavailable
    from starlette.testclient import TestClient

    from metisgraph.api.http.app import create_app

    assert app_settings.neo4j.retry_s == 30.0 and app_settings.api.neo4j_retry_s == 5.0
    settings = app_settings.model_copy(deep=True)
    settings.neo4j = settings.neo4j.model_copy(update={"uri": f"bolt://127.0.0.1:{dead_port}"})
    settings.api = settings.api.model_copy(update={"neo4j_retry_s": 1.0})
    app = create_app(settings, embedder=embedder, wait_ready=False)
    with TestClient(app, base_url="http://127.0.0.1") as client:
        store = client.app_state["services"].store
        started = time.monotonic()
        with pytest.raises(ServiceUnavailable):
            client.portal.call(store.run_text, "CREATE (:RetryProbe)")  # type: ignore[union-attr]
        elapsed = time.monotonic() - started
    # The driver's first retry waits about a second, so 1 s ends it after one retry; the
    # command's 30 s would still be retrying at the bound.
    assert 0.5 < elapsed < 15.0, elapsed


def test_neo4j_away_is_a_clear_503_with_retry_after(
    app_settings: Any, embedder: Any, project: str, dead_port: int
) -> None:
    """Neo4j gone after start-up (the driver pointed at a port where nothing listens, so the
    driver's own errors arise): the caller gets 503, Retry-After and a message naming it."""
    from starlette.testclient import TestClient

    from metisgraph.api.http.app import create_app
    from metisgraph.graph import open_driver

    app = create_app(app_settings, embedder=embedder, wait_ready=True)
    with TestClient(app, base_url="http://127.0.0.1") as client:
        services = client.app_state["services"]
        working = services.store.driver
        services.store.driver = open_driver(f"bolt://127.0.0.1:{dead_port}", "neo4j", "x")
        try:
            episode = {"project": project, "summary": "The cache grew without bound"}
            for query, variables in (
                (RECORD, {"input": episode}),
                (RECALL, {"project": project, "query": "memory keeps growing"}),
            ):
                response = client.post("/graphql", json={"query": query, "variables": variables})
                assert response.status_code == 503, response.text
                assert response.headers["retry-after"] == "5"
                error = response.json()["errors"][0]
                assert error["extensions"]["code"] == "UNAVAILABLE"
                assert "Neo4j" in error["message"] and "unavailable" in error["message"]
        finally:
            away, services.store.driver = services.store.driver, working
            anyio.run(away.close)
        # Neo4j back: the same service answers again, nothing to restart.
        response = client.post("/graphql", json={"query": RECORD, "variables": {"input": episode}})
        assert response.status_code == 200 and "errors" not in response.json()


def test_a_busy_store_is_503_store_busy_never_unavailable(
    client: Any, neo4j_settings: Any, project: str
) -> None:
    """Issue 30 item 7: Neo4j up, every pooled connection held (a pool of one, held by an
    open transaction). The request waits for a connection, then is told 503 STORE_BUSY with
    Retry-After 1: not UNAVAILABLE (Neo4j is up) and not an internal error (it was)."""
    from metisgraph.graph import open_driver

    services = client.app_state["services"]
    secret = neo4j_settings.password.get_secret_value()
    small = open_driver(
        neo4j_settings.uri, neo4j_settings.username, secret, pool_size=1, acquisition_timeout_s=0.5
    )

    async def hold() -> Any:
        session = small.session(database=services.store.database)
        tx = await session.begin_transaction()
        await (await tx.run("RETURN 1")).consume()
        return session, tx

    async def release() -> None:
        await tx.rollback()
        await session.close()
        await small.close()

    session, tx = client.portal.call(hold)
    working, services.store.driver = services.store.driver, small
    variables = {"project": project, "query": "the cache grows without bound"}
    try:
        response = client.post("/graphql", json={"query": RECALL, "variables": variables})
    finally:
        services.store.driver = working
        client.portal.call(release)
    assert response.status_code == 503, response.text
    assert response.headers["retry-after"] == "1"
    error = response.json()["errors"][0]
    assert error["extensions"]["code"] == "STORE_BUSY", error
    assert "busy" in error["message"] and "unavailable" not in error["message"]
    # The pool free again: the same question is answered.
    response = client.post("/graphql", json={"query": RECALL, "variables": variables})
    assert response.status_code == 200 and "errors" not in response.json(), response.text


def test_transient_refusals_are_busy_and_a_database_not_available_is_away() -> None:
    """The driver's own errors as it makes them from Neo4j's failure codes: a transient
    refusal that outlasted the retries (a deadlock) means busy, retry; the database
    starting or stopping means away, as a closed port does; other errors are neither."""
    from neo4j.exceptions import ClientError, Neo4jError, ServiceUnavailable

    from metisgraph.api.graphql.errors import store_state

    def failure(code: str) -> Neo4jError:
        return Neo4jError._hydrate_neo4j(code=code, message="m")  # the driver's own mapping

    assert store_state(failure("Neo.TransientError.Transaction.DeadlockDetected")) == "busy"
    assert store_state(failure("Neo.TransientError.General.MemoryPoolOutOfMemoryError")) == "busy"
    assert store_state(failure("Neo.TransientError.General.DatabaseUnavailable")) == "away"
    assert store_state(ServiceUnavailable("gone")) == "away"
    syntax = failure("Neo.ClientError.Statement.SyntaxError")
    assert isinstance(syntax, ClientError) and store_state(syntax) is None
    assert store_state(ValueError("x")) is None and store_state(None) is None


def test_the_pool_outnumbers_what_the_request_slots_can_hold(app_settings: Any) -> None:
    """Each slot may hold a recall's three connections: the pool is sized from the slots, so
    raising METISGRAPH_MAX_CONCURRENT_REQUESTS does not make a healthy store look busy."""
    from metisgraph.api.services import connect

    settings = app_settings.model_copy(deep=True)
    settings.api = settings.api.model_copy(update={"max_concurrent_requests": 40})
    driver, _ = connect(settings)
    try:
        assert driver._pool.pool_config.max_connection_pool_size >= 3 * 40
    finally:
        anyio.run(driver.close)


def test_driver_lines_hold_no_query_parameters(
    neo4j_settings: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Security (no query parameters or values in logs), even at METISGRAPH_LOG_LEVEL=DEBUG:
    the Neo4j driver's DEBUG lines quote each statement with its parameters, and its retry
    warning quotes the error, whose message can hold a value. Neither reaches the log; the
    warning stays, naming the error by class and code. Our own DEBUG lines still come."""
    import sys

    from neo4j import GraphDatabase
    from neo4j.exceptions import Neo4jError

    from metisgraph.api.logs import configure_logging

    secret = "hunter2-param-never-logged"
    out = io.StringIO()
    root, driver_log = logging.getLogger(), logging.getLogger("neo4j")
    kept = (root.handlers[:], root.level, driver_log.level)
    monkeypatch.setattr(sys, "stderr", out)  # configure_logging's handler writes there
    try:
        configure_logging("json", "DEBUG")
        auth = (neo4j_settings.username, neo4j_settings.password.get_secret_value())
        with GraphDatabase.driver(neo4j_settings.uri, auth=auth) as driver:
            driver.execute_query("RETURN $x AS x", x=secret)
        failure = Neo4jError._hydrate_neo4j(
            code="Neo.ClientError.Schema.ConstraintValidationFailed",
            message=f"Node(1) already exists with property `id` = '{secret}'",
        )
        logging.getLogger("neo4j.session").warning(
            "Transaction failed and will be retried in %ss (%s)", 1.0, failure
        )
        logging.getLogger("metisgraph").debug("our own debug line")
    finally:
        root.handlers[:] = kept[0]
        root.setLevel(kept[1])
        driver_log.setLevel(kept[2])
    text = out.getvalue()
    assert secret not in text
    assert "will be retried" in text and "ConstraintValidationFailed" in text, text[-2000:]
    assert "our own debug line" in text
