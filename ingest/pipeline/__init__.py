"""The one ingest pipeline: validate, sanitize, extract, embed and write records in batches."""

from metisgraph.ingest.pipeline.bulk import BulkFiles, BulkIngestor
from metisgraph.ingest.pipeline.forgetting import Forgotten, forget_episodes
from metisgraph.ingest.pipeline.ingestor import Ingestor
from metisgraph.ingest.pipeline.summary import DeadLetter, IngestSummary, RecordResult

__all__ = [
    "BulkFiles",
    "BulkIngestor",
    "DeadLetter",
    "Forgotten",
    "IngestSummary",
    "Ingestor",
    "RecordResult",
    "forget_episodes",
]
