"""Public faces that import on first use: a face's ``if TYPE_CHECKING:`` block is its map.

A face (a package's ``__init__``) writes what it exports as imports under
``if TYPE_CHECKING:`` — what mypy and a reader see — lists them in ``__all__``, and ends with
``lazy_face(__name__)`` under ``if not TYPE_CHECKING:``. The first use of a name imports the
one module that defines it, so the command line's help and the light corners of a layer
never pay for Neo4j's driver, strawberry or the embedding model.

A face name that is also a submodule's name (``metisgraph.graph.recall``, the function, and
``graph/recall.py``) stays the face's name when the submodule is imported later, as it did
when the face imported everything up front.
"""

from __future__ import annotations

import ast
import importlib
import sys
import types
from importlib import resources

__all__ = ["face_map", "lazy_face"]


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def face_map(source: str) -> dict[str, tuple[str, str]]:
    """Exported name -> (module, its name there), from the top-level TYPE_CHECKING block."""
    found: dict[str, tuple[str, str]] = {}
    for node in ast.parse(source).body:
        if not (isinstance(node, ast.If) and _is_type_checking(node.test)):
            continue
        for statement in node.body:
            if isinstance(statement, ast.ImportFrom) and statement.module and not statement.level:
                for alias in statement.names:
                    found[alias.asname or alias.name] = (statement.module, alias.name)
    return found


class _Face(types.ModuleType):
    """A package whose exported names are imported when first asked for."""

    _names: dict[str, tuple[str, str]]

    def __getattr__(self, name: str) -> object:
        where = self.__dict__.get("_names", {}).get(name)
        if where is None:
            raise AttributeError(f"module {self.__name__!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(where[0]), where[1])
        self.__dict__[name] = value  # the next use is a plain lookup
        return value

    def __setattr__(self, name: str, value: object) -> None:
        # Importing a submodule sets it on its package; a face name of the same spelling
        # (`recall`, the function) keeps meaning what the face says.
        if isinstance(value, types.ModuleType) and name in self.__dict__.get("_names", {}):
            return
        super().__setattr__(name, value)


def lazy_face(package: str) -> None:
    """Make the package ``package`` (a face, being imported) import its names on first use."""
    module = sys.modules[package]
    source = resources.files(package).joinpath("__init__.py").read_text(encoding="utf-8")
    names = face_map(source)
    missing = sorted(set(getattr(module, "__all__", ())) - names.keys() - module.__dict__.keys())
    if missing:
        raise ImportError(f"{package}.__all__ names what it does not import: {missing}")
    module.__dict__["_names"] = names
    module.__class__ = _Face
