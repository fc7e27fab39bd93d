"""Code memory for the pipeline: the snippets of a batch found, analysed, versioned and
written; their verdict against a caller's environment."""

from metisgraph.ingest.snippets.batch import (
    PreparedSnippet,
    place_versions,
    prepare_snippets,
    snippet_record_results,
    snippet_write_steps,
    snippets_to_embed,
    verdict_for,
)

__all__ = [
    "PreparedSnippet",
    "place_versions",
    "prepare_snippets",
    "snippet_record_results",
    "snippet_write_steps",
    "snippets_to_embed",
    "verdict_for",
]
