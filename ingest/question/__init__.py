"""A recall question made ready to search, prepared as records are (sanitized, its errors,
words, symbols, tags, tools and environment extracted)."""

from metisgraph.ingest.question.asked import (
    MAX_CONTEXT_TOOLS,
    MAX_K,
    MAX_PROJECTS,
    MAX_QUESTION_CHARS,
    Question,
    QuestionError,
    check_names,
)
from metisgraph.ingest.question.prepare import (
    PreparedQuestion,
    environment_query,
    prepare_question,
)

__all__ = [
    "MAX_CONTEXT_TOOLS",
    "MAX_K",
    "MAX_PROJECTS",
    "MAX_QUESTION_CHARS",
    "PreparedQuestion",
    "Question",
    "QuestionError",
    "check_names",
    "environment_query",
    "prepare_question",
]
