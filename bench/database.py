"""The benchmark's own embedded Neo4j: its own data directory and port, stopped when done."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path

from metisgraph.graph.embedded import EmbeddedNeo4j
from metisgraph.graph.indexes import apply_schema
from metisgraph.graph.settings import EmbeddedNeo4jSettings
from metisgraph.graph.store import GraphStore, open_driver

__all__ = ["BenchNeo4j", "graph_store", "running_neo4j"]


@dataclass(frozen=True)
class BenchNeo4j:
    uri: str
    password: str
    settings: EmbeddedNeo4jSettings


@contextlib.contextmanager
def running_neo4j(home: Path, port: int, heap: str, pagecache: str) -> Iterator[BenchNeo4j]:
    """Start (or reuse) the benchmark's Neo4j; stop it on exit if this call started it."""
    settings = EmbeddedNeo4jSettings(
        home=home, port=port, heap=heap, heap_max=heap, pagecache=pagecache
    )
    server = EmbeddedNeo4j(settings)
    started = server.start()
    try:
        yield BenchNeo4j(server.uri, server.password(), settings)
    finally:
        if started:
            server.stop()


@contextlib.asynccontextmanager
async def graph_store(neo4j: BenchNeo4j, dimension: int) -> AsyncIterator[GraphStore]:
    driver = open_driver(neo4j.uri, "neo4j", neo4j.password)
    store = GraphStore(driver)
    await apply_schema(store, dimension)
    try:
        yield store
    finally:
        await driver.close()
