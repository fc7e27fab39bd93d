"""The identity of "the same code": a hash of the template with comments and layout removed.

Normalising is purely lexical (no parser, no time budget), so one text always gives one key.
"""

from __future__ import annotations

import hashlib
import io
import re
import tokenize

from metisgraph.ingest.code.lexical import string_spans, without_comments

__all__ = ["content_key", "normalize"]

_SKIPPED_PY_TOKENS = {
    tokenize.COMMENT,
    tokenize.NL,
    tokenize.NEWLINE,
    tokenize.ENCODING,
    tokenize.ENDMARKER,
}
_TOKEN = re.compile(r"\w+|[^\w\s]")


def content_key(template: str, language: str) -> str:
    """A stable hash of the normalised template; values were lifted, so they do not count."""
    digest = hashlib.sha256(f"{language}\n{normalize(template, language)}".encode())
    return digest.hexdigest()[:32]


def normalize(code: str, language: str) -> str:
    """Code as a sequence of tokens: no comments, no whitespace differences."""
    if language == "python":
        tokens = _python_tokens(code)
        if tokens is not None:
            return tokens
    return " ".join(_tokens(without_comments(code, language), language))


def _tokens(code: str, language: str) -> list[str]:
    """Words and punctuation, with each string literal kept whole."""
    tokens: list[str] = []
    cursor = 0
    for start, end in string_spans(code, language):
        tokens += _TOKEN.findall(code, cursor, start)
        tokens.append(code[start:end])
        cursor = end
    tokens += _TOKEN.findall(code, cursor)
    return tokens


def _python_tokens(code: str) -> str | None:
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(code).readline))
    except (tokenize.TokenError, SyntaxError):
        return None
    parts = []
    for token in tokens:
        if token.type in _SKIPPED_PY_TOKENS:
            continue
        if token.type == tokenize.INDENT:
            parts.append("<indent>")
        elif token.type == tokenize.DEDENT:
            parts.append("<dedent>")
        else:
            parts.append(token.string)
    return " ".join(parts)
