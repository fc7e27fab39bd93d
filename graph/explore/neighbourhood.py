"""Any node by its global id, and the nodes around it (depth 1 or 2, bounded)."""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from typing import Any

from metisgraph.graph.explore.titles import shown_properties, title_of
from metisgraph.graph.refs import KINDS, NodeRef, kind_of
from metisgraph.graph.store import GraphStore

__all__ = [
    "MAX_DEPTH",
    "MAX_NEIGHBOURHOOD",
    "Edge",
    "GraphNode",
    "Neighbourhood",
    "neighbourhood",
    "nodes_by_ref",
]

MAX_DEPTH = 2
MAX_NEIGHBOURHOOD = 500


@dataclass(frozen=True)
class GraphNode:
    ref: NodeRef
    title: str
    properties: dict[str, Any]
    depth: int = 0
    # An episode's originals behind its placeholders, when kept ({kind: [values]}): for the
    # API to show to the project's admins, never part of `properties`.
    details: dict[str, list[str]] | None = None

    @property
    def id(self) -> str:
        return self.ref.id


@dataclass(frozen=True)
class Edge:
    source: NodeRef
    type: str
    target: NodeRef
    properties: dict[str, Any]


@dataclass(frozen=True)
class Neighbourhood:
    center: GraphNode
    nodes: list[GraphNode]  # the center first, then by depth
    edges: list[Edge]
    truncated: bool  # the limit was reached: more nodes lie within the depth


def _node(ref: NodeRef, props: dict[str, Any], depth: int = 0) -> GraphNode:
    return GraphNode(ref, title_of(ref.kind, props), shown_properties(props), depth)


async def nodes_by_ref(store: GraphStore, refs: list[NodeRef]) -> dict[NodeRef, GraphNode]:
    """The nodes that exist among ``refs`` (one round trip)."""
    found = await _lookup(store, refs)
    return {ref: node for ref, (_, node) in found.items()}


async def _lookup(store: GraphStore, refs: list[NodeRef]) -> dict[NodeRef, tuple[str, GraphNode]]:
    if not refs:
        return {}
    rows = await store.run("explore_nodes", refs=[r.row() for r in refs])
    found = {}
    for r in rows:
        ref = NodeRef(r["kind"], r["project"], r["key"])
        node = _node(ref, r["props"])
        if r.get("details"):
            node = replace(node, details=json.loads(r["details"]))
        found[ref] = (r["element"], node)
    return found


async def neighbourhood(
    store: GraphStore, center: NodeRef, depth: int = 1, limit: int = 100
) -> Neighbourhood | None:
    """The nodes within ``depth`` (1 or 2) of ``center`` inside its project, at most ``limit``.

    Breadth first: every node at depth 1 comes before any at depth 2. At most four round
    trips whatever the size: the center, each depth, the edges among what was found.
    """
    if not 1 <= depth <= MAX_DEPTH:
        raise ValueError(f"depth: 1 or {MAX_DEPTH}, got {depth}")
    if not 1 <= limit <= MAX_NEIGHBOURHOOD:
        raise ValueError(f"limit: between 1 and {MAX_NEIGHBOURHOOD}, got {limit}")
    found = await _lookup(store, [center])
    if center not in found:
        return None
    element, node = found[center]
    elements: dict[str, GraphNode] = {element: node}
    frontier, truncated = [element], False
    for level in range(1, depth + 1):
        room = limit - (len(elements) - 1)
        if room <= 0 or not frontier:
            truncated = truncated or bool(frontier)
            break
        rows = await store.run("explore_expand", elements=frontier, per_node=room + 1)
        frontier = []
        for row in rows:
            ref = _ref_of(row)
            if ref is None or row["element"] in elements:
                continue
            if len(elements) - 1 >= limit:
                truncated = True
                break
            elements[row["element"]] = _node(ref, row["props"], level)
            frontier.append(row["element"])
    edges = await store.run("explore_edges", elements=list(elements))
    return Neighbourhood(
        center=node,
        nodes=list(elements.values()),
        edges=[
            Edge(
                elements[e["source"]].ref,
                e["type"],
                elements[e["target"]].ref,
                shown_properties(e["props"]),
            )
            for e in edges
        ],
        truncated=truncated,
    )


def _ref_of(row: dict[str, Any]) -> NodeRef | None:
    kind = kind_of(row["labels"])
    if kind is None or row["key"] is None or row["project"] is None:
        return None
    if kind is KINDS["Project"]:
        return NodeRef("Project", row["key"], row["key"])
    return NodeRef(kind.label, row["project"], str(row["key"]))
