"""tree-sitter parsers for the languages we analyse, found without touching the network.

Each grammar comes from its own wheel (`tree-sitter-javascript`, …), which ships the compiled
parser. `tree_sitter_language_pack` is the fallback for grammars it has already cached: its
newer releases download grammars on first use, which a machine without internet cannot do.
"""

from __future__ import annotations

import functools
import importlib
import time
from collections.abc import Callable
from typing import Any

from tree_sitter import Language, Parser, Point, Tree

__all__ = ["GRAMMAR_PACKAGES", "PARSE_BUDGET_SECONDS", "parse", "parser_for"]

# Some grammars take quadratic time on odd input (a bash line of 16 KB of `a@a@…` takes
# seconds); past this budget we stop feeding the parser and analyse without a tree.
PARSE_BUDGET_SECONDS = 1.0
_CHUNK = 4096

GRAMMAR_PACKAGES = {
    "javascript": ("tree_sitter_javascript", "language"),
    "typescript": ("tree_sitter_typescript", "language_typescript"),
    "java": ("tree_sitter_java", "language"),
    "go": ("tree_sitter_go", "language"),
    "bash": ("tree_sitter_bash", "language"),
    "sql": ("tree_sitter_sql", "language"),
}


@functools.cache
def parser_for(language: str) -> Parser | None:
    """A parser for `language`, or None when no grammar for it is installed."""
    grammar = _from_package(language) or _from_language_pack(language)
    return Parser(grammar) if grammar is not None else None


def _from_package(language: str) -> Language | None:
    if language not in GRAMMAR_PACKAGES:
        return None
    module_name, attribute = GRAMMAR_PACKAGES[language]
    try:
        module = importlib.import_module(module_name)
    except ImportError:
        return None
    factory: Callable[[], Any] = getattr(module, attribute)
    return Language(factory())


def _from_language_pack(language: str) -> Language | None:
    try:
        import tree_sitter_language_pack as pack
    except ImportError:
        return None
    try:
        if language not in pack.downloaded_languages():
            return None  # asking for it would try a download
        grammar = pack.get_language(language)
    except (pack.Error, OSError, RuntimeError):
        return None
    return grammar if isinstance(grammar, Language) else None


def parse(language: str, code: str, budget: float = PARSE_BUDGET_SECONDS) -> Tree | None:
    """The syntax tree of `code`, or None without a grammar or when parsing overruns `budget`."""
    parser = parser_for(language)
    if parser is None:
        return None
    source = code.encode("utf-8")
    deadline = time.monotonic() + budget
    overran = parsed = False

    def read(offset: int, _point: Point) -> bytes:
        nonlocal overran
        if not parsed and time.monotonic() > deadline:
            overran = True
            return b""  # an early end of input: the parser finishes at once
        return source[offset : offset + _CHUNK]

    tree = parser.parse(read)
    # A node's text is read through `read` too, long after the parse: it must serve every
    # byte then (an empty answer has tree-sitter ask again, forever — analysing a tree past
    # the budget hung its worker).
    parsed = True
    return None if overran or tree is None else tree
