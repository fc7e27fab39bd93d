"""Neo4j access: the embedded server, schema, stores, writes and recall.

Imports nothing else of metisgraph. The names below are the public face; the modules
behind them are free to change.
"""

from metisgraph.graph.channels import RecallFilters, RecallRequest
from metisgraph.graph.embedded import EmbeddedNeo4j, EmbeddedNeo4jError, EmbeddedStatus
from metisgraph.graph.recall import Hit, RecallOutcome, recall
from metisgraph.graph.recall_settings import PRESETS, RecallSettings
from metisgraph.graph.schema import SchemaMismatch, SchemaReport, apply_schema
from metisgraph.graph.settings import EmbeddedNeo4jSettings, Neo4jSettings
from metisgraph.graph.store import GraphStore, ServerInfo, open_driver

__all__ = [
    "PRESETS",
    "EmbeddedNeo4j",
    "EmbeddedNeo4jError",
    "EmbeddedNeo4jSettings",
    "EmbeddedStatus",
    "GraphStore",
    "Hit",
    "Neo4jSettings",
    "RecallFilters",
    "RecallOutcome",
    "RecallRequest",
    "RecallSettings",
    "SchemaMismatch",
    "SchemaReport",
    "ServerInfo",
    "apply_schema",
    "open_driver",
    "recall",
]
