"""analyze_snippet: everything code memory stores about a snippet, without a database."""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Mapping

from metisgraph.ingest.code.dependencies import (
    packages_for_imports,
    pin_to_environment,
    python_runtime,
)
from metisgraph.ingest.code.identity import content_key
from metisgraph.ingest.code.isolation import isolated
from metisgraph.ingest.code.language import CONFIG_LANGUAGES, detect_language, normalize_language
from metisgraph.ingest.code.model import (
    KINDS,
    Parameter,
    Requirement,
    SnippetAnalysis,
    Structure,
    TemplateParameter,
)
from metisgraph.ingest.code.parameterize import Template, parameterize, redact_template
from metisgraph.ingest.code.patch import parse_patch
from metisgraph.ingest.code.python_analysis import analyze_python, parse_python
from metisgraph.ingest.code.safety import risk_of, scan
from metisgraph.ingest.code.treesitter_analysis import analyze_with_treesitter

__all__ = ["analyze_snippet", "needs_review"]

_HTTP_CALLS = re.compile(
    r"^(?:requests|httpx|aiohttp|urllib\.request|urllib3|http\.client|axios|got|superagent|"
    r"node-fetch|net/http|java\.net\.http)(?:\.|$)|^fetch$|HttpClient"
)
_HTTP_COMMANDS = frozenset({"curl", "wget", "http", "https", "xh", "grpcurl"})
_HTTP_HELPERS = frozenset(
    {"jq", "echo", "printf", "export", "set", "cat", "sleep", "tee", "head", "grep"}
)


def analyze_snippet(
    code: str,
    language: str | None = None,
    kind: str | None = None,
    *,
    path: str | None = None,
    environment: Mapping[str, str] | None = None,
    workdir: str | None = None,
) -> SnippetAnalysis:
    """Analyse one snippet: structure, safety findings, template, requirements, identity.

    `path` helps guess the language; `environment` (package → version where the code ran)
    bounds its package requirements; `workdir` is where writes are expected.
    """
    _check_input(code, kind)
    lang = normalize_language(language) or detect_language(code, path)
    template = parameterize(code, lang)

    def clean(text: str) -> str:
        """Lifted secrets out, then the shared redactor as a safety net."""
        return redact_template(template.scrub(text))

    structure = _scrubbed(_structure(code, template, lang), clean)
    requires = pin_to_environment(structure.requires, environment or {})
    findings = tuple(
        dataclasses.replace(f, message=clean(f.message)) for f in scan(code, lang, workdir=workdir)
    )
    text = clean(template.text)
    return SnippetAnalysis(
        language=lang,
        kind=kind or _kind(lang, structure),
        name=structure.name,
        signature=structure.signature,
        parameters=structure.parameters,
        docstring=structure.docstring,
        imports=structure.imports,
        calls=structure.calls,
        size=len(code.strip("\n").splitlines()),
        findings=findings,
        risk=risk_of(findings),
        template=text,
        template_parameters=tuple(_checked_example(p, clean) for p in template.parameters),
        requires=requires,
        patch_files=parse_patch(code) if lang == "diff" else (),
        content_key=content_key(text, lang),
    )


def _check_input(code: str, kind: str | None) -> None:
    if not code.strip():
        raise ValueError("snippet code: must not be empty")
    if kind is not None and kind not in KINDS:
        raise ValueError(f"snippet kind: {kind!r} is not one of {', '.join(KINDS)}")


def needs_review(analysis: SnippetAnalysis) -> bool:
    """Risky snippets start in `pending` review: high or critical risk."""
    return analysis.risk in {"high", "critical"}


def _structure(code: str, template: Template, language: str) -> Structure:
    """Read structure from the template, so parameter defaults show placeholders, not values.

    SQL is read from the original: a bare `{{table}}` is not SQL any more.
    """
    if language == "python":
        return _python_structure(template.text) or _python_structure(code) or Structure()
    source = code if language == "sql" else template.text
    # long code in a worker process: a grammar's worst case holds the interpreter for seconds
    return isolated(analyze_with_treesitter, source, language) or Structure()


def _python_structure(code: str) -> Structure | None:
    structure = analyze_python(code)
    tree = parse_python(code)
    if structure is None or tree is None:
        return None
    runtime = python_runtime(tree, structure.imports)
    requires = packages_for_imports(structure.imports) + ((runtime,) if runtime else ())
    return dataclasses.replace(structure, requires=requires)


def _checked_example(
    parameter: TemplateParameter, clean: Callable[[str], str]
) -> TemplateParameter:
    """An example the redactor would change held a secret: it is not kept."""
    example = parameter.example
    if example is None or clean(example) == example:
        return parameter
    return dataclasses.replace(parameter, example=None)


def _scrubbed(structure: Structure, scrub: Callable[[str], str]) -> Structure:
    """No secret value leaves analysis, whichever text a field was read from."""

    def maybe(value: str | None) -> str | None:
        return scrub(value) if value is not None else None

    return Structure(
        kind=structure.kind,
        name=maybe(structure.name),
        signature=maybe(structure.signature),
        parameters=tuple(
            Parameter(scrub(p.name), maybe(p.type), maybe(p.default)) for p in structure.parameters
        ),
        docstring=maybe(structure.docstring),
        imports=tuple(scrub(i) for i in structure.imports),
        calls=tuple(scrub(c) for c in structure.calls),
        requires=tuple(Requirement(r.name, r.spec) for r in structure.requires),
    )


def _kind(language: str, structure: Structure) -> str:
    """The snippet kind from its language and what it does.

    A script with no function or class of its own is stored as a `function` (an anonymous unit
    of code) unless it mostly calls an HTTP API, which makes it an `api_template`.
    """
    if language == "diff":
        return "patch"
    if language == "sql":
        return "sql"
    if language in CONFIG_LANGUAGES:
        return "config"
    if language == "bash":
        commands = set(structure.calls)
        if commands & _HTTP_COMMANDS and commands <= _HTTP_COMMANDS | _HTTP_HELPERS:
            return "api_template"
        return "shell"
    if structure.kind in {"function", "class"}:
        return structure.kind
    if any(_HTTP_CALLS.search(call) for call in structure.calls):
        return "api_template"
    return "function"
