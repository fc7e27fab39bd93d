"""Sanitizing text before it is stored or embedded: secrets redacted, instance details
abstracted into typed placeholders."""

from metisgraph.ingest.sanitize.abstraction import (
    PLACEHOLDER_KINDS,
    Abstracted,
    abstract,
    placeholder,
    sanitize,
)
from metisgraph.ingest.sanitize.redaction import (
    Redacted,
    is_redacted,
    marker,
    redact,
    redact_id,
    redact_value,
)
from metisgraph.ingest.sanitize.secrets import secret_kind_for_name

__all__ = [
    "PLACEHOLDER_KINDS",
    "Abstracted",
    "Redacted",
    "abstract",
    "is_redacted",
    "marker",
    "placeholder",
    "redact",
    "redact_id",
    "redact_value",
    "sanitize",
    "secret_kind_for_name",
]
