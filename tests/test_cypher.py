"""Cypher lives in cypher/*.cypher: every statement named, with the mode it runs in."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from metisgraph.graph.cypher import load_queries, query, union_all
from metisgraph.graph.store import GraphStore

ROOT = Path(__file__).resolve().parents[1]
# Clauses that begin or carry a statement; a word like "match" in prose does not count.
_CYPHER = re.compile(
    r"\b(MATCH\s*\(|MERGE\s*\(|UNWIND\s+\$|DETACH\s+DELETE|SHOW\s+(VECTOR\s+)?INDEXES\s+YIELD|"
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


def test_names_go_into_query_text_only_when_they_are_plain_words() -> None:
    probe = query("probe_vector_index_filtered")
    assert probe.slots == {"label", "index"}
    named = probe.naming(label="Episode", index="episode_embedding")
    assert named.slots == set() and "VECTOR INDEX episode_embedding" in named.text
    for bad in ("Episode) DETACH DELETE (n", "x`", "1abc", ""):
        with pytest.raises(ValueError, match="not a label or index name"):
            probe.naming(label=bad, index="episode_embedding")
    with pytest.raises(ValueError, match="no slot"):
        probe.naming(label="Episode", index="episode_embedding", other="x")


@pytest.mark.anyio
async def test_a_query_with_an_empty_slot_is_never_sent() -> None:
    store = GraphStore(driver=None)  # type: ignore[arg-type]  # refused before any I/O
    with pytest.raises(ValueError, match="not filled"):
        await store.run_query(query("probe_vector_index_filtered"), {})


def test_union_all_joins_read_queries_under_one_cypher_version() -> None:
    parts = [
        query("server_components"),
        query("probe_vector_index_filtered").naming(label="Error", index="error_embedding"),
    ]
    joined = union_all(parts)
    assert joined.mode == "read" and joined.text.startswith("CYPHER 25\n")
    assert joined.text.count("CYPHER 25") == 1 and joined.text.count("UNION ALL") == 1
    with pytest.raises(ValueError, match="read queries"):
        union_all([query("drop_index")])
