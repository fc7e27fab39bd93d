"""JavaScript, TypeScript, Java, Go, shell and SQL structure through real tree-sitter grammars."""

from __future__ import annotations

from pathlib import Path

import pytest

from metisgraph.ingest.code import Parameter, Requirement, analyze_snippet, grammars
from metisgraph.ingest.code.grammars import GRAMMAR_PACKAGES, parser_for

FIXTURES = Path(__file__).parent / "fixtures" / "code"


def _analyse(name: str):  # type: ignore[no-untyped-def]
    return analyze_snippet((FIXTURES / name).read_text(), path=name)


@pytest.mark.parametrize("language", sorted(GRAMMAR_PACKAGES))
def test_every_grammar_is_installed_and_parses(language: str) -> None:
    parser = parser_for(language)
    assert parser is not None
    assert parser.parse(b"x").root_node is not None


def test_javascript_function_imports_and_resolved_calls() -> None:
    analysis = _analyse("fetch_user.js")
    assert (analysis.language, analysis.kind, analysis.name) == (
        "javascript",
        "function",
        "fetchUser",
    )
    assert analysis.signature == "async function fetchUser(id, options = {}, ...fields)"
    assert analysis.parameters == (
        Parameter("id"),
        Parameter("options", None, "{}"),
        Parameter("...fields"),
    )
    assert analysis.docstring == "Fetch one user, merging local overrides."
    assert analysis.imports == ("axios", "fs", "lodash")
    assert analysis.calls == ("JSON.parse", "fs.readFile", "axios.get", "lodash.merge")
    assert analysis.requires == (Requirement("axios"), Requirement("lodash"))


def test_typescript_parameter_types_optional_and_defaults() -> None:
    analysis = _analyse("totals.ts")
    assert (analysis.language, analysis.name) == ("typescript", "orderTotal")
    assert analysis.parameters == (
        Parameter("items", "Item[]", None),
        Parameter("taxRate?", "number", None),
        Parameter("currency", "string", '"EUR"'),
    )
    assert analysis.signature is not None and analysis.signature.endswith("): number")
    assert analysis.docstring == "Sum an order, with tax."
    assert "node:path.join" in analysis.calls
    assert analysis.requires == (Requirement("pg"),)  # node:path is Node's own


def test_java_class_constructor_parameters_and_static_imports() -> None:
    analysis = _analyse("Retry.java")
    assert (analysis.language, analysis.kind, analysis.name) == ("java", "class", "Retry")
    assert analysis.signature == "public class Retry"
    assert analysis.parameters == (Parameter("attempts", "int"), Parameter("backoff", "Duration"))
    assert analysis.docstring == "Retries a call with a fixed back-off."
    assert analysis.imports == (
        "java.time.Duration",
        "java.util.concurrent.Callable",
        "java.lang.Thread.sleep",
    )
    assert "java.lang.Thread.sleep" in analysis.calls
    assert "java.time.Duration.ofSeconds" in analysis.calls


def test_java_method_on_its_own() -> None:
    analysis = analyze_snippet(
        "public int add(int a, int b) {\n  return Math.addExact(a, b);\n}\n", "java"
    )
    assert (analysis.kind, analysis.name) == ("function", "add")
    assert analysis.parameters == (Parameter("a", "int"), Parameter("b", "int"))
    assert analysis.calls == ("Math.addExact",)


def test_go_function_generics_imports_and_modules() -> None:
    analysis = _analyse("fetch.go")
    assert (analysis.language, analysis.kind, analysis.name) == ("go", "function", "FetchAll")
    assert analysis.signature == (
        "func FetchAll[T any](urls []string, retries int, decode func([]byte) T) ([]T, error)"
    )
    assert analysis.parameters == (
        Parameter("urls", "[]string"),
        Parameter("retries", "int"),
        Parameter("decode", "func([]byte) T"),
    )
    assert (
        analysis.docstring
        == "FetchAll downloads every URL concurrently.\nIt stops at the first error."
    )
    assert analysis.calls[:2] == ("net/http.Get", "github.com/pkg/errors.Wrap")
    assert analysis.requires == (
        Requirement("github.com/pkg/errors"),
        Requirement("golang.org/x/sync"),
        Requirement("go", ">=1.18"),
    )


def test_shell_commands_sourced_files_and_positional_parameters() -> None:
    analysis = _analyse("backup.sh")
    assert (analysis.language, analysis.kind, analysis.name) == ("bash", "shell", "backup")
    assert analysis.calls == ("source", "pg_dump", "gzip", "backup", "echo")
    assert analysis.imports == ("./env.sh",)
    assert analysis.parameters == (
        Parameter("target", None, "{{path}}"),
        Parameter("database", None, None),
    )
    assert analysis.docstring == "Back up one database to a compressed dump."


def test_http_only_shell_is_an_api_template() -> None:
    code = "curl -s -X POST https://api.example.com/v2/jobs -d '{\"n\": 1}' | jq .id\n"
    assert analyze_snippet(code, "bash").kind == "api_template"


def test_sql_invocations_bind_parameters_and_created_name() -> None:
    analysis = _analyse("report.sql")
    assert (analysis.language, analysis.kind) == ("sql", "sql")
    assert analysis.calls == ("now", "sum", "extract")
    assert analysis.parameters == (Parameter("region"),)
    assert analysis.docstring == "Top customers of one region, by revenue."
    created = analyze_snippet("CREATE TABLE audit (id INT, at TIMESTAMP);", "sql")
    assert (created.name, created.signature) == ("audit", "CREATE TABLE audit")


def test_missing_grammar_still_gives_language_kind_findings_and_template(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # A machine without the Go grammar wheel: analysis degrades, it does not fail.
    parser_for.cache_clear()
    monkeypatch.setitem(
        grammars.GRAMMAR_PACKAGES, "go", ("tree_sitter_go_is_not_installed", "language")
    )
    try:
        code = (
            "package main\n\nfunc main() {\n"
            '\tpassword := "go-secret-1"\n\texec.Command("sh", "-c", x)\n}\n'
        )
        analysis = analyze_snippet(code, "go")
    finally:
        parser_for.cache_clear()
    assert (analysis.language, analysis.kind, analysis.name) == ("go", "function", None)
    assert {f.rule for f in analysis.findings} == {"hardcoded-credential", "subprocess-shell"}
    assert "go-secret-1" not in analysis.template
    assert analysis.content_key


def test_a_language_without_any_grammar() -> None:
    analysis = analyze_snippet('fn main() {\n    let token = "rust-secret-2";\n}\n', "rust")
    assert (analysis.language, analysis.name, analysis.calls) == ("rust", None, ())
    assert "rust-secret-2" not in analysis.template
