"""Environments: the OS, runtime and packages an episode ran in, as a stable fingerprint."""

from metisgraph.ingest.environment.evidence import normalize_package
from metisgraph.ingest.environment.extract import (
    EnvironmentFingerprint,
    environment_row,
    extract_environment,
    fingerprint,
)

__all__ = [
    "EnvironmentFingerprint",
    "environment_row",
    "extract_environment",
    "fingerprint",
    "normalize_package",
]
