"""The bulk path: a write batch's rows as files for `neo4j-admin database import`."""

from metisgraph.graph.bulk.graph import IMPORTED, IMPORTED_LABELS, IMPORTED_TYPES, BulkGraph
from metisgraph.graph.bulk.tables import BulkTables, node_id

__all__ = ["IMPORTED", "IMPORTED_LABELS", "IMPORTED_TYPES", "BulkGraph", "BulkTables", "node_id"]
