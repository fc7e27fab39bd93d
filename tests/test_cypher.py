"""Cypher lives in cypher/*.cypher: every statement named, with the mode it runs in."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from metisgraph.graph.cypher import load_queries

ROOT = Path(__file__).resolve().parents[1]
# Clauses that begin or carry a statement; a word like "match" in prose does not count.
_CYPHER = re.compile(
    r"\b(MATCH\s*\(|MERGE\s*\(|UNWIND\s+\$|DETACH\s+DELETE|SHOW\s+(VECTOR\s+)?INDEXES|"
    r"CALL\s+(db|dbms)\.|FOR\s*\(\w+:\w+\)|DROP\s+INDEX\s+\$|RETURN\s+\w+\s+AS\b)"
)


def _docstrings(tree: ast.AST) -> set[int]:
    """ids of the constants that are docstrings (they may show Cypher as an example)."""
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                found.add(id(body[0].value))
    return found


def _cypher_in(path: Path) -> list[str]:
    """file:line of each string (not a docstring) that holds a Cypher statement."""
    tree = ast.parse(path.read_text())
    docs = _docstrings(tree)
    return [
        f"{path.name}:{node.lineno}"
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant)
        and isinstance(node.value, str)
        and id(node) not in docs
        and _CYPHER.search(node.value)
    ]


@pytest.mark.parametrize("folder", ["graph", "api", "ingest", "bench"])
def test_no_cypher_statement_outside_the_cypher_files(folder: str) -> None:
    found = [hit for path in sorted((ROOT / folder).rglob("*.py")) for hit in _cypher_in(path)]
    assert found == []


def test_the_guard_sees_a_statement_in_a_string_but_not_in_a_docstring(tmp_path: Path) -> None:
    source = tmp_path / "x.py"
    source.write_text('"""Doc: MATCH (n) RETURN n AS n."""\nQ = "MATCH (e:Episode) RETURN e"\n')
    assert _cypher_in(source) == ["x.py:2"]


def test_every_named_query_declares_a_mode() -> None:
    queries = load_queries()
    assert {"server_components", "drop_index", "recall_expand"} <= set(queries)
    for q in queries.values():
        assert q.mode in {"read", "write", "batch"}, q.name
        assert "// mode:" not in q.text and q.text.strip(), q.name
