"""Adapters from real agent trajectory formats and other record sources to memory records.

``read_path`` reads a file or a folder (format detected, or given) into ``Parsed``
records and ``Refused`` items that name file, line and field; ``validate_record`` is
the one validation path for records from any caller.
"""

from metisgraph.ingest.adapters.base import (
    FORMATS,
    FieldError,
    Parsed,
    Record,
    Refused,
    SourceRef,
    UnknownFormatError,
    validate_record,
)
from metisgraph.ingest.adapters.corpus import corpus_episode
from metisgraph.ingest.adapters.detect import detect_format
from metisgraph.ingest.adapters.hazards import MAX_DEPTH, hazards, printable
from metisgraph.ingest.adapters.run import derive_project
from metisgraph.ingest.adapters.sources import SourceFile, list_sources, read_path
from metisgraph.ingest.adapters.timestamps import parse_datetime

__all__ = [
    "FORMATS",
    "MAX_DEPTH",
    "FieldError",
    "Parsed",
    "Record",
    "Refused",
    "SourceFile",
    "SourceRef",
    "UnknownFormatError",
    "corpus_episode",
    "derive_project",
    "detect_format",
    "hazards",
    "list_sources",
    "parse_datetime",
    "printable",
    "read_path",
    "validate_record",
]
