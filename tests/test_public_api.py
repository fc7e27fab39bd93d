"""Each layer's public face is what it claims, and imports go one way, through the faces."""

from __future__ import annotations

import ast
import importlib
import types
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
LAYERS = ("graph", "ingest", "api")


def _packages(layer: str) -> list[str]:
    """Every package of a layer (a folder with an __init__.py), by its installed name."""
    found = []
    for init in (ROOT / layer).rglob("__init__.py"):
        relative = init.parent.relative_to(ROOT / layer)
        found.append(".".join((f"metisgraph.{layer}", *relative.parts)))
    return sorted(found)


# A public face: the package itself and every subpackage's __init__ (a room's face).
FACES = [package for layer in LAYERS for package in _packages(layer)]
DATA_PACKAGES = {"metisgraph.ingest.schemas"}  # a folder of JSON files, no code


def _ours(value: object) -> bool:
    """Defined in metisgraph (a constant has no module: it was defined in the face itself)."""
    module = getattr(value, "__module__", None)
    return not isinstance(module, str) or module.startswith("metisgraph.")


@pytest.mark.parametrize("package", [p for p in FACES if p not in DATA_PACKAGES])
def test_each_public_face_exports_what_it_claims(package: str) -> None:
    module = importlib.import_module(package)
    claimed = getattr(module, "__all__", None)
    assert claimed is not None, f"{package} has no explicit __all__"
    assert list(claimed) == sorted(claimed, key=lambda n: (not n.isupper(), n)), package
    assert len(set(claimed)) == len(claimed), f"{package}.__all__ repeats a name"
    missing = [name for name in claimed if not hasattr(module, name)]
    assert missing == [], f"{package}.__all__ claims names it does not have: {missing}"
    unclaimed = sorted(
        name
        for name, value in vars(module).items()
        if not name.startswith("_")
        and not isinstance(value, types.ModuleType)
        and _ours(value)
        and name not in claimed
    )
    assert unclaimed == [], f"{package} holds public names its __all__ leaves out: {unclaimed}"


def _imports(folder: str) -> list[tuple[Path, int, str, list[str]]]:
    """(file, line, module, names) for every import of metisgraph in a folder."""
    found = []
    for path in sorted((ROOT / folder).rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module:
                names = [alias.name for alias in node.names]
                found.append((path, node.lineno, node.module, names))
            elif isinstance(node, ast.Import):
                found.extend((path, node.lineno, alias.name, []) for alias in node.names)
    return [item for item in found if item[2].startswith("metisgraph.")]


def _layer(module: str) -> str:
    return module.split(".")[1]


def test_graph_imports_nothing_else_of_ours() -> None:
    assert {m for _, _, m, _ in _imports("graph") if _layer(m) != "graph"} == set()


def test_ingest_does_not_import_the_api() -> None:
    assert {m for _, _, m, _ in _imports("ingest") if _layer(m) == "api"} == set()


@pytest.mark.parametrize(("layer", "below"), [("api", {"graph", "ingest"}), ("ingest", {"graph"})])
def test_cross_layer_imports_go_through_a_public_face(layer: str, below: set[str]) -> None:
    """api reaches graph and ingest, and ingest reaches graph, only by the names a face exports:
    `from metisgraph.graph import GraphStore`, not `from metisgraph.graph.store import …`."""
    faces = set(FACES)
    wrong = []
    for path, line, module, names in _imports(layer):
        if _layer(module) not in below:
            continue
        where = f"{path.relative_to(ROOT)}:{line}"
        if module not in faces:
            wrong.append(f"{where} imports {module}: import its package's face instead")
            continue
        exported = set(importlib.import_module(module).__all__)
        hidden = [name for name in names if name not in exported]
        if hidden:
            wrong.append(f"{where} takes {hidden} from {module}, whose __all__ leaves them out")
    assert wrong == [], "\n".join(wrong)
