"""Exports for portals and notebooks (node-link JSON, GraphML, CSV), streamed; imports of a
JSON export back into a store."""

from metisgraph.graph.exports.formats import EXPORT_FORMAT, EXPORT_VERSION, FORMATS
from metisgraph.graph.exports.importer import ImportRefused, ImportSummary, import_graph
from metisgraph.graph.exports.nodelink import NodeLinkError, read_node_link
from metisgraph.graph.exports.read import ExportEdge, ExportNode, ProjectGraph
from metisgraph.graph.exports.stream import CSV_TABLES, export_chunks, export_header

__all__ = [
    "CSV_TABLES",
    "EXPORT_FORMAT",
    "EXPORT_VERSION",
    "FORMATS",
    "ExportEdge",
    "ExportNode",
    "ImportRefused",
    "ImportSummary",
    "NodeLinkError",
    "ProjectGraph",
    "export_chunks",
    "export_header",
    "import_graph",
    "read_node_link",
]
