"""The faces import on first use: the command line's help loads no driver, schema or model,
and a face's name means the same thing however its modules were imported."""

from __future__ import annotations

import json
import subprocess
import sys
import types

import pytest

from metisgraph.graph.faces import face_map

# What `metisgraph --help` must not load: Neo4j's driver, the GraphQL stack, the model.
HEAVY = ("neo4j", "strawberry", "starlette", "torch", "sentence_transformers", "onnxruntime")


def _loaded_after(code: str) -> list[str]:
    probe = f"import json, sys\n{code}\nprint(json.dumps(sorted(sys.modules)))"
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    modules = json.loads(done.stdout.strip().splitlines()[-1])
    return sorted({m.split(".")[0] for m in modules} & set(HEAVY))


@pytest.mark.parametrize(
    "arguments", [["--help"], ["errors", "list", "--help"], ["analytics", "--help"]]
)
def test_the_command_line_help_loads_no_driver_schema_or_model(arguments: list[str]) -> None:
    code = (
        f"sys.argv = ['metisgraph', *{arguments!r}]\n"
        "from metisgraph.api.cli import main\n"
        "try:\n    main()\nexcept SystemExit as done:\n    assert done.code == 0, done.code\n"
    )
    assert _loaded_after(code) == []


def test_importing_a_face_loads_none_of_its_modules() -> None:
    assert _loaded_after("import metisgraph.api, metisgraph.graph, metisgraph.ingest") == []


def test_a_command_still_loads_what_it_uses() -> None:
    """The probe can fail: asking the face for the store brings the driver in."""
    assert "neo4j" in _loaded_after("from metisgraph.graph import GraphStore")


def test_a_face_name_beats_the_submodule_of_the_same_name() -> None:
    """`recall` is the function, as it was when the face imported everything up front, even
    after graph/recall.py itself is imported (Python sets a submodule on its package)."""
    code = (
        "import importlib, types\n"
        "import metisgraph.graph as graph\n"
        "importlib.import_module('metisgraph.graph.recall')\n"
        "importlib.import_module('metisgraph.ingest.sanitize')\n"
        "import metisgraph.ingest as ingest\n"
        "assert callable(graph.recall) and not isinstance(graph.recall, types.ModuleType)\n"
        "assert not isinstance(ingest.sanitize, types.ModuleType)\n"
        "from metisgraph.graph import recall\n"
        "assert recall is importlib.import_module('metisgraph.graph.recall').recall\n"
    )
    _loaded_after(code)  # raises on a failed assertion in the child


def test_an_unknown_name_is_an_attribute_error() -> None:
    import metisgraph.graph as graph

    with pytest.raises(AttributeError, match="no attribute 'GraphStor'"):
        _ = graph.GraphStor


def test_the_map_is_the_type_checking_block() -> None:
    source = (
        "import typing\nif typing.TYPE_CHECKING:\n    from a.b import C, d as e\nfrom x import y\n"
    )
    assert face_map(source) == {"C": ("a.b", "C"), "e": ("a.b", "d")}
    assert isinstance(sys.modules["metisgraph.graph"], types.ModuleType)
