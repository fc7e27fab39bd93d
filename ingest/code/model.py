"""The values code analysis produces: frozen, plain, JSON-friendly."""

from __future__ import annotations

from dataclasses import dataclass

KINDS = ("function", "class", "shell", "api_template", "config", "sql", "patch")
SEVERITIES = ("low", "medium", "high", "critical")
RISKS = ("none", *SEVERITIES)


@dataclass(frozen=True)
class Parameter:
    """A parameter of a function, method or script: `name`, its type and default as written."""

    name: str
    type: str | None = None
    default: str | None = None


@dataclass(frozen=True)
class Finding:
    """One hit of the static safety scan; `line` is 1-based in the analysed code."""

    rule: str
    line: int
    severity: str
    message: str


@dataclass(frozen=True)
class TemplateParameter:
    """A hard-coded value lifted out of the code; credentials never keep their example. A
    private value keeps none either: ``default`` is what runs in its place (a stand-in, or
    written with other parameters: ``{{home}}/data.csv``), see ingest/snippets/instances.py."""

    name: str
    kind: str
    example: str | None
    default: str | None = None


@dataclass(frozen=True)
class PatchFile:
    """One file a patch touches: hunks, line counts and the symbols the hunks change."""

    path: str
    hunks: int
    added: int
    removed: int
    symbols: tuple[str, ...] = ()


@dataclass(frozen=True)
class Requirement:
    """A package or runtime the code needs, with a PEP 440 specifier when one is known."""

    name: str
    spec: str | None = None


@dataclass(frozen=True)
class SnippetAnalysis:
    """Everything code memory stores about one snippet, computed without a database."""

    language: str
    kind: str
    name: str | None
    signature: str | None
    parameters: tuple[Parameter, ...]
    docstring: str | None
    imports: tuple[str, ...]
    calls: tuple[str, ...]
    size: int
    findings: tuple[Finding, ...]
    risk: str
    template: str
    template_parameters: tuple[TemplateParameter, ...]
    requires: tuple[Requirement, ...]
    patch_files: tuple[PatchFile, ...]
    content_key: str


@dataclass(frozen=True)
class ExtractedSnippet:
    """Code found in free text or a shell action, before analysis (which decides its kind).

    `origin` says where it came from: fence, heredoc, command, sed, python-c, edit, patch.
    `path` is the file a heredoc or edit wrote, when the text says so.
    """

    code: str
    language: str | None
    origin: str
    path: str | None = None


@dataclass(frozen=True)
class Verdict:
    """Whether a snippet can run in a caller's environment, and why."""

    status: str  # compatible | unknown | incompatible
    reasons: tuple[str, ...]


@dataclass(frozen=True)
class Structure:
    """What a language analyser reads from code: the parts of SnippetAnalysis it owns."""

    kind: str | None = None
    name: str | None = None
    signature: str | None = None
    parameters: tuple[Parameter, ...] = ()
    docstring: str | None = None
    imports: tuple[str, ...] = ()
    calls: tuple[str, ...] = ()
    requires: tuple[Requirement, ...] = ()
