"""A project's graph read out of the store as a stream: its nodes, then the edges among them."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from metisgraph.graph.refs import KINDS, NodeRef, kind_of
from metisgraph.graph.store import GraphStore

__all__ = ["ExportEdge", "ExportNode", "ProjectGraph", "edge_key"]

_EDGE_CHUNK = 1000


@dataclass(frozen=True)
class ExportNode:
    ref: NodeRef
    props: dict[str, Any]  # as stored, without `project` and the key property


@dataclass(frozen=True)
class ExportEdge:
    source: NodeRef
    type: str
    target: NodeRef
    props: dict[str, Any]

    @property
    def key(self) -> str:
        return edge_key(self.type, self.props)


def edge_key(kind: str, props: dict[str, Any]) -> str:
    """What tells apart relationships of one type between the same two nodes: FIXES carry the
    task they were derived from (one per task); every other type is one per pair."""
    if kind == "FIXES" and props.get("task") is not None:
        return f"FIXES|{props['task']}"
    return kind


class ProjectGraph:
    """Read ``nodes()`` to the end, then ``edges()``: both stream; only element ids are kept.

    ``since``: the episodes created since then and what they touch (see export_nodes);
    ``vectors``: include the embedding properties.
    """

    def __init__(
        self,
        store: GraphStore,
        project: str,
        *,
        since: datetime | None = None,
        vectors: bool = False,
    ) -> None:
        self.store = store
        self.project = project
        self.since = since
        self.vectors = vectors
        self._elements: dict[str, NodeRef] = {}
        self._read = False

    async def nodes(self) -> AsyncIterator[ExportNode]:
        self._elements.clear()
        rows = self.store.stream(
            "export_nodes", project=self.project, since=self.since, vectors=self.vectors
        )
        async for row in rows:
            node = _node(row["labels"], row["props"], self.project)
            if node is None:
                continue
            self._elements[row["element"]] = node.ref
            yield node
        self._read = True

    async def edges(self) -> AsyncIterator[ExportEdge]:
        if not self._read:
            raise RuntimeError("read nodes() to the end before edges()")
        elements = list(self._elements)
        for start in range(0, len(elements), _EDGE_CHUNK):
            chunk = elements[start : start + _EDGE_CHUNK]
            for row in await self.store.run("export_edges", elements=chunk):
                target = self._elements.get(row["target"])
                if target is None:  # outside the export (another window or project)
                    continue
                source = self._elements[row["source"]]
                yield ExportEdge(source, row["type"], target, dict(row["props"]))

    @property
    def node_count(self) -> int:
        return len(self._elements)


def _node(labels: list[str], props: dict[str, Any], project: str) -> ExportNode | None:
    kind = kind_of(labels)
    if kind is None:
        return None
    key = props.get(kind.key)
    if key is None:
        return None
    if kind is KINDS["Project"]:
        ref = NodeRef("Project", project, str(key))
    else:
        ref = NodeRef(kind.label, project, str(key))
    kept = {k: v for k, v in props.items() if v is not None and k not in ("project", kind.key)}
    return ExportNode(ref, kept)
