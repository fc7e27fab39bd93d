"""Error signatures: errors found in text (traces, crashes, codes, log lines), each with a
stable, normalised key."""

from metisgraph.ingest.errors.families import (
    FAMILY_SETTINGS,
    FamilyIndex,
    FamilySettings,
    FamilyShape,
)
from metisgraph.ingest.errors.logtemplate import (
    ALL_RULES,
    DEFAULT_RULES,
    RULES,
    TemplateRule,
    log_template,
    rule_applies,
    template_key,
)
from metisgraph.ingest.errors.signatures import (
    ErrorSignature,
    error_ref_keys,
    extract_errors,
    line_signature,
    resign,
    signature_key,
)

__all__ = [
    "ALL_RULES",
    "DEFAULT_RULES",
    "FAMILY_SETTINGS",
    "RULES",
    "ErrorSignature",
    "FamilyIndex",
    "FamilySettings",
    "FamilyShape",
    "TemplateRule",
    "error_ref_keys",
    "extract_errors",
    "line_signature",
    "log_template",
    "resign",
    "rule_applies",
    "signature_key",
    "template_key",
]
