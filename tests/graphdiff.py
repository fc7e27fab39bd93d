"""What differs between two projects whose digests differ: the canonical parts of each
(``graph.digest``'s view: no project name, timestamps, vectors or internal ids), compared
node by node and edge by edge, so a failed "same graph" names the property at fault."""

from __future__ import annotations

import json
from typing import Any

from metisgraph.graph import digest_project
from metisgraph.graph.digest import _kept, _key
from metisgraph.graph.exports.read import ProjectGraph

__all__ = ["assert_same_graph", "canonical_parts"]


async def canonical_parts(store: Any, project: str) -> dict[str, list[str]]:
    """Each node (kind and key) and edge (ends and type) with its kept properties."""
    parts: dict[str, list[str]] = {}
    graph = ProjectGraph(store, project)
    async for node in graph.nodes():
        name = f"{node.ref.kind}:{_key(node.ref.kind, node.ref.key)}"
        parts.setdefault(name, []).append(json.dumps(_kept(node.props, ()), sort_keys=True))
    async for edge in graph.edges():
        ends = [(e.kind, _key(e.kind, e.key)) for e in (edge.source, edge.target)]
        name = f"{ends[0]} -[{edge.type}]-> {ends[1]}"
        parts.setdefault(name, []).append(json.dumps(_kept(edge.props, ()), sort_keys=True))
    return {name: sorted(values) for name, values in parts.items()}


async def assert_same_graph(store: Any, got: str, wanted: str) -> None:
    """The two projects have one digest; else the differing parts are the message."""
    if await digest_project(store, got) == await digest_project(store, wanted):
        return
    ours, theirs = await canonical_parts(store, got), await canonical_parts(store, wanted)
    differ = [
        f"{name}:\n  {got}: {ours.get(name)}\n  {wanted}: {theirs.get(name)}"
        for name in sorted(ours.keys() | theirs.keys())
        if ours.get(name) != theirs.get(name)
    ]
    raise AssertionError(f"{len(differ)} parts differ:\n" + "\n".join(differ[:20]))
