"""Writing memory: validation, abstraction and redaction, extraction, embeddings, batched writes.

The names below are the public face (with the rooms' own faces: `metisgraph.ingest.errors`,
`.sanitize`, `.prepare`, `.snippets`, `.code` …), and the only way api reaches ingest
(tests/test_public_api.py holds it to that); the modules behind them are free to change. Each is
imported when first used (graph/faces.py).
"""

import typing

from metisgraph.graph import lazy_face as _lazy_face

if typing.TYPE_CHECKING:
    from metisgraph.ingest.adapters import FORMATS, Parsed, Refused, read_path, validate_record
    from metisgraph.ingest.embeddings import DEFAULT_MODEL, Embedder, EmbeddingSettings
    from metisgraph.ingest.environment import EnvironmentFingerprint, extract_environment
    from metisgraph.ingest.errors import ErrorSignature, extract_errors, line_signature
    from metisgraph.ingest.migrations import MIGRATIONS
    from metisgraph.ingest.pipeline import DeadLetter, Ingestor, IngestSummary
    from metisgraph.ingest.records import (
        MAX_CODE_CHARS,
        PROJECT_NAME,
        SCHEMA_VERSION,
        Action,
        EnvironmentInput,
        EpisodeRecord,
        Outcome,
        SnippetInput,
        SnippetKind,
        SnippetRecord,
        SnippetRelation,
        Source,
        TaskRecord,
        TaskStatus,
    )
    from metisgraph.ingest.reembed import ReembedReport, reembed
    from metisgraph.ingest.sanitize import Abstracted, Redacted, abstract, redact, sanitize
    from metisgraph.ingest.schema_export import input_schema
    from metisgraph.ingest.tools import ToolUse, extract_tools

__all__ = [
    "DEFAULT_MODEL",
    "FORMATS",
    "MAX_CODE_CHARS",
    "MIGRATIONS",
    "PROJECT_NAME",
    "SCHEMA_VERSION",
    "Abstracted",
    "Action",
    "DeadLetter",
    "Embedder",
    "EmbeddingSettings",
    "EnvironmentFingerprint",
    "EnvironmentInput",
    "EpisodeRecord",
    "ErrorSignature",
    "IngestSummary",
    "Ingestor",
    "Outcome",
    "Parsed",
    "Redacted",
    "ReembedReport",
    "Refused",
    "SnippetInput",
    "SnippetKind",
    "SnippetRecord",
    "SnippetRelation",
    "Source",
    "TaskRecord",
    "TaskStatus",
    "ToolUse",
    "abstract",
    "extract_environment",
    "extract_errors",
    "extract_tools",
    "input_schema",
    "line_signature",
    "read_path",
    "redact",
    "reembed",
    "sanitize",
    "validate_record",
]

if not typing.TYPE_CHECKING:
    _lazy_face(__name__)
