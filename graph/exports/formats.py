"""Export formats, written as the graph streams out: node-link JSON and GraphML (the shapes
networkx reads and writes), CSV node and edge tables.

Node-link JSON goes through networkx a chunk at a time (``node_link_data`` on a small
MultiDiGraph per chunk), one node or edge a line, so a large export is never held whole.
networkx's GraphML writer needs the whole graph to declare its attribute keys first;
GraphML is written here instead, its body spooled to a temporary file (memory, then disk)
while the keys are learned, then sent after them.
"""

from __future__ import annotations

import csv
import io
import json
import re
import tempfile
from collections.abc import AsyncIterator, Iterable
from typing import Any
from xml.sax.saxutils import escape, quoteattr

import networkx as nx

from metisgraph.graph.explore.titles import HIDDEN_PROPERTIES, VECTOR_PROPERTIES, title_of
from metisgraph.graph.exports.read import ExportEdge, ExportNode, ProjectGraph
from metisgraph.graph.refs import KINDS
from metisgraph.graph.rows import plain_value

__all__ = [
    "EXPORT_FORMAT",
    "EXPORT_VERSION",
    "FORMATS",
    "csv_edges",
    "csv_nodes",
    "edge_record",
    "graphml_chunks",
    "json_chunks",
    "node_record",
]

EXPORT_FORMAT = "metisgraph-export"
EXPORT_VERSION = 1
FORMATS = ("json", "graphml", "csv")
_CHUNK = 500
# Characters XML 1.0 cannot carry (terminal escapes in a captured log are common).
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")
_INTERNAL = HIDDEN_PROPERTIES - VECTOR_PROPERTIES


def node_record(node: ExportNode) -> dict[str, Any]:
    """A node as exports show it: id, label, project, key, its properties; `_types` names the
    temporal ones (written as ISO 8601 text)."""
    record: dict[str, Any] = {
        "id": node.ref.id,
        "label": node.ref.kind,
        "project": node.ref.project,
        "key": node.ref.key,
    }
    record.update(_properties(node.props))
    return record


def edge_record(edge: ExportEdge) -> dict[str, Any]:
    record: dict[str, Any] = {"source": edge.source.id, "target": edge.target.id}
    record.update({"type": edge.type, "key": edge.key})
    record.update(_properties(edge.props))
    return record


def _properties(props: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    types: dict[str, str] = {}
    for name, value in sorted(props.items()):
        plain, temporal = plain_value(value)
        out[name] = plain
        if temporal:
            types[name] = temporal
    if types:
        out["_types"] = types
    return out


async def _chunks(items: AsyncIterator[Any], size: int = _CHUNK) -> AsyncIterator[list[Any]]:
    chunk: list[Any] = []
    async for item in items:
        chunk.append(item)
        if len(chunk) >= size:
            yield chunk
            chunk = []
    if chunk:
        yield chunk


# ------------------------------------------------------------------------- node-link JSON


async def json_chunks(graph: ProjectGraph, header: dict[str, Any]) -> AsyncIterator[str]:
    """Node-link JSON (networkx's ``node_link_data`` shape, edges under "edges")."""
    head = {"directed": True, "multigraph": True, "graph": header}
    yield json.dumps(head, ensure_ascii=False)[:-1] + ',\n"nodes": [\n'
    first = True
    async for chunk in _chunks(graph.nodes()):
        g = nx.MultiDiGraph()
        for node in chunk:
            record = node_record(node)
            g.add_node(record.pop("id"), **record)
        for item in nx.node_link_data(g, edges="edges")["nodes"]:
            yield ("" if first else ",\n") + json.dumps(item, ensure_ascii=False)
            first = False
    yield '\n],\n"edges": [\n'
    first = True
    async for chunk in _chunks(graph.edges()):
        g = nx.MultiDiGraph()
        for edge in chunk:
            record = edge_record(edge)
            source, target, key = record.pop("source"), record.pop("target"), record.pop("key")
            g.add_edge(source, target, key=key, **record)
        for item in nx.node_link_data(g, edges="edges")["edges"]:
            yield ("" if first else ",\n") + json.dumps(item, ensure_ascii=False)
            first = False
    yield "\n]}\n"


# -------------------------------------------------------------------------------- GraphML

_GRAPHML_TYPES = {bool: "boolean", int: "long", float: "double", str: "string"}
_WIDER = {("long", "double"): "double", ("double", "long"): "double"}


class _Keys:
    """GraphML attribute keys, learned as values are written; a key seen with two types
    widens (long and double to double, anything else to string)."""

    def __init__(self) -> None:
        self.ids: dict[tuple[str, str], str] = {}
        self.types: dict[tuple[str, str], str] = {}

    def id_for(self, scope: str, name: str, value: Any) -> str:
        kind = _GRAPHML_TYPES.get(type(value), "string")
        slot = (scope, name)
        if slot not in self.ids:
            self.ids[slot] = f"{scope[0]}{len(self.ids)}"
            self.types[slot] = kind
        elif self.types[slot] != kind:
            self.types[slot] = _WIDER.get((self.types[slot], kind), "string")
        return self.ids[slot]

    def declarations(self) -> str:
        return "".join(
            f'<key id="{self.ids[slot]}" for="{slot[0]}" attr.name={quoteattr(slot[1])} '
            f'attr.type="{self.types[slot]}"/>\n'
            for slot in self.ids
        )


def _xml_text(value: Any) -> str:
    if isinstance(value, bool):
        text = "true" if value else "false"
    elif isinstance(value, list | dict):
        text = json.dumps(value, ensure_ascii=False, sort_keys=True)
    else:
        text = str(value)
    return escape(_NOT_XML.sub("\ufffd", text))


def _graphml_data(keys: _Keys, scope: str, record: dict[str, Any]) -> str:
    parts = []
    for name, value in record.items():
        if value is None or name in VECTOR_PROPERTIES:
            continue
        if isinstance(value, list | dict):
            value = json.dumps(value, ensure_ascii=False, sort_keys=True)
        parts.append(f'<data key="{keys.id_for(scope, name, value)}">{_xml_text(value)}</data>')
    return "".join(parts)


async def graphml_chunks(graph: ProjectGraph, header: dict[str, Any]) -> AsyncIterator[str]:
    """GraphML for networkx ``read_graphml`` (a directed multigraph; edge ids are its keys)."""
    keys = _Keys()
    with tempfile.SpooledTemporaryFile(max_size=8 << 20, mode="w+", encoding="utf-8") as body:
        async for node in graph.nodes():
            record = node_record(node)
            gid = record.pop("id")
            body.write(f"<node id={quoteattr(gid)}>{_graphml_data(keys, 'node', record)}</node>\n")
        async for edge in graph.edges():
            record = edge_record(edge)
            source, target, key = record.pop("source"), record.pop("target"), record.pop("key")
            body.write(
                f"<edge id={quoteattr(key)} source={quoteattr(source)} target={quoteattr(target)}>"
                f"{_graphml_data(keys, 'edge', record)}</edge>\n"
            )
        graph_data = "".join(
            f'<data key="{keys.id_for("graph", name, str(value))}">{_xml_text(value)}</data>'
            for name, value in header.items()
        )
        yield '<?xml version="1.0" encoding="utf-8"?>\n'
        yield (
            '<graphml xmlns="http://graphml.graphdrawing.org/xmlns" '
            'xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" '
            'xsi:schemaLocation="http://graphml.graphdrawing.org/xmlns '
            'http://graphml.graphdrawing.org/xmlns/1.0/graphml.xsd">\n'
        )
        yield keys.declarations()
        yield f'<graph edgedefault="directed" parse.edgeids="canonical">{graph_data}\n'
        body.seek(0)
        while block := body.read(1 << 16):
            yield block
        yield "</graph>\n</graphml>\n"


# ------------------------------------------------------------------------------------ CSV

NODE_COLUMNS = ("id", "label", "project", "key", "title", "properties")
EDGE_COLUMNS = ("source", "type", "target", "properties")


def _csv_line(row: Iterable[Any]) -> str:
    out = io.StringIO()
    csv.writer(out, lineterminator="\n").writerow(row)
    return out.getvalue()


def _json_properties(record: dict[str, Any], skip: Iterable[str]) -> str:
    kept = {
        k: v
        for k, v in record.items()
        if k not in skip and k not in VECTOR_PROPERTIES and k not in _INTERNAL
    }
    return json.dumps(kept, ensure_ascii=False, sort_keys=True)


async def csv_nodes(nodes: AsyncIterator[ExportNode]) -> AsyncIterator[str]:
    """One row a node: id, label, project, key, a title, the other properties as JSON."""
    yield _csv_line(NODE_COLUMNS)
    async for node in nodes:
        record = node_record(node)
        title = title_of(node.ref.kind, {KINDS[node.ref.kind].key: node.ref.key, **node.props})
        skip = ("id", "label", "project", "key")
        yield _csv_line((*(record[c] for c in skip), title, _json_properties(record, skip)))


async def csv_edges(edges: AsyncIterator[ExportEdge]) -> AsyncIterator[str]:
    """One row an edge: source id, type, target id, its properties as JSON."""
    yield _csv_line(EDGE_COLUMNS)
    async for edge in edges:
        record = edge_record(edge)
        props = _json_properties(record, ("source", "target", "type", "key"))
        yield _csv_line((record["source"], edge.type, record["target"], props))
