"""The one handle on Neo4j a process needs: a driver, a database name and the named queries."""

from __future__ import annotations

import contextlib
import re
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from neo4j import (
    READ_ACCESS,
    AsyncDriver,
    AsyncGraphDatabase,
    AsyncManagedTransaction,
    Record,
    RoutingControl,
    unit_of_work,
)
from neo4j import Query as Statement
from neo4j.exceptions import (
    ClientError,
    DatabaseError,
    DriverError,
    Neo4jError,
    ServiceUnavailable,
    SessionExpired,
    TransientError,
)

from metisgraph.graph.counters import COUNTERS
from metisgraph.graph.cypher import Query, query
from metisgraph.graph.settings import Neo4jSettings

__all__ = [
    "DEFAULT_BATCH_TIMEOUT",
    "DEFAULT_TIMEOUT",
    "GraphStore",
    "ServerInfo",
    "Transaction",
    "open_driver",
    "refused_data",
]

# Seconds a transaction may run before Neo4j ends it (Neo4jSettings sets them per process):
# a query gone wrong must not hold locks and memory for ever.
DEFAULT_TIMEOUT = 60.0
DEFAULT_BATCH_TIMEOUT = 3600.0  # CALL ... IN TRANSACTIONS: forgetting a large project

_SCALARS = (str, int, float, bool, type(None))

# Cypher 25's SEARCH ... WHERE (filters inside the vector index) is GA from 2026.02.
_SEARCH_FILTER_SINCE = (2026, 2)


@dataclass(frozen=True)
class ServerInfo:
    version: str
    edition: str

    @property
    def version_tuple(self) -> tuple[int, ...]:
        return tuple(int(p) for p in re.findall(r"\d+", self.version)[:3])

    @property
    def supports_vector_filters(self) -> bool:
        """True when vector indexes take filter properties and SEARCH ... WHERE works."""
        return self.version_tuple[:2] >= _SEARCH_FILTER_SINCE


def refused_data(exc: BaseException) -> str | None:
    """Why Neo4j would not store what it was given (a value too large to index, a
    constraint), or None when the error is not about the data: Neo4j away, busy or
    timing out, which a retry of the same data may get past."""
    code = str(getattr(exc, "code", None) or "")
    about_data = code.split(".")[2:3] in (["Statement"], ["Schema"])  # not Security, Transaction
    if isinstance(exc, ClientError | DatabaseError) and about_data:
        message = " ".join(str(exc.message or "").split())
        return f"{exc.code}: {message[:300]}"
    return None


@contextlib.contextmanager
def _counted() -> Iterator[None]:
    """Count each error of Neo4j or of the driver (``neo4j_errors``, by Neo4j's code or the
    driver's error class: a bounded set), and let it go on."""
    try:
        yield
    except (Neo4jError, DriverError) as exc:
        code = getattr(exc, "code", None)
        COUNTERS.increment("neo4j_errors", error=code if code else type(exc).__name__)
        raise


def open_driver(
    uri: str,
    username: str,
    password: str,
    *,
    retry_s: float = 30.0,
    pool_size: int = 50,
    acquisition_timeout_s: float = 30.0,
) -> AsyncDriver:
    """One driver per process; sized for a small API server.

    ``retry_s``: how long a write keeps retrying a transient failure (Neo4j away, a leader
    change) before it fails. A command waits Neo4j out; an API request should fail sooner,
    so its caller gets a 503 it can retry instead of a request that outlives its timeout.
    ``pool_size``: connections at most (a recall holds up to three at once); a request
    that finds none free within ``acquisition_timeout_s`` fails (the API: 503 STORE_BUSY).
    """
    return AsyncGraphDatabase.driver(
        uri,
        auth=(username, password),
        max_connection_pool_size=pool_size,
        connection_acquisition_timeout=acquisition_timeout_s,
        max_transaction_retry_time=retry_s,
        notifications_min_severity="OFF",
    )


def driver_from_settings(settings: Neo4jSettings, password: str | None = None) -> AsyncDriver:
    if not settings.uri:
        raise ValueError("NEO4J_URI is not set")
    secret = password or (settings.password.get_secret_value() if settings.password else "")
    return open_driver(settings.uri, settings.username, secret, retry_s=settings.retry_s)


def _plain(value: Any) -> Any:
    """``Record.data()``'s conversion, quick for the values most rows hold.

    The driver's exporter asks every value of every list whether it is a node, a path, a
    sequence or a mapping; for a row holding vectors that is thousands of abstract type
    checks per row, more than the query itself costs. Scalars, lists and maps are walked
    here; nodes, relationships, paths and times still go through the driver's own.
    """
    kind = type(value)
    if kind in _SCALARS:
        return value
    if kind is list:
        return [v if type(v) in _SCALARS else _plain(v) for v in value]
    if kind is dict:
        return {k: v if type(v) in _SCALARS else _plain(v) for k, v in value.items()}
    return Record({"value": value}).data()["value"]  # type: ignore[no-untyped-call]


def _ready(step: str | Query) -> Query:
    q = query(step) if isinstance(step, str) else step
    if q.slots:
        raise ValueError(f"{q.name}: slots {sorted(q.slots)} not filled")
    return q


def _data(record: Record) -> dict[str, Any]:
    return {key: _plain(value) for key, value in record.items()}  # type: ignore[no-untyped-call]


class Transaction:
    """Named queries inside a transaction that ``GraphStore.write_many`` holds open."""

    def __init__(self, tx: AsyncManagedTransaction) -> None:
        self._tx = tx

    async def run(self, name: str, **params: Any) -> list[dict[str, Any]]:
        return await self.run_query(name, params)

    async def run_query(self, step: str | Query, params: dict[str, Any]) -> list[dict[str, Any]]:
        """A named query, or one with its slots filled (a write step's form)."""
        result = await self._tx.run(_ready(step).text, params)  # type: ignore[arg-type]
        return [_data(record) async for record in result]


class GraphStore:
    """Runs the named queries of cypher/*.cypher. Receives the driver; does no I/O when built."""

    def __init__(
        self,
        driver: AsyncDriver,
        database: str | None = None,
        *,
        timeout: float = DEFAULT_TIMEOUT,
        batch_timeout: float = DEFAULT_BATCH_TIMEOUT,
    ) -> None:
        self.driver = driver
        self.database = database
        self.timeout = timeout
        self.batch_timeout = batch_timeout

    async def run(self, name: str, **params: Any) -> list[dict[str, Any]]:
        """Run a named query in one managed transaction (reads routed as reads)."""
        return await self.run_query(query(name), params)

    async def run_query(self, q: Query, params: dict[str, Any]) -> list[dict[str, Any]]:
        """Run a query as its mode says: a read routed as a read, a batch in an implicit
        transaction, a write in one managed transaction."""
        q = _ready(q)
        if q.mode == "batch":
            return await self._run_implicit(q.text, params)
        return await self.run_text(q.text, params, read=q.mode == "read")

    async def _run_implicit(self, text: str, params: dict[str, Any]) -> list[dict[str, Any]]:
        # CALL ... IN TRANSACTIONS commits as it goes: only an auto-commit query may do that.
        with _counted():
            async with self.driver.session(database=self.database) as session:
                statement = Statement(text, timeout=self.batch_timeout)  # type: ignore[arg-type]
                result = await session.run(statement, params)
                return [_data(record) async for record in result]

    async def run_text(
        self, text: str, params: dict[str, Any] | None = None, *, read: bool = False
    ) -> list[dict[str, Any]]:
        if read:
            return await self._read(text, params or {})
        with _counted():
            result = await self.driver.execute_query(
                Statement(text, timeout=self.timeout),  # type: ignore[arg-type]
                parameters_=params or {},
                routing_=RoutingControl.READ if read else RoutingControl.WRITE,
                database_=self.database,
            )
        return [_data(record) for record in result.records]

    async def _read(self, text: str, params: dict[str, Any]) -> list[dict[str, Any]]:
        # An auto-commit read is one round trip (RUN and PULL pipelined) where a managed
        # transaction adds BEGIN and COMMIT: recall runs a dozen reads per question. The
        # driver's query bookmarks keep reads after our own writes causal on a cluster, and
        # a transient failure (a leader change, a lost connection) is retried once.
        for attempt in (1, 2):
            try:
                with _counted():
                    async with self.driver.session(
                        database=self.database,
                        default_access_mode=READ_ACCESS,
                        bookmark_manager=self.driver.execute_query_bookmark_manager,
                    ) as session:
                        statement = Statement(text, timeout=self.timeout)  # type: ignore[arg-type]
                        result = await session.run(statement, params)
                        return [_data(record) async for record in result]
            except (TransientError, SessionExpired, ServiceUnavailable):
                if attempt == 2:
                    raise
        raise AssertionError("unreachable")

    async def stream(self, name: str, **params: Any) -> AsyncIterator[dict[str, Any]]:
        """The rows of a named read as they arrive, never all held at once (exports)."""
        q = query(name)
        if q.mode != "read":
            raise ValueError(f"query {name!r} is not a read")
        with _counted():
            async with self.driver.session(
                database=self.database,
                default_access_mode=READ_ACCESS,
                bookmark_manager=self.driver.execute_query_bookmark_manager,
            ) as session:
                # An export may take long: the batch timeout, not the per-request one.
                statement = Statement(q.text, timeout=self.batch_timeout)  # type: ignore[arg-type]
                result = await session.run(statement, params)
                async for record in result:
                    yield _data(record)

    async def write_many(
        self,
        steps: Sequence[tuple[str | Query, dict[str, Any]]],
        then: Callable[[Transaction], Awaitable[object]] | None = None,
    ) -> list[dict[str, Any]]:
        """Run several write queries (named, or with their slots filled) in one managed
        transaction (all or nothing); ``then`` runs last in the same transaction (work that
        must read what was written).

        Returns the rows of the last query.
        """
        texts = [(_ready(step).text, params) for step, params in steps]

        @unit_of_work(timeout=self.timeout)
        async def work(tx: AsyncManagedTransaction) -> list[dict[str, Any]]:
            rows: list[dict[str, Any]] = []
            for text, params in texts:
                result = await tx.run(text, params)  # type: ignore[arg-type]
                rows = [_data(record) async for record in result]
            if then is not None:
                await then(Transaction(tx))
            return rows

        with _counted():
            async with self.driver.session(database=self.database) as session:
                return await session.execute_write(work)

    async def server_info(self) -> ServerInfo:
        rows = await self.run("server_components")
        return ServerInfo(version=rows[0]["version"], edition=rows[0]["edition"])

    async def ping(self) -> bool:
        try:
            await self.driver.verify_connectivity()
        except Exception:
            return False
        return True
