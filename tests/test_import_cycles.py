"""No module of ours imports itself back through others: no circles, not even held by lazy
imports, TYPE_CHECKING blocks or strawberry.lazy references."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LAYERS = ("graph", "ingest", "api")


def _name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(("metisgraph", *(parts[:-1] if parts[-1] == "__init__" else parts)))


def _targets(node: ast.AST, modules: set[str]) -> set[str]:
    """The modules of ours one statement or expression makes this module need."""
    if isinstance(node, ast.Import):
        return {a.name for a in node.names if a.name in modules}
    if isinstance(node, ast.ImportFrom) and node.module in modules:
        # `from package import module` needs the module; any other name, the package.
        names = {f"{node.module}.{a.name}" for a in node.names}
        return (names & modules) | ({node.module} if names - modules else set())
    if (  # strawberry.lazy("metisgraph.api.x"): a type imported when the schema is built
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "lazy"
        and node.args
        and isinstance(node.args[0], ast.Constant)
        and node.args[0].value in modules
    ):
        return {str(node.args[0].value)}
    return set()


def import_graph(roots: tuple[str, ...] = LAYERS) -> dict[str, set[str]]:
    paths = [p for layer in roots for p in sorted((ROOT / layer).rglob("*.py"))]
    modules = {_name(p) for p in paths}
    graph: dict[str, set[str]] = {}
    for path in paths:
        tree = ast.parse(path.read_text())
        name = _name(path)
        graph[name] = {t for n in ast.walk(tree) for t in _targets(n, modules)} - {name}
    return graph


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected groups of more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for nxt in sorted(graph.get(node, ())):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            group = []
            while True:
                top = stack.pop()
                group.append(top)
                if top == node:
                    break
            if len(group) > 1:
                found.append(sorted(group))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return sorted(found)


def test_no_import_circles() -> None:
    assert circles(import_graph()) == []


def test_circles_are_found_however_they_are_held() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": {"e"}}
    assert circles(graph) == [["a", "b", "c"]]
    lazy = ast.parse('Kind = Annotated["K", strawberry.lazy("metisgraph.api.graphql.schema")]')
    assert {t for n in ast.walk(lazy) for t in _targets(n, {"metisgraph.api.graphql.schema"})} == {
        "metisgraph.api.graphql.schema"
    }
    inside = ast.parse("def f():\n    from metisgraph.api import cli, Services\n")
    modules = {"metisgraph.api", "metisgraph.api.cli"}
    assert {t for n in ast.walk(inside) for t in _targets(n, modules)} == modules
    submodule = ast.parse("from metisgraph.api import cli")
    assert {t for n in ast.walk(submodule) for t in _targets(n, modules)} == {"metisgraph.api.cli"}
