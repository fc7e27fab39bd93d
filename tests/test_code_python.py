"""Python structure with `ast`: signature, parameters, docstring, imports, resolved calls, needs."""

from __future__ import annotations

from pathlib import Path

import pytest

from metisgraph.ingest.code import Parameter, Requirement, analyze_snippet

FIXTURES = Path(__file__).parent / "fixtures" / "code"


def test_function_signature_parameters_and_docstring() -> None:
    analysis = analyze_snippet((FIXTURES / "function.py").read_text())
    assert (analysis.language, analysis.kind, analysis.name) == ("python", "function", "load_table")
    assert analysis.signature == (
        "def load_table(url: str, table: str, limit: int | None=None, *columns: str, "
        "chunksize: int=1000, **options) -> pd.DataFrame"
    )
    assert analysis.parameters == (
        Parameter("url", "str", None),
        Parameter("table", "str", None),
        Parameter("limit", "int | None", "None"),
        Parameter("*columns", "str", None),
        Parameter("chunksize", "int", "1000"),
        Parameter("**options", None, None),
    )
    assert analysis.docstring == "Read a table into a DataFrame, newest rows first."
    assert analysis.size == 16


def test_imports_and_calls_resolved_through_aliases() -> None:
    analysis = analyze_snippet((FIXTURES / "function.py").read_text())
    assert analysis.imports == ("__future__", "pandas", "sqlalchemy", "tomllib")
    assert analysis.calls == (
        "ValueError",
        "sqlalchemy.create_engine",
        "pandas.read_sql",
        "list",
        "frame.head",
    )


def test_requirements_map_imports_to_distributions_and_syntax_to_python() -> None:
    analysis = analyze_snippet((FIXTURES / "function.py").read_text())
    # tomllib is 3.11+; the walrus would need 3.8; `int | None` is lazy under __future__.
    assert analysis.requires == (
        Requirement("pandas"),
        Requirement("sqlalchemy"),
        Requirement("python", ">=3.11"),
    )
    code = "import sklearn.linear_model\nimport yaml\nfrom PIL import Image\nimport os\n"
    assert [r.name for r in analyze_snippet(code, "python").requires] == [
        "scikit-learn",
        "pyyaml",
        "pillow",
    ]


def test_runtime_constraints_from_syntax_both_ways() -> None:
    def python_spec(code: str) -> str | None:
        found = [r.spec for r in analyze_snippet(code, "python").requires if r.name == "python"]
        return found[0] if found else None

    assert python_spec("def f(x, /):\n    return x\n") == ">=3.8"
    assert python_spec("match x:\n    case 1:\n        pass\n") == ">=3.10"
    assert python_spec("def f(x: int | None):\n    pass\n") == ">=3.10"
    assert python_spec("def f(x: list[int]):\n    pass\n") == ">=3.9"
    assert python_spec("import distutils.core\nif (n := 2):\n    pass\n") == ">=3.8,<3.12"
    assert python_spec("print(1)\n") is None


def test_class_takes_its_parameters_from_init() -> None:
    analysis = analyze_snippet((FIXTURES / "cache.py").read_text())
    assert (analysis.kind, analysis.name) == ("class", "LRUCache")
    assert analysis.signature == (
        "class LRUCache(dict): __init__(capacity: int=128, *, ttl: float | None=None)"
    )
    assert analysis.parameters == (
        Parameter("capacity", "int", "128"),
        Parameter("ttl", "float | None", "None"),
    )
    assert analysis.docstring == "A small least-recently-used cache."


def test_async_function_and_indented_fragment() -> None:
    code = "    async def fetch(session, url):\n        return await session.get(url)\n"
    analysis = analyze_snippet(code, "python")
    assert analysis.signature == "async def fetch(session, url)"
    assert analysis.calls == ("session.get",)


def test_script_without_definitions_is_a_function_or_an_api_template() -> None:
    script = "import sys\nprint(sys.argv)\n"
    assert analyze_snippet(script, "python").kind == "function"
    api = 'import requests\nr = requests.post("https://api.example.com/v1/jobs", json={})\n'
    assert analyze_snippet(api, "python").kind == "api_template"


def test_code_that_does_not_parse_still_gets_an_analysis() -> None:
    broken = "def half(:\n    return os.system('x')\n"
    analysis = analyze_snippet(broken, "python")
    assert (analysis.name, analysis.signature, analysis.calls) == (None, None, ())
    assert [f.rule for f in analysis.findings] == ["os-system"]
    assert analysis.template == broken


def test_foreign_code_that_breaks_cpythons_ast_converter_is_unparsed_not_fatal(monkeypatch):
    # CI once failed a whole ingest on "SystemError: AST constructor recursion depth
    # mismatch" (CPython 3.11, gh-106905: two worker threads parsing at once). Whatever
    # the converter raises, one record's code is "not Python", never an aborted batch.
    import ast

    from metisgraph.ingest.code.python_analysis import parse_source
    from metisgraph.ingest.tools.libraries import libraries_in_code

    def broken(*args, **kwargs):
        raise SystemError("AST constructor recursion depth mismatch (before=36, after=34)")

    monkeypatch.setattr(ast, "parse", broken)
    assert parse_source("import numpy\n") is None
    assert [u.name for u in libraries_in_code("import numpy\n", "python")] == ["numpy"]  # by text


@pytest.mark.slow
def test_parsing_from_many_threads_at_once_gives_every_thread_its_tree():
    from concurrent.futures import ThreadPoolExecutor

    from metisgraph.ingest.code.python_analysis import parse_source

    sources = [
        f"import mod{i}\n" + "".join(f"def f{j}(a):\n    return [a for _ in range({j})]\n"
                                     for j in range(40))
        for i in range(16)
    ]  # fmt: skip
    with ThreadPoolExecutor(8) as pool:
        trees = list(pool.map(parse_source, sources * 8))
    assert all(tree is not None for tree in trees)
    assert [t.body[0].names[0].name for t in trees[:16]] == [f"mod{i}" for i in range(16)]
