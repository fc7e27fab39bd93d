"""One canonical digest of a graph, to tell whether two graphs hold the same memory.

Two stores (or two projects, or a store and an export) have the same digest when they hold
the same nodes — by kind and key — with the same properties, and the same relationships
between them. Ignored: the project's name (and what is made from it: the full-text token
`scope`, and the content hash of an episode, which hashes its properties with that token,
with `consolidated`, the hash maintain last saw, and `situated`, the one its conflicts were
written for), every timestamp (a time a node was written
differs between stores), vectors (compare them apart if needed), internal ids. An
order-independent sum of one SHA-256 per node and edge, so a large graph is digested as it
streams.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from dataclasses import dataclass
from typing import IO, Any

from metisgraph.graph.explore.titles import VECTOR_PROPERTIES
from metisgraph.graph.exports.nodelink import read_node_link
from metisgraph.graph.exports.read import ProjectGraph
from metisgraph.graph.rows import plain_value
from metisgraph.graph.store import GraphStore

__all__ = ["GraphDigest", "digest_export", "digest_project", "graph_digest"]

# The content hash carries nothing else the digest keeps: the properties it hashes are
# compared one by one, and the model name and stated time it adds are ignored here too.
IGNORED = (
    frozenset({"project", "scope", "content_hash", "consolidated", "situated", "_types"})
    | VECTOR_PROPERTIES
)
_MODULUS = 1 << 256
_VERSION = "g2"  # g1 kept the content hash: the same records in two projects never matched


@dataclass
class GraphDigest:
    """Add nodes and edges in any order; ``hexdigest`` names the whole."""

    nodes: int = 0
    edges: int = 0
    _sum: int = 0

    def _add(self, line: str) -> None:
        self._sum = (self._sum + int(hashlib.sha256(line.encode()).hexdigest(), 16)) % _MODULUS

    def node(
        self, kind: str, key: str, props: dict[str, Any], temporal: Iterable[str] = ()
    ) -> None:
        self.nodes += 1
        self._add(json.dumps(["n", kind, _key(kind, key), _kept(props, temporal)], sort_keys=True))

    def edge(
        self,
        source: tuple[str, str],
        kind: str,
        target: tuple[str, str],
        props: dict[str, Any],
        temporal: Iterable[str] = (),
    ) -> None:
        self.edges += 1
        ends = [source[0], _key(*source), target[0], _key(*target)]
        self._add(json.dumps(["e", kind, ends, _kept(props, temporal)], sort_keys=True))

    def hexdigest(self) -> str:
        return f"{_VERSION}:{self.nodes}:{self.edges}:{self._sum:064x}"


def _key(kind: str, key: str) -> str:
    return "" if kind == "Project" else key  # a Project's key is the project's name


def _kept(props: dict[str, Any], temporal: Iterable[str]) -> dict[str, Any]:
    skip = IGNORED | set(temporal)
    kept = {}
    for name, value in props.items():
        if name in skip or value is None or name.startswith("_"):
            continue
        plain, kind = plain_value(value)
        if kind is None:
            kept[name] = plain
    return kept


def graph_digest(
    nodes: Iterable[tuple[str, str, dict[str, Any]]],
    edges: Iterable[tuple[tuple[str, str], str, tuple[str, str], dict[str, Any]]],
) -> str:
    """The digest of nodes (kind, key, properties) and edges (source, type, target, props)."""
    digest = GraphDigest()
    for kind, key, props in nodes:
        digest.node(kind, key, props)
    for source, kind, target, props in edges:
        digest.edge(source, kind, target, props)
    return digest.hexdigest()


async def digest_project(store: GraphStore, project: str) -> str:
    """The digest of one project as stored."""
    graph = ProjectGraph(store, project)
    digest = GraphDigest()
    async for node in graph.nodes():
        digest.node(node.ref.kind, node.ref.key, node.props)
    async for edge in graph.edges():
        source, target = (edge.source.kind, edge.source.key), (edge.target.kind, edge.target.key)
        digest.edge(source, edge.type, target, edge.props)
    return digest.hexdigest()


def digest_export(handle: IO[str]) -> str:
    """The digest of a node-link JSON export (ours, or networkx's with the same attributes)."""
    digest = GraphDigest()
    ends: dict[str, tuple[str, str]] = {}
    for part, item in read_node_link(handle):
        if part == "node":
            ends[item["id"]] = (item["label"], item["key"])
            props = {k: v for k, v in item.items() if k not in ("id", "label", "key")}
            digest.node(item["label"], item["key"], props, item.get("_types") or {})
        elif part == "edge":
            props = {k: v for k, v in item.items() if k not in ("source", "target", "type", "key")}
            temporal = item.get("_types") or {}
            digest.edge(ends[item["source"]], item["type"], ends[item["target"]], props, temporal)
    return digest.hexdigest()
