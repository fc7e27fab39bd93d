"""Writing memory: validation, abstraction and redaction, extraction, embeddings, batched writes.

The names below are the public face; the modules behind them are free to change.
"""

from metisgraph.ingest.adapters import FORMATS, Parsed, Refused, read_path, validate_record
from metisgraph.ingest.embeddings import Embedder, EmbeddingSettings
from metisgraph.ingest.environment.extract import EnvironmentFingerprint, extract_environment
from metisgraph.ingest.errors.signatures import ErrorSignature, extract_errors, line_signature
from metisgraph.ingest.pipeline import DeadLetter, Ingestor, IngestSummary
from metisgraph.ingest.records import (
    EpisodeRecord,
    Outcome,
    SnippetRecord,
    Source,
    TaskRecord,
    TaskStatus,
)
from metisgraph.ingest.sanitize.abstraction import Abstracted, abstract, sanitize
from metisgraph.ingest.sanitize.redaction import Redacted, redact
from metisgraph.ingest.tools import ToolUse, extract_tools

__all__ = [
    "FORMATS",
    "Abstracted",
    "DeadLetter",
    "Embedder",
    "EmbeddingSettings",
    "EnvironmentFingerprint",
    "EpisodeRecord",
    "ErrorSignature",
    "IngestSummary",
    "Ingestor",
    "Outcome",
    "Parsed",
    "Redacted",
    "Refused",
    "SnippetRecord",
    "Source",
    "TaskRecord",
    "TaskStatus",
    "ToolUse",
    "abstract",
    "extract_environment",
    "extract_errors",
    "extract_tools",
    "line_signature",
    "read_path",
    "redact",
    "sanitize",
    "validate_record",
]
