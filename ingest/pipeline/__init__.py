"""The one ingest pipeline: validate, sanitize, extract, embed and write records in batches."""

from metisgraph.ingest.pipeline.ingestor import DeadLetter, Ingestor, IngestSummary, RecordResult

__all__ = [
    "DeadLetter",
    "IngestSummary",
    "Ingestor",
    "RecordResult",
]
