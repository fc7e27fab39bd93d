"""The identity of "the same code": a hash of the template with comments and layout removed."""

from __future__ import annotations

import hashlib
import io
import re
import tokenize

from metisgraph.ingest.code.grammars import parser_for
from metisgraph.ingest.code.lexical import without_comments
from metisgraph.ingest.code.syntax import text, walk

__all__ = ["content_key", "normalize"]

_SKIPPED_PY_TOKENS = {
    tokenize.COMMENT,
    tokenize.NL,
    tokenize.NEWLINE,
    tokenize.ENCODING,
    tokenize.ENDMARKER,
}


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
    parser = parser_for(language)
    if parser is not None:
        tree = parser.parse(code.encode("utf-8"))
        leaves = [
            text(node)
            for node in walk(tree.root_node)
            if node.child_count == 0 and "comment" not in node.type
        ]
        if not tree.root_node.has_error:
            return " ".join(leaf for leaf in leaves if leaf.strip())
    return _collapse(without_comments(code, language))


def _python_tokens(code: str) -> str | None:
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(code).readline))
    except (tokenize.TokenError, SyntaxError, IndentationError):
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


def _collapse(code: str) -> str:
    return re.sub(r"\s+", " ", code).strip()
