"""One export as a stream of text, whatever its format."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import datetime
from typing import Any

from metisgraph.graph.exports.formats import (
    EXPORT_FORMAT,
    EXPORT_VERSION,
    FORMATS,
    csv_edges,
    csv_nodes,
    graphml_chunks,
    json_chunks,
)
from metisgraph.graph.exports.read import ProjectGraph
from metisgraph.graph.store import GraphStore

__all__ = ["CSV_TABLES", "export_chunks", "export_header"]

CSV_TABLES = ("nodes", "edges")


def export_header(
    project: str,
    since: datetime | None,
    vectors: bool,
    model: str | None = None,
    dimension: int | None = None,
) -> dict[str, Any]:
    """What an export says about itself (node-link "graph" attributes, GraphML graph data)."""
    header: dict[str, Any] = {
        "format": EXPORT_FORMAT,
        "version": EXPORT_VERSION,
        "project": project,
        "since": since.isoformat() if since else None,
        "vectors": vectors,
    }
    if vectors:
        header["embedding"] = {"model": model, "dimension": dimension}
    return {k: v for k, v in header.items() if v is not None}


async def export_chunks(
    store: GraphStore,
    project: str,
    fmt: str,
    *,
    since: datetime | None = None,
    table: str | None = None,
    vectors: bool = True,
    model: str | None = None,
    dimension: int | None = None,
) -> AsyncIterator[str]:
    """The project's graph as ``fmt`` (json, graphml, csv with ``table`` nodes or edges).

    Vectors go into JSON exports only (the format imports read back), when ``vectors``.
    """
    if fmt not in FORMATS:
        raise ValueError(f"format: one of {', '.join(FORMATS)}, got {fmt!r}")
    if fmt == "csv" and table not in CSV_TABLES:
        raise ValueError(f"table: a CSV export is one table, nodes or edges, got {table!r}")
    carry = vectors and fmt == "json"
    graph = ProjectGraph(store, project, since=since, vectors=carry)
    if carry and dimension is None:
        rows = await store.run("vector_dimension")
        dimension = int(rows[0]["dimension"]) if rows and rows[0]["dimension"] else None
    if fmt == "json":
        header = export_header(project, since, carry, model, dimension)
        async for chunk in json_chunks(graph, header):
            yield chunk
    elif fmt == "graphml":
        async for chunk in graphml_chunks(graph, export_header(project, since, False)):
            yield chunk
    elif table == "nodes":
        async for chunk in csv_nodes(graph.nodes()):
            yield chunk
    else:
        async for _ in graph.nodes():
            pass
        async for chunk in csv_edges(graph.edges()):
            yield chunk
