"""Neo4j access: the embedded server, schema, stores, writes and recall.

Imports nothing else of metisgraph. The names below are the public face, and the only way
ingest and api reach graph (tests/test_public_api.py holds them to it); the modules behind
them are free to change. Each name is imported when first used (graph/faces.py): a
command that needs the settings does not load Neo4j's driver.
"""

import typing

from metisgraph.graph.faces import lazy_face

if typing.TYPE_CHECKING:
    from metisgraph.graph.abstention import (
        AbstentionSettings,
        Calibration,
        Gate,
        abstention_gates,
        calibrate_abstention,
    )
    from metisgraph.graph.applicability import Applicability, CallerConditions
    from metisgraph.graph.bulk.graph import IMPORTED, BulkGraph
    from metisgraph.graph.bulk.tables import BulkTables
    from metisgraph.graph.bulk.tables import Chunks as BulkChunks
    from metisgraph.graph.bulk.tables import Pending as BulkPending
    from metisgraph.graph.bulk.tables import format_rows as format_bulk_rows
    from metisgraph.graph.confidence import CONFIDENCE, ConfidenceSettings, Posterior, posterior
    from metisgraph.graph.conflicts import Conflict
    from metisgraph.graph.consolidate import (
        MaintainReport,
        consolidate,
        projects_to_maintain,
        refresh_patterns,
    )
    from metisgraph.graph.counters import COUNTERS
    from metisgraph.graph.cypher import Query
    from metisgraph.graph.decay import TIERS
    from metisgraph.graph.digest import digest_project
    from metisgraph.graph.families import bucket_errors, merge_families, set_family_shapes
    from metisgraph.graph.indexes import (
        SNIPPET_NAME_CHARS,
        SchemaMismatch,
        SchemaReport,
        SchemaStatement,
        apply_schema,
        vector_index_statements,
    )
    from metisgraph.graph.lessons import ConsolidationSettings
    from metisgraph.graph.lineage.derive import derive_links
    from metisgraph.graph.lucene import project_scope
    from metisgraph.graph.migrations import GRAPH_MIGRATIONS, Migration, ordered, record_current
    from metisgraph.graph.model_stamp import (
        ModelChanged,
        ModelCheck,
        ModelStamp,
        begin_reembedding,
        check_model,
        drop_vector_indexes,
        read_stamp,
        stamp_store,
    )
    from metisgraph.graph.outcomes import (
        OutcomeReport,
        ReportConflict,
        add_evidence_steps,
        bridge_report_key,
        record_outcome,
        recount_steps,
        verdict_feedback_within,
    )
    from metisgraph.graph.project_ranker import install_ranker, project_rankers
    from metisgraph.graph.rank_features import FEATURES, FeatureTable
    from metisgraph.graph.ranker import LinearRanker, RankerFileError, load_ranker, shipped_ranker
    from metisgraph.graph.recall import PatternHit, RecallOutcome, recall
    from metisgraph.graph.recall_hit import Hit
    from metisgraph.graph.recall_request import (
        ALL_OUTCOMES,
        DEFAULT_MEMORY_TYPES,
        MEMORY_TYPES,
        NOT_REVIEWING,
        RECALLABLE_REVIEW,
        EnvironmentQuery,
        QuestionVectors,
        RecallFilters,
        RecallRequest,
    )
    from metisgraph.graph.recall_settings import PRESETS, RecallSettings
    from metisgraph.graph.refs import InvalidCursor, InvalidId, NodeRef, decode_id
    from metisgraph.graph.rows import native_value
    from metisgraph.graph.settings import EmbeddedNeo4jSettings, Neo4jSettings
    from metisgraph.graph.situations import relate_situations
    from metisgraph.graph.snippet_search import SnippetHit, SnippetSearch, search_snippets
    from metisgraph.graph.snippets import lineage_heads, snippet_detail, snippet_state
    from metisgraph.graph.staleness import refresh_staleness
    from metisgraph.graph.store import (
        GraphStore,
        ServerInfo,
        Transaction,
        open_driver,
        refused_data,
    )
    from metisgraph.graph.vector_health import (
        IndexHealth,
        RepairFailed,
        probe_vector_indexes,
        repair_vector_index,
    )
    from metisgraph.graph.vectors import Vector
    from metisgraph.graph.verification import record_failure, record_pass
    from metisgraph.graph.warm_reads import WarmReads, warm_reads
    from metisgraph.graph.writes import (
        WriteBatch,
        existing_environment_keys,
        existing_episode_hashes,
        existing_error_keys,
        in_turn,
        write_batch,
    )

__all__ = [
    "ALL_OUTCOMES",
    "CONFIDENCE",
    "COUNTERS",
    "DEFAULT_MEMORY_TYPES",
    "FEATURES",
    "GRAPH_MIGRATIONS",
    "IMPORTED",
    "MEMORY_TYPES",
    "NOT_REVIEWING",
    "PRESETS",
    "RECALLABLE_REVIEW",
    "SNIPPET_NAME_CHARS",
    "TIERS",
    "AbstentionSettings",
    "Applicability",
    "BulkChunks",
    "BulkGraph",
    "BulkPending",
    "BulkTables",
    "Calibration",
    "CallerConditions",
    "ConfidenceSettings",
    "Conflict",
    "ConsolidationSettings",
    "EmbeddedNeo4jSettings",
    "EnvironmentQuery",
    "FeatureTable",
    "Gate",
    "GraphStore",
    "Hit",
    "IndexHealth",
    "InvalidCursor",
    "InvalidId",
    "LinearRanker",
    "MaintainReport",
    "Migration",
    "ModelChanged",
    "ModelCheck",
    "ModelStamp",
    "Neo4jSettings",
    "NodeRef",
    "OutcomeReport",
    "PatternHit",
    "Posterior",
    "Query",
    "QuestionVectors",
    "RankerFileError",
    "RecallFilters",
    "RecallOutcome",
    "RecallRequest",
    "RecallSettings",
    "RepairFailed",
    "ReportConflict",
    "SchemaMismatch",
    "SchemaReport",
    "SchemaStatement",
    "ServerInfo",
    "SnippetHit",
    "SnippetSearch",
    "Transaction",
    "Vector",
    "WarmReads",
    "WriteBatch",
    "abstention_gates",
    "add_evidence_steps",
    "apply_schema",
    "begin_reembedding",
    "bridge_report_key",
    "bucket_errors",
    "calibrate_abstention",
    "check_model",
    "consolidate",
    "decode_id",
    "derive_links",
    "digest_project",
    "drop_vector_indexes",
    "existing_environment_keys",
    "existing_episode_hashes",
    "existing_error_keys",
    "format_bulk_rows",
    "in_turn",
    "install_ranker",
    "lazy_face",
    "lineage_heads",
    "load_ranker",
    "merge_families",
    "native_value",
    "open_driver",
    "ordered",
    "posterior",
    "probe_vector_indexes",
    "project_rankers",
    "project_scope",
    "projects_to_maintain",
    "read_stamp",
    "recall",
    "record_current",
    "record_failure",
    "record_outcome",
    "record_pass",
    "recount_steps",
    "refresh_patterns",
    "refresh_staleness",
    "refused_data",
    "relate_situations",
    "repair_vector_index",
    "search_snippets",
    "set_family_shapes",
    "shipped_ranker",
    "snippet_detail",
    "snippet_state",
    "stamp_store",
    "vector_index_statements",
    "verdict_feedback_within",
    "warm_reads",
    "write_batch",
]

if not typing.TYPE_CHECKING:
    lazy_face(__name__)
