"""Error signatures: errors found in text (traces, crashes, codes, log lines), each with a
stable, normalised key."""

from metisgraph.ingest.errors.logtemplate import log_template, template_key
from metisgraph.ingest.errors.signatures import (
    ErrorSignature,
    extract_errors,
    line_signature,
    signature_key,
)

__all__ = [
    "ErrorSignature",
    "extract_errors",
    "line_signature",
    "log_template",
    "signature_key",
    "template_key",
]
