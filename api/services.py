"""The process's long-lived parts: one driver, one store, one embedder — and their start-up."""

from __future__ import annotations

import contextlib
import logging
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field

import anyio
from neo4j import AsyncDriver
from neo4j.exceptions import ServiceUnavailable, SessionExpired

from metisgraph.api.settings import Settings, load_settings
from metisgraph.graph import (
    GraphStore,
    IndexHealth,
    ModelChanged,
    ModelCheck,
    SchemaMismatch,
    SchemaReport,
    SchemaStatement,
    ServerInfo,
    apply_schema,
    check_model,
    open_driver,
    probe_vector_indexes,
    read_stamp,
    vector_index_statements,
    warm_reads,
)
from metisgraph.graph.embedded import EmbeddedNeo4j
from metisgraph.graph.explore import warm_error_pages
from metisgraph.ingest import MIGRATIONS, Embedder, reembed
from metisgraph.ingest.pipeline import Ingestor
from metisgraph.ingest.sandbox import Sandbox

__all__ = [
    "LASTING",
    "Services",
    "connect",
    "open_graph",
    "open_services",
    "prepare_services",
]

log = logging.getLogger("metisgraph")
# The warm-up reads end this long after the services were made (at the server's start):
# /readyz answers ready within 60 s of the process starting.
_READY_WITHIN_S = 50.0
_PLAN_WARM_UP_S = 4.0  # kept of the warm-up's budget for planContext's asks after recall's

_POOL_AT_LEAST = 50
_CONNECTIONS_PER_SLOT = 4

# Start-up failures no retry mends: the store's vectors are another model's (or its indexes
# another dimension's). An operator acts (re-embed, or the store's model) and restarts.
LASTING = (ModelChanged, SchemaMismatch)

WarmPlans = Callable[["Services", str, tuple[str, ...]], Awaitable[int]]


@dataclass
class Readiness:
    neo4j: bool = False
    schema: bool = False
    model: bool = False
    error: str | None = None
    lasting: bool = False  # the error is one of LASTING: start-up is not tried again
    timings: dict[str, float] = field(default_factory=dict)

    @property
    def ready(self) -> bool:
        return self.neo4j and self.schema and self.model


ReembedProgress = Callable[[str, int, int], None]


def _log_progress(kind: str, done: int, total: int) -> None:
    if done == total or done % 2048 < 256:
        log.info("re-embedding %s: %d of %d", kind, done, total)


@dataclass
class Services:
    settings: Settings
    driver: AsyncDriver
    store: GraphStore
    embedder: Embedder
    ingestor: Ingestor
    embedded: EmbeddedNeo4j | None
    sandbox: Sandbox
    readiness: Readiness = field(default_factory=Readiness)
    server: ServerInfo | None = None
    schema: SchemaReport | None = None
    started_embedded: bool = False
    reembed_progress: ReembedProgress = field(default=_log_progress)
    made_at: float = field(default_factory=time.monotonic)
    # planContext's start-up asks (api/graphql/plan_service.warm_plans), set by the HTTP
    # app: after recall's warm-up reads, given the project and the texts they asked about.
    warm_plans: WarmPlans | None = None

    @property
    def vector_filters(self) -> bool:
        return bool(self.server and self.server.supports_vector_filters)

    async def warm_up(self, *, reads: bool = True) -> None:
        """Start the embedded Neo4j if we own it, load the model, apply the schema; with
        ``reads``, ask recall of stored episodes for a bounded time (a server's first callers
        then find recall's reads compiled — a one-shot command has no later callers)."""
        try:
            await self._warm_up(reads=reads)
            self.readiness.error = None  # a retry that succeeds clears the last failure
        except Exception as exc:
            self.readiness.error = f"{type(exc).__name__}: {exc}"
            self.readiness.lasting = isinstance(exc, LASTING)
            if self.readiness.lasting:  # the operator's to fix: said once, in a line
                log.error("start-up stopped, retrying cannot help: %s", self.readiness.error)
            elif isinstance(exc, ServiceUnavailable | SessionExpired):
                # Neo4j away is said in a line (the caller says what to do), not a traceback.
                log.error("start-up failed: Neo4j is away (%s)", self.readiness.error)
            else:
                log.exception("start-up failed")
            raise

    async def _warm_plans(self, project: str, texts: tuple[str, ...]) -> None:
        """planContext asked of stored episodes (``warm_plans``, when set); a failure ends
        it and never fails the start, as a failing warm-up read does."""
        if self.warm_plans is None:
            return
        started = time.perf_counter()
        try:
            plans = await self.warm_plans(self, project, texts)
        except Exception as error:
            log.warning("warm-up plans stopped: %s", type(error).__name__)
            return
        seconds = time.perf_counter() - started
        self.readiness.timings["warm_plans_s"] = seconds
        log.info("warm-up: %d plans in %.1f s", plans, seconds)

    async def _warm_pages(self, project: str) -> None:
        """The errors list's pages asked once (`warm_error_pages`); a failure never fails
        the start."""
        started = time.perf_counter()
        try:
            pages = await warm_error_pages(self.store, project)
        except Exception as error:
            log.warning("warm-up pages stopped: %s", type(error).__name__)
            return
        self.readiness.timings["warm_pages_s"] = time.perf_counter() - started
        log.info("warm-up: %d error pages", pages)

    async def _warm_up(self, *, reads: bool) -> None:
        started = time.perf_counter()
        if self.embedded is not None:
            ours = await anyio.to_thread.run_sync(self.embedded.start)
            self.started_embedded = self.started_embedded or ours  # a retry finds it up
            self.readiness.timings["neo4j_start_s"] = time.perf_counter() - started
        await self.driver.verify_connectivity()
        self.server = await self.store.server_info()
        self.readiness.neo4j = True
        started = time.perf_counter()
        await anyio.to_thread.run_sync(self.embedder.load)
        self.readiness.timings["model_load_s"] = time.perf_counter() - started
        started = time.perf_counter()
        await self.settle_model()
        self.readiness.model = True
        self.readiness.timings["model_check_s"] = time.perf_counter() - started
        started = time.perf_counter()
        await anyio.to_thread.run_sync(self.embedder.load_query_path)
        self.readiness.timings["question_path_s"] = time.perf_counter() - started
        started = time.perf_counter()
        self.schema = await apply_schema(self.store, self.embedder.dimension, migrations=MIGRATIONS)
        self.readiness.timings["schema_s"] = time.perf_counter() - started
        if self.settings.api.demo:  # ready means the demo memory can be asked already
            await self.load_demo()
        budget = min(
            self.settings.api.warm_up_reads_s if reads else 0.0,
            _READY_WITHIN_S - (time.monotonic() - self.made_at),
        )
        # recall's reads for the budget but what planContext's few asks take after them
        warmed = await warm_reads(self.store, budget - min(_PLAN_WARM_UP_S, budget / 2))
        self.readiness.timings["warm_reads_s"] = warmed.seconds
        if warmed.questions:
            log.info("warm-up: %d recall questions in %.1f s", warmed.questions, warmed.seconds)
        if warmed.project and warmed.texts:
            await self._warm_plans(warmed.project, warmed.texts)
        if warmed.project:
            await self._warm_pages(warmed.project)
        self.readiness.schema = True
        log.info(
            "ready: Neo4j %s (%s), model %s, questions on %s",
            self.server.version,
            self.server.edition,
            self.embedder.settings.model,
            self.embedder.query_runtime,
        )

    async def settle_model(self) -> ModelCheck:
        """The store's vectors against this process's model: the same (or a store stamped
        now), else re-embedded when the setting says so, else ModelChanged: never mixed."""
        ours = await anyio.to_thread.run_sync(self.embedder.stamp)
        check = await check_model(self.store, ours)
        if check in (ModelCheck.changed, ModelCheck.interrupted):
            if self.settings.embedding.on_change != "reembed":
                raise ModelChanged(check, await read_stamp(self.store), ours)
            log.warning("re-embedding every stored vector with %s", ours.describe())
            report = await reembed(self.store, self.embedder, on_progress=self.reembed_progress)
            log.info("re-embedded: %s", report.done)
        return check

    def vector_indexes(self) -> dict[str, SchemaStatement]:
        """Our vector indexes, by name, with the statement that creates each."""
        return vector_index_statements(self.embedder.dimension, vector_filters=self.vector_filters)

    async def vector_health(self) -> dict[str, IndexHealth]:
        """Probe every vector index of ours with a filtered search that must answer."""
        wanted = list(self.vector_indexes())
        return await probe_vector_indexes(self.store, wanted, filtered=self.vector_filters)

    async def load_demo(self) -> None:
        """Ingest the demo memory shipped with the package (idempotent)."""
        from pathlib import Path

        from metisgraph.ingest.adapters import read_path
        from metisgraph.ingest.demo import demo_file

        summary = await self.ingestor.ingest(read_path(Path(str(demo_file())), format="native"))
        log.info("demo memory loaded: %s", summary.as_dict())

    async def close(self) -> None:
        await self.driver.close()
        owned = self.embedded is not None and self.started_embedded
        if owned and self.settings.api.stop_embedded_on_exit:
            assert self.embedded is not None
            await anyio.to_thread.run_sync(self.embedded.stop)


def connect(
    settings: Settings, retry_s: float | None = None
) -> tuple[AsyncDriver, EmbeddedNeo4j | None]:
    """The driver for NEO4J_URI, or for the embedded Neo4j when it is unset. No network I/O.

    ``retry_s``: how long a write retries Neo4j being away (default: NEO4J_RETRY_S).
    """
    retry = settings.neo4j.retry_s if retry_s is None else retry_s
    # Every request slot may hold a recall's three connections at once (and a fallback more):
    # the pool never runs dry before the slots do, so a loaded but healthy store is not
    # reported busy while the service itself has room (issue 30).
    pool = max(_POOL_AT_LEAST, _CONNECTIONS_PER_SLOT * settings.api.max_concurrent_requests)
    if settings.neo4j.external:
        secret = settings.neo4j.password.get_secret_value() if settings.neo4j.password else ""
        assert settings.neo4j.uri is not None
        driver = open_driver(
            settings.neo4j.uri, settings.neo4j.username, secret, retry_s=retry, pool_size=pool
        )
        return driver, None
    embedded = EmbeddedNeo4j(settings.embedded)
    driver = open_driver(embedded.uri, "neo4j", embedded.password(), retry_s=retry, pool_size=pool)
    return driver, embedded


def prepare_services(
    settings: Settings, embedder: Embedder | None = None, *, retry_s: float | None = None
) -> Services:
    """Build the services (no network I/O); ``warm_up`` starts what they need.

    ``retry_s``: how long a write retries Neo4j being away before it fails (the API's is
    shorter than a command's: its callers are told to come back).
    """
    driver, embedded = connect(settings, retry_s)
    store = GraphStore(
        driver,
        settings.neo4j.database,
        timeout=settings.neo4j.transaction_timeout,
        batch_timeout=settings.neo4j.batch_timeout,
    )
    embedder = embedder or Embedder(settings.embedding)
    ingestor = Ingestor(
        store,
        embedder,
        batch_size=settings.api.ingest_batch_size,
        keep_details=settings.api.keep_instance_details,
    )
    sandbox = Sandbox(settings.sandbox)
    return Services(settings, driver, store, embedder, ingestor, embedded, sandbox)


@contextlib.asynccontextmanager
async def open_services(settings: Settings | None = None) -> AsyncIterator[Services]:
    """Services for one command: Neo4j reachable (embedded started if needed), model, schema.

    An embedded Neo4j started here is left running for the next command
    (`metisgraph neo4j stop` stops it).
    """
    settings = settings or load_settings()
    settings.api.stop_embedded_on_exit = False
    services = prepare_services(settings)
    try:
        await services.warm_up(reads=False)  # a command asks its own questions, once
        yield services
    finally:
        await services.close()


@contextlib.asynccontextmanager
async def open_graph(settings: Settings | None = None) -> AsyncIterator[GraphStore]:
    """Only the store, for a command that reads the graph: no model, no schema to apply.

    An embedded Neo4j started here is left running, as by ``open_services``.
    """
    settings = settings or load_settings()
    driver, embedded = connect(settings)
    try:
        if embedded is not None:
            await anyio.to_thread.run_sync(embedded.start)
        await driver.verify_connectivity()
        yield GraphStore(driver, settings.neo4j.database)
    finally:
        await driver.close()
