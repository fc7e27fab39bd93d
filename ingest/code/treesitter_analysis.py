"""Structure of JavaScript, TypeScript, Java, Go, shell and SQL through tree-sitter grammars."""

from __future__ import annotations

from collections.abc import Callable

from tree_sitter import Node

from metisgraph.ingest.code.ecmascript_analysis import analyze_ecmascript
from metisgraph.ingest.code.go_analysis import analyze_go
from metisgraph.ingest.code.grammars import parse
from metisgraph.ingest.code.java_analysis import analyze_java
from metisgraph.ingest.code.model import Structure
from metisgraph.ingest.code.shell_analysis import analyze_shell
from metisgraph.ingest.code.sql_analysis import analyze_sql

__all__ = ["TREE_SITTER_LANGUAGES", "analyze_with_treesitter"]

_ANALYSERS: dict[str, Callable[[Node], Structure]] = {
    "javascript": analyze_ecmascript,
    "typescript": analyze_ecmascript,
    "java": analyze_java,
    "go": analyze_go,
    "bash": analyze_shell,
    "sql": analyze_sql,
}
TREE_SITTER_LANGUAGES = frozenset(_ANALYSERS)


def analyze_with_treesitter(code: str, language: str) -> Structure | None:
    """The structure of `code`, or None when the language has no analyser or no grammar."""
    analyser = _ANALYSERS.get(language)
    tree = parse(language, code) if analyser else None
    if analyser is None or tree is None:
        return None
    return analyser(tree.root_node)
