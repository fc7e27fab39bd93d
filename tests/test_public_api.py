"""Each layer's public face is what it claims, and imports go one way."""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("package", ["metisgraph.graph", "metisgraph.ingest", "metisgraph.api"])
def test_public_names_exist_and_are_sorted(package: str) -> None:
    module = importlib.import_module(package)
    names = module.__all__
    assert names == sorted(names, key=lambda n: (not n.isupper(), n))
    for name in names:
        assert hasattr(module, name), f"{package}.{name}"


def _imports(folder: str) -> set[str]:
    found = set()
    for path in (ROOT / folder).rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module:
                found.add(node.module)
            elif isinstance(node, ast.Import):
                found.update(alias.name for alias in node.names)
    return {name for name in found if name.startswith("metisgraph.")}


def test_graph_imports_nothing_else_of_ours() -> None:
    assert {m for m in _imports("graph") if not m.startswith("metisgraph.graph")} == set()


def test_ingest_does_not_import_the_api() -> None:
    assert {m for m in _imports("ingest") if m.startswith("metisgraph.api")} == set()
