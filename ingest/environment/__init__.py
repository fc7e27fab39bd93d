"""Environments: the OS, runtime and packages an episode ran in, as a stable fingerprint."""

from metisgraph.ingest.environment.fingerprint import (
    EnvironmentFingerprint,
    environment_row,
    extract_environment,
    fingerprint,
    normalize_package,
)

__all__ = [
    "EnvironmentFingerprint",
    "environment_row",
    "extract_environment",
    "fingerprint",
    "normalize_package",
]
