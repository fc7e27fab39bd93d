"""Every third-party module the code imports is a dependency it declares.

The package's own folders may import only what `[project] dependencies` names; the tests
also what the `test` extra names, the benchmarks also the `bench` extra. A module that
arrives only as someone else's dependency (graphql-core through strawberry, anyio through
starlette) is one upgrade away from vanishing, so it is named where it is used.
"""

from __future__ import annotations

import ast
import re
import sys
import tomllib
from importlib.metadata import packages_distributions
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ("api", "graph", "ingest", "cypher")
# Ours, installed beside the project (`make install` puts sdk/ in the same environment).
FIRST_PARTY = {"metisgraph", "metisgraph_client"}


def _normal(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _requirement_name(spec: str) -> str:
    match = re.match(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)", spec)
    assert match, spec
    return _normal(match.group(1))


def _declared(*extras: str) -> set[str]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    specs = list(project["dependencies"])
    for extra in extras:
        specs += project["optional-dependencies"][extra]
    # Installed without its own dependencies by `make install` and the Dockerfile.
    lines = (ROOT / "requirements-model.txt").read_text().splitlines()
    specs += [line for line in lines if line.strip() and not line.startswith("#")]
    return {_requirement_name(spec) for spec in specs}


def _imported(folder: Path) -> dict[str, Path]:
    """Top-level modules imported anywhere under `folder` (pytest.importorskip too)."""
    # tests/ and bench/ import their own helper modules by bare name; the package never does
    # (a folder such as api/graphql must not hide the graphql-core import).
    local: set[str] = set()
    if folder.name in ("tests", "bench"):
        local = {p.stem for p in folder.glob("*.py")} | {folder.name}
    found: dict[str, Path] = {}
    for path in sorted(folder.rglob("*.py")):
        if "fixtures" in path.relative_to(folder).parts:
            continue
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            names: list[str] = []
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            elif (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr == "importorskip"
                and node.args
                and isinstance(node.args[0], ast.Constant)
                and isinstance(node.args[0].value, str)
            ):
                names = [node.args[0].value]
            for name in names:
                top = name.split(".")[0]
                if top in sys.stdlib_module_names or top in FIRST_PARTY or top in local:
                    continue
                found.setdefault(top, path)
    return found


def _undeclared(imported: dict[str, Path], declared: set[str]) -> list[str]:
    distributions = packages_distributions()
    missing = []
    for module, path in sorted(imported.items()):
        owners = {_normal(d) for d in distributions.get(module, [])}
        if not owners and _normal(module) in declared:
            continue  # an extra not installed here (`make test` leaves out bench's chromadb)
        if not owners:
            missing.append(f"{module} (imported by {path.relative_to(ROOT)}) is not installed")
        elif not owners & declared:
            missing.append(f"{module} (imported by {path.relative_to(ROOT)}) from {sorted(owners)}")
    return missing


@pytest.mark.parametrize("folder", PACKAGE)
def test_the_package_imports_only_declared_dependencies(folder: str) -> None:
    # The torch extra: a model that is not BERT-family runs on sentence-transformers.
    assert _undeclared(_imported(ROOT / folder), _declared("torch")) == []


def test_the_tests_import_only_declared_dependencies() -> None:
    assert _undeclared(_imported(ROOT / "tests"), _declared("test")) == []


def test_the_benchmarks_import_only_declared_dependencies() -> None:
    assert _undeclared(_imported(ROOT / "bench"), _declared("test", "bench")) == []


@pytest.mark.slow
def test_every_declared_dependency_is_used() -> None:
    """A dependency nobody imports is dead weight (jsonschema was one)."""
    distributions = packages_distributions()
    used: set[str] = set()
    for folder in (*PACKAGE, "tests", "bench"):
        for module in _imported(ROOT / folder):
            # a module not installed here counts by its own name (an extra such as bench)
            used |= {_normal(d) for d in distributions.get(module, [_normal(module)])}
    # Named for what they do at run time, not for an import: the Rust codec the driver
    # picks up, the grammar wheels the language pack loads, the model's package data, the
    # tools (ruff, mypy) the lint extra runs, the pytest plugin `make test` runs by `-n`.
    not_imported = {
        "neo4j-rust-ext",
        "tree-sitter-javascript",
        "tree-sitter-typescript",
        "tree-sitter-java",
        "tree-sitter-go",
        "tree-sitter-bash",
        "tree-sitter-sql",
        "ruff",
        "mypy",
        "pytest-xdist",
    }
    unused = _declared("torch", "test", "lint", "bench") - used - not_imported
    assert unused == set()
