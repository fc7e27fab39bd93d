"""Code memory analysis: structure, parameterisation and a static safety scan.

Everything here works without a database: the ingest pipeline calls `extract_snippets` or
`extract_command_snippets` on what agents wrote, `analyze_snippet` on each piece of code, and
`compatibility` when a caller asks whether a stored snippet fits its environment.
"""

from metisgraph.ingest.code.analysis import analyze_snippet, needs_review
from metisgraph.ingest.code.compatibility import compatibility
from metisgraph.ingest.code.dependencies import pin_to_environment
from metisgraph.ingest.code.extract import extract_command_snippets, extract_snippets
from metisgraph.ingest.code.language import detect_language, file_suffix, normalize_language
from metisgraph.ingest.code.model import (
    KINDS,
    RISKS,
    SEVERITIES,
    ExtractedSnippet,
    Finding,
    Parameter,
    PatchFile,
    Requirement,
    SnippetAnalysis,
    TemplateParameter,
    Verdict,
)
from metisgraph.ingest.code.parameterize import fill_template, resolved_values, without_secrets
from metisgraph.ingest.code.patch import parse_patch

__all__ = [
    "KINDS",
    "RISKS",
    "SEVERITIES",
    "ExtractedSnippet",
    "Finding",
    "Parameter",
    "PatchFile",
    "Requirement",
    "SnippetAnalysis",
    "TemplateParameter",
    "Verdict",
    "analyze_snippet",
    "compatibility",
    "detect_language",
    "extract_command_snippets",
    "extract_snippets",
    "file_suffix",
    "fill_template",
    "needs_review",
    "normalize_language",
    "parse_patch",
    "pin_to_environment",
    "resolved_values",
    "without_secrets",
]
