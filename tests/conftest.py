"""Fixtures shared by every suite: ../shared, the real Neo4j, the real model, the app."""

from __future__ import annotations

import os
import shutil
import socket
import uuid
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import settings as hypothesis_settings
from jvm_cache import SharedAotNeo4j
from neo4j_homes import EarlyStart, neo4j_test_home, scratch_home
from scheduling import UNITS_KEY, group_and_order, make_scheduler, units_file
from shared_ingest import ingest_once

from metisgraph.graph.embedded import EmbeddedNeo4j
from metisgraph.graph.settings import EmbeddedNeo4jSettings, Neo4jSettings

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = Path(__file__).resolve().parent / "fixtures"
SESSION = uuid.uuid4().hex[:8]

# Property tests check what the code does, not how fast: hypothesis' default deadline (200 ms a
# case) failed a run on a busy machine when a first case took 413 ms (a cold import), then
# 0.08 ms. Speed is measured by the benchmarks.
hypothesis_settings.register_profile("metisgraph", deadline=None)
hypothesis_settings.load_profile("metisgraph")


def _worker() -> int:
    """This process's number among pytest-xdist's workers (0 when the run is not split)."""
    name = os.environ.get("PYTEST_XDIST_WORKER", "gw0")
    return int(name[2:]) if name.startswith("gw") and name[2:].isdigit() else 0


def _shared_root() -> Path:
    return Path(os.environ.get("METISGRAPH_SHARED_DIR", ROOT.parent / "shared"))


@pytest.hookimpl(tryfirst=True)  # before xdist reads the groups set here
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Markers that match what a test uses: ``shared`` on every test that reads ../shared,
    ``slow`` and ``own_server`` on every test that starts a Neo4j of its own (``make test``
    leaves ``shared``, ``own_server``, ``browser``, ``sandbox`` and ``long`` to ``make test-long``;
    ``make test-fast`` leaves ``slow`` out too).
    ``heavy`` tests run only when asked for (METISGRAPH_HEAVY=1): minutes each. Then the
    workers' units, costliest first (tests/scheduling.py)."""
    heavy = os.environ.get("METISGRAPH_HEAVY") == "1"
    skip = pytest.mark.skip(reason="heavy: run with METISGRAPH_HEAVY=1")
    for item in items:
        used = set(getattr(item, "fixturenames", ()))
        if "shared_dir" in used and "shared" not in item.keywords:
            item.add_marker(pytest.mark.shared)
        if "scratch_neo4j" in used and "slow" not in item.keywords:
            item.add_marker(pytest.mark.slow)
        if "scratch_neo4j" in used and "own_server" not in item.keywords:
            item.add_marker(pytest.mark.own_server)
        if "heavy" in item.keywords and not heavy:
            item.add_marker(skip)
    unbuilt = () if _shared_root().is_dir() else ("shared_run", "shared_trajectories")
    group_and_order(config, items, unbuilt)


@pytest.hookimpl(tryfirst=True, optionalhook=True)  # a hook of pytest-xdist's, when present
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """``--dist loadgroup`` (the Makefile's): whole modules, those sharing a costly session
    fixture on one worker, the costliest first."""
    if config.getoption("dist", "no") != "loadgroup":
        return None
    return make_scheduler(config, log)


@pytest.hookimpl(optionalhook=True)  # pytest-xdist's, in the controller, for each worker
def pytest_configure_node(node: Any) -> None:
    """Tell each worker where to write its modules' units (the ids cannot carry them)."""
    if node.config.getoption("dist", "no") == "loadgroup":
        node.workerinput[UNITS_KEY] = str(units_file(node.config))


@pytest.fixture(scope="session")
def shared_dir() -> Path:
    """../shared beside the project (evaluation data, trajectories); skip when absent."""
    root = _shared_root()
    if not root.is_dir():
        pytest.skip(f"{root} is absent: tests that read shared data are skipped")
    return root


@pytest.fixture(scope="session")
def fixtures_dir() -> Path:
    return FIXTURES


# --- the real Neo4j and the real model ----------------------------------------------


# A test server lives minutes: the JIT's optimising tier cost more CPU than it saved. Side
# by side (4 recall/lineage/snippet modules, a fresh server each, load 2.8–5.1): JVM CPU
# 118–133 s → 84–91 s, wall 154–177 s → 124–130 s with the first tier only.
_SHORT_LIVED_JVM = ("-XX:TieredStopAtLevel=1",)
# The JVM of every test server (the workers' and the scratch one): the same options, so one
# AOT cache of the machine's serves them all (tests/jvm_cache.py).
_TEST_JVM: dict[str, Any] = {
    "heap": "512m",
    "heap_max": "1g",
    "jvm_options": list(_SHORT_LIVED_JVM),
}


def _test_server() -> tuple[EmbeddedNeo4j, bool]:
    """This worker's test Neo4j (not started yet) and whether its store is in memory. It
    records the machine's AOT cache when none is there only if this session stops it."""
    port = int(os.environ.get("METISGRAPH_TEST_NEO4J_PORT", "7688"))
    worker = _worker()
    port += 1000 * worker  # each parallel worker has a Neo4j of its own: no test sees another's
    home, in_memory = neo4j_test_home(ROOT, worker, port)
    settings = EmbeddedNeo4jSettings(home=home, port=port, pagecache="256m", **_TEST_JVM)
    kept = bool(os.environ.get("METISGRAPH_TEST_KEEP_NEO4J"))
    return SharedAotNeo4j(settings, record=not kept), in_memory


_EARLY = EarlyStart()


def _needs(session: pytest.Session, fixture: str) -> bool:
    return any(fixture in getattr(item, "fixturenames", ()) for item in session.items)


@pytest.hookimpl(trylast=True)
def pytest_collection_finish(session: pytest.Session) -> None:
    """This worker's test Neo4j starts as soon as its tests are known to need it."""
    if session.config.option.collectonly or Neo4jSettings().external:
        return
    if _needs(session, "neo4j_settings"):
        _EARLY.begin(*_test_server())


def pytest_sessionfinish(session: pytest.Session) -> None:
    """An early start no test took (the tests that needed it ran elsewhere): stopped."""
    _stop(_EARLY.take())


def _stop(started: bool | None) -> None:
    server, in_memory = _EARLY.server, _EARLY.in_memory
    if started and server is not None and not os.environ.get("METISGRAPH_TEST_KEEP_NEO4J"):
        server.stop()
        if in_memory:  # memory is not a place to leave a store behind
            shutil.rmtree(server.home, ignore_errors=True)


@pytest.fixture(scope="session")
def neo4j_settings(request: pytest.FixtureRequest) -> Iterator[Neo4jSettings]:
    """NEO4J_URI when set (nothing is started); else an embedded Neo4j just for the tests,
    started early (``pytest_collection_finish``): while its JVM starts, the model loads
    when this session needs it (sequential before: ~10-15 s of a worker's start)."""
    configured = Neo4jSettings()
    if configured.external:
        yield configured
        return
    if _EARLY.server is None:
        _EARLY.begin(*_test_server())
    if _needs(request.session, "embedder"):
        request.getfixturevalue("embedder")
    started = _EARLY.take()
    embedded = _EARLY.server
    assert embedded is not None
    try:
        yield Neo4jSettings(uri=embedded.uri, username="neo4j", password=embedded.password())
    finally:
        _stop(started)


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


@pytest.fixture
def dead_port() -> int:
    """A port on 127.0.0.1 where nothing listens (Neo4j away)."""
    return _free_port()


@pytest.fixture(scope="session")
def scratch_neo4j(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EmbeddedNeo4j]:
    """A Neo4j of its own for tests that act on a whole store (re-embedding it, killing the
    server): started on first use, on a free port, stopped at the end of the session."""
    if Neo4jSettings().external:
        pytest.skip("needs an embedded Neo4j of its own (NEO4J_URI is set)")
    home, in_memory = scratch_home(tmp_path_factory)
    embedded = SharedAotNeo4j(
        EmbeddedNeo4jSettings(home=home, port=_free_port(), pagecache="128m", **_TEST_JVM)
    )
    embedded.start()
    try:
        yield embedded
    finally:
        embedded.stop()
        if in_memory:
            shutil.rmtree(home, ignore_errors=True)


@pytest.fixture
async def scratch_store(scratch_neo4j: EmbeddedNeo4j) -> AsyncIterator[Any]:
    """A GraphStore on the scratch Neo4j, emptied: no node, no index, no constraint."""
    from metisgraph.graph.store import GraphStore, open_driver

    driver = open_driver(scratch_neo4j.uri, "neo4j", scratch_neo4j.password())
    graph = GraphStore(driver)
    await graph.run_text("MATCH (n) DETACH DELETE n")
    for row in await graph.run_text("SHOW CONSTRAINTS YIELD name RETURN name", read=True):
        await graph.run_text(f"DROP CONSTRAINT `{row['name']}`")
    for row in await graph.run_text(
        "SHOW INDEXES YIELD name, type WHERE type <> 'LOOKUP' RETURN name", read=True
    ):
        await graph.run_text(f"DROP INDEX `{row['name']}`")
    try:
        yield graph
    finally:
        await driver.close()


@pytest.fixture(scope="session")
def embedder() -> Iterator[Any]:
    """The real embedding model, loaded once per session.

    A command a test runs in this process (typer's CliRunner, ``cli_in_process``) takes
    this model when it asks for the same one (same settings): the same vectors without a
    second load (a few seconds each time). Its own process (``metisgraph …``) still loads
    its own: one such test per command group proves the entry point.
    """
    from metisgraph.api import services
    from metisgraph.ingest.embeddings import Embedder

    model = Embedder()
    model.load()
    prepare = services.prepare_services

    def with_this_model(settings: Any, embedder: Any = None, **options: Any) -> Any:
        if embedder is None and settings.embedding == model.settings:
            embedder = model
        return prepare(settings, embedder, **options)

    services.prepare_services = with_this_model  # what open_services, every command's, calls
    try:
        yield model
    finally:
        services.prepare_services = prepare


@pytest.fixture(scope="session")
def cli_in_process(neo4j_settings: Neo4jSettings, embedder: Any) -> Any:
    """``metisgraph ARGS`` run in this process on the test Neo4j, with the session's model:
    returns what ``subprocess.run`` would (returncode, stdout, stderr). In a thread of its
    own: the commands run their own event loop (``asyncio.run``), an async test has one."""
    import subprocess
    from concurrent.futures import ThreadPoolExecutor

    from typer.testing import CliRunner

    from metisgraph.api.cli import app

    assert neo4j_settings.uri
    secret = neo4j_settings.password.get_secret_value() if neo4j_settings.password else ""
    base = {"NEO4J_URI": neo4j_settings.uri, "NEO4J_USERNAME": neo4j_settings.username,
            "NEO4J_PASSWORD": secret}  # fmt: skip

    def run(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
        runner = CliRunner(env={**base, **(env or {})})
        with ThreadPoolExecutor(1) as thread:
            result = thread.submit(runner.invoke, app, list(args)).result()
        if result.exception is not None and not isinstance(result.exception, SystemExit):
            raise result.exception
        return subprocess.CompletedProcess(
            ["metisgraph", *args], result.exit_code, result.stdout, result.stderr
        )

    return run


@pytest.fixture
def project(request: pytest.FixtureRequest) -> str:
    """A project id of this test's own: tests never see each other's memories."""
    name = "".join(c if c.isalnum() else "-" for c in request.node.name)[:40].strip("-")
    return f"t{SESSION}-{name}-{uuid.uuid4().hex[:6]}"


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


# The schema as the last `store` left it, per database: applying it again (some forty
# statements, an index wait and the migration lease) is skipped while nothing changed it.
# A test that drops or rebuilds an index changes the fingerprint, so the next store applies
# the schema again.
_SCHEMA_SEEN: dict[tuple[str, int], tuple[Any, ...]] = {}


async def _schema_fingerprint(graph: Any) -> tuple[Any, ...]:
    indexes = await graph.run_text(
        "SHOW INDEXES YIELD name, state, type, labelsOrTypes, properties, options "
        "RETURN name, state, type, labelsOrTypes, properties, "
        "options.indexConfig AS config ORDER BY name",
        read=True,
    )
    constraints = await graph.run_text(
        "SHOW CONSTRAINTS YIELD name RETURN name ORDER BY name", read=True
    )
    return (repr(indexes), tuple(row["name"] for row in constraints))


@pytest.fixture
async def store(neo4j_settings: Neo4jSettings, embedder: Any) -> AsyncIterator[Any]:
    """A GraphStore on the test database, schema applied (idempotent, fast when present)."""
    from metisgraph.graph.indexes import apply_schema
    from metisgraph.graph.store import GraphStore, driver_from_settings

    driver = driver_from_settings(neo4j_settings)
    graph = GraphStore(driver, neo4j_settings.database, timeout=neo4j_settings.transaction_timeout)
    key = (str(neo4j_settings.uri), embedder.dimension)
    if _SCHEMA_SEEN.get(key) != await _schema_fingerprint(graph):
        await apply_schema(graph, embedder.dimension)
        _SCHEMA_SEEN[key] = await _schema_fingerprint(graph)
    try:
        yield graph
    finally:
        await driver.close()


@pytest.fixture(scope="session")
def shared_trajectories(shared_dir: Path, neo4j_settings: Neo4jSettings) -> Any:
    """Every run of ../shared/trajectories, ingested once for the tests that read them
    (never changed by them). Their checks (counts, links, a re-ingest that writes nothing)
    do not depend on meaning: the fast deterministic embedder."""
    from embedders import HashEmbedder

    return ingest_once(neo4j_settings, HashEmbedder(), shared_dir / "trajectories", SESSION)


@pytest.fixture(scope="session")
def shared_run(shared_dir: Path, neo4j_settings: Neo4jSettings, embedder: Any) -> Any:
    """One real run (mini-swe-agent on SWE-bench verified, with its verdicts), ingested once
    with the real model (test_feedback asks it questions): its tasks are read as they are;
    its episodes' trust is moved by test_feedback only."""
    run = shared_dir / "trajectories" / "mini-swe-agent-v1_gemini-3-pro_verified"
    return ingest_once(neo4j_settings, embedder, run, SESSION)


@pytest.fixture(scope="session")
def app_settings(neo4j_settings: Neo4jSettings) -> Any:
    from metisgraph.api.settings import ApiSettings, Settings
    from metisgraph.graph.settings import EmbeddedNeo4jSettings as Embedded
    from metisgraph.ingest.embeddings import EmbeddingSettings

    return Settings(
        # No warm-up reads: the test store's projects are not a service's (test_warm_reads.py)
        api=ApiSettings(host="127.0.0.1", dev=False, warm_up_reads_s=0),
        neo4j=neo4j_settings,
        embedded=Embedded(),
        embedding=EmbeddingSettings(),
    )


@pytest.fixture(scope="session")
def client(app_settings: Any, embedder: Any) -> Iterator[Any]:
    """The real app (real Neo4j, real model) through Starlette's TestClient."""
    from starlette.testclient import TestClient

    from metisgraph.api.http.app import create_app

    app = create_app(app_settings, embedder=embedder, wait_ready=True)
    with TestClient(app, base_url="http://127.0.0.1") as test_client:  # an allowed Host
        yield test_client


@pytest.fixture(scope="session")
def gql(client: Any) -> Any:
    """POST a GraphQL operation to the real app and return the JSON body."""

    def post(query: str, variables: dict[str, Any] | None = None, **headers: str) -> dict[str, Any]:
        response = client.post(
            "/graphql", json={"query": query, "variables": variables or {}}, headers=headers
        )
        assert response.status_code in (200, 401), response.text
        body: dict[str, Any] = response.json()
        return body

    return post


class _ServerThread:
    """A real uvicorn server for an ASGI app, in a thread, on a free loopback port."""

    def __init__(self, app: Any) -> None:
        import threading

        import uvicorn

        # An event stream still open ends 5 s into the stop: a teardown waited its 30 s
        # join for one (uvicorn waits for responses under way, for ever by default).
        config = uvicorn.Config(
            app, host="127.0.0.1", port=0, log_level="warning", timeout_graceful_shutdown=5
        )
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=self.server.run, daemon=True)

    def __enter__(self) -> str:
        import time

        self.thread.start()
        deadline = time.monotonic() + 120
        while not self.server.started:
            if not self.thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError("the test server did not start")
            time.sleep(0.05)
        port = self.server.servers[0].sockets[0].getsockname()[1]
        return f"http://127.0.0.1:{port}"

    def __exit__(self, *_: object) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=30)


@pytest.fixture(scope="session")
def serve() -> Any:
    """Serve an ASGI app over real HTTP: ``with serve(app) as url: …``."""
    return _ServerThread


@pytest.fixture(scope="session")
def api_url(app_settings: Any, embedder: Any) -> Iterator[str]:
    """The real app (real Neo4j, real model) served over HTTP on a free loopback port."""
    from metisgraph.api.http.app import create_app

    app = create_app(app_settings, embedder=embedder, wait_ready=True)
    with _ServerThread(app) as url:
        yield url
