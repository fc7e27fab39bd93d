"""Write a node-link JSON export back into a store, under its project or another name.

Nodes are merged on their kind's key in the target project, then the relationships among
them; a bad node or edge is refused with its place and reason and the rest go on. Vectors
travel in the export (JSON exports carry them by default) and are written back as they
were, so the imported memory can be recalled at once; an export made with another
embedding model (or dimension) than the target store's is refused before anything is
written.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import IO, Any

from metisgraph.graph.explore.titles import VECTOR_PROPERTIES
from metisgraph.graph.exports.formats import EXPORT_FORMAT, EXPORT_VERSION
from metisgraph.graph.exports.nodelink import read_node_link
from metisgraph.graph.lucene import project_scope
from metisgraph.graph.refs import KINDS, NodeRef
from metisgraph.graph.rows import restore_value
from metisgraph.graph.store import GraphStore

__all__ = ["ImportRefused", "ImportSummary", "import_graph"]

_BATCH = 500
_TYPE = re.compile(r"^[A-Z][A-Z0-9_]{0,63}$")
_RESERVED = ("id", "label", "project", "key", "_types")
_PROJECT = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._:@/-]{0,127}$")


class ImportRefused(ValueError):
    """The export cannot be imported into this store (nothing was written)."""


@dataclass
class ImportSummary:
    project: str
    nodes: int = 0
    edges: int = 0
    vectors: int = 0  # nodes written with at least one vector
    refused: list[str] = field(default_factory=list)  # "node 12: reason"

    def as_dict(self) -> dict[str, Any]:
        return {
            "project": self.project,
            "nodes": self.nodes,
            "edges": self.edges,
            "vectors": self.vectors,
            "refused": len(self.refused),
        }


@dataclass(frozen=True)
class _Target:
    project: str
    model: str | None
    dimension: int | None


async def import_graph(
    store: GraphStore,
    handle: IO[str],
    *,
    project: str | None = None,
    model: str | None = None,
    dimension: int | None = None,
) -> ImportSummary:
    """Import a JSON export; ``project`` renames it, ``model``/``dimension`` are the store's."""
    parts = read_node_link(handle)
    header, first = _header(parts)
    target = _target(header, project, model, dimension)
    summary = ImportSummary(target.project)
    elements: dict[str, str] = {}  # the export's node id -> element id in this store
    pending: list[dict[str, Any]] = []
    edges: list[dict[str, Any]] = []
    counts = {"node": 0, "edge": 0}
    counted: set[tuple[str, str]] = set()  # errors and tools: the export's counts, recounted
    for kind, item in _chain(first, parts):
        if kind not in counts:
            continue
        counts[kind] += 1
        place = f"{kind} {counts[kind]}"
        if kind == "edge" and pending:  # every node is written before the first edge
            await _write_nodes(store, pending, elements, summary)
            pending = []
        try:
            if kind == "node":
                pending.append(_node_row(item, target))
                if pending[-1]["kind"] in ("Error", "Tool"):
                    counted.add((pending[-1]["kind"], pending[-1]["key"]))
            else:
                edges.append(_edge_row(item, elements))
        except ValueError as exc:
            summary.refused.append(f"{place}: {exc}")
            continue
        if len(pending) >= _BATCH:
            await _write_nodes(store, pending, elements, summary)
            pending = []
        if len(edges) >= _BATCH:
            await _write_edges(store, edges, summary)
            edges = []
    await _write_nodes(store, pending, elements, summary)
    await _write_edges(store, edges, summary)
    await _recount(store, target.project, sorted(counted))
    return summary


async def _recount(store: GraphStore, project: str, nodes: list[tuple[str, str]]) -> None:
    """The counts imported errors and tools carry, made this store's (the target project
    may hold sightings and uses of its own)."""
    recounts = (("Error", "recount_errors", "key"), ("Tool", "recount_tools", "name"))
    for kind, query, name in recounts:
        keys = [k for n, k in nodes if n == kind]
        for start in range(0, len(keys), _BATCH):
            rows = [{"project": project, name: k} for k in keys[start : start + _BATCH]]
            await store.run(query, rows=rows)
    # the project's errors' totals (cypher/error_counts.cypher), set whole: the nodes written
    # carry the totals of the store they came from
    await store.run("recount_error_totals", project=project)
    # and its sizes (tasks, episodes): merged here without being counted
    await store.run("migrate_project_sizes", project=project)


def _header(parts: Iterator[tuple[str, Any]]) -> tuple[dict[str, Any], tuple[str, Any] | None]:
    """The graph attributes, when they come before the nodes (they do in our exports)."""
    for kind, item in parts:
        if kind == "graph":
            return item, None
        if kind in ("node", "edge"):
            return {}, (kind, item)
    return {}, None


def _chain(
    first: tuple[str, Any] | None, rest: Iterator[tuple[str, Any]]
) -> Iterator[tuple[str, Any]]:
    if first is not None:
        yield first
    yield from rest


def _target(
    header: dict[str, Any], project: str | None, model: str | None, dimension: int | None
) -> _Target:
    if header.get("format") not in (None, EXPORT_FORMAT):
        raise ImportRefused(f"not a metisgraph export (format {header.get('format')!r})")
    if int(header.get("version") or EXPORT_VERSION) > EXPORT_VERSION:
        raise ImportRefused(f"export version {header['version']} is newer than this release")
    name = project or header.get("project")
    if not isinstance(name, str) or not _PROJECT.match(name):
        raise ImportRefused(f"project: not a project name: {name!r} (give one)")
    embedding = header.get("embedding") or {}
    if (
        header.get("vectors")
        and dimension is not None
        and embedding.get("dimension")
        not in (
            None,
            dimension,
        )
    ):
        raise ImportRefused(
            f"the export's vectors have {embedding.get('dimension')} dimensions, this store's "
            f"model {dimension}: they could not be searched"
        )
    if header.get("vectors") and model and embedding.get("model") not in (None, model):
        raise ImportRefused(
            f"the export's vectors come from model {embedding.get('model')!r}, this store "
            f"embeds with {model!r}: they would not compare"
        )
    return _Target(name, model, dimension)


def _node_row(item: Any, target: _Target) -> dict[str, Any]:
    if not isinstance(item, dict):
        raise ValueError("not an object")
    kind, key, gid = item.get("label"), item.get("key"), item.get("id")
    if kind not in KINDS:
        raise ValueError(f"label: not a kind of node we keep: {kind!r}")
    if not isinstance(key, str) or not key or not isinstance(gid, str):
        raise ValueError("id and key: both required, as text")
    types = item.get("_types") or {}
    props = {
        name: restore_value(value, types.get(name))
        for name, value in item.items()
        if name not in _RESERVED and value is not None
    }
    if kind == "Project":
        key = target.project
    else:
        props["project"] = target.project
    props[KINDS[kind].key] = key
    if "scope" in props:  # the project's token in the full-text indexes
        props["scope"] = project_scope(target.project)
    ref = NodeRef(kind, target.project, key)
    return {"gid": gid, "kind": kind, "project": ref.project, "key": key, "props": props}


def _edge_row(item: Any, elements: dict[str, str]) -> dict[str, Any]:
    if not isinstance(item, dict):
        raise ValueError("not an object")
    kind = item.get("type")
    if not isinstance(kind, str) or not _TYPE.match(kind):
        raise ValueError(f"type: not a relationship type: {kind!r}")
    source, target = item.get("source"), item.get("target")
    if source not in elements or target not in elements:
        missing = source if source not in elements else target
        raise ValueError(f"names a node the export does not hold: {str(missing)[:80]!r}")
    types = item.get("_types") or {}
    props = {
        name: restore_value(value, types.get(name))
        for name, value in item.items()
        if name not in ("source", "target", "type", "key", "_types") and value is not None
    }
    identity = props.get("task") if kind == "FIXES" else None
    return {
        "source": elements[source],
        "target": elements[target],
        "type": kind,
        "identity": identity,
        "props": props,
    }


async def _write_nodes(
    store: GraphStore, rows: list[dict[str, Any]], elements: dict[str, str], s: ImportSummary
) -> None:
    if not rows:
        return
    written = await store.write_many([("import_nodes", {"rows": rows})])
    for row in written:
        elements[row["gid"]] = row["element"]
    s.nodes += len(written)
    s.vectors += sum(any(v in r["props"] for v in VECTOR_PROPERTIES) for r in rows)


async def _write_edges(store: GraphStore, rows: list[dict[str, Any]], s: ImportSummary) -> None:
    if not rows:
        return
    await store.write_many([("import_edges", {"rows": rows})])
    s.edges += len(rows)
