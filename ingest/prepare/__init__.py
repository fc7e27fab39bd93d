"""A validated record made ready to store: sanitized text, extracted links, search words,
embed text, content hash."""

from metisgraph.ingest.prepare.episode import (
    DEFAULT_CONFIDENCE,
    MAX_TEXT_CHARS,
    PIPELINE_VERSION,
    PreparedEpisode,
    PreparedTask,
    clean_tags,
    clean_tool,
    embed_text,
    prepare_episode,
    prepare_task,
    sanitize_value,
)
from metisgraph.ingest.prepare.keywords import without_library_frames, words
from metisgraph.ingest.prepare.symbols import question_symbols

__all__ = [
    "DEFAULT_CONFIDENCE",
    "MAX_TEXT_CHARS",
    "PIPELINE_VERSION",
    "PreparedEpisode",
    "PreparedTask",
    "clean_tags",
    "clean_tool",
    "embed_text",
    "prepare_episode",
    "prepare_task",
    "question_symbols",
    "sanitize_value",
    "without_library_frames",
    "words",
]
