"""One piece of code, analysed, as code memory stores it: a PreparedSnippet.

Every text stored is made safe here: templates, tests and examples are code that must run,
so they come from analysis (credentials lifted, the redactor over them), and names,
descriptions and paths go through the sanitizer. What the vector stands for and the
full-text keywords are decided here too.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from metisgraph.graph import SNIPPET_NAME_CHARS
from metisgraph.ingest.code import (
    Requirement,
    SnippetAnalysis,
    TemplateParameter,
    needs_review,
    without_secrets,
)
from metisgraph.ingest.prepare.keywords import identifier_keywords
from metisgraph.ingest.records import SnippetRecord
from metisgraph.ingest.sanitize.abstraction import sanitize
from metisgraph.ingest.snippets.instances import lift_instances
from metisgraph.ingest.snippets.sources import Occurrence
from metisgraph.ingest.snippets.versions import lineage_key

__all__ = ["PreparedSnippet", "embed_text", "prepare_occurrence"]

_EMBED_CHARS = 2000
_TEMPLATE_HEAD = 700
_KEYWORD_SOURCE_CHARS = 6000


@dataclass
class PreparedSnippet:
    """One occurrence of a snippet: the analysed code and where it was recorded.

    Several occurrences may share an id (the same code in several episodes); the write
    merges them into one node. `stored`, `known` and the version fields are filled from the
    graph by `snippets_to_embed` and `place_versions` before the write.
    """

    project: str
    id: str
    text_for_embedding: str
    props: dict[str, Any]
    review_status: str
    requires: tuple[Requirement, ...]
    files: list[dict[str, Any]]
    lineage: str | None
    relation: str | None = None
    relation_given: bool = False
    ran: bool = True
    episode_id: str | None = None
    outcome: str | None = None
    source: str = "user"  # who vouches for it: its episode's source, else stated by a caller
    record: SnippetRecord | None = None
    record_key: str | None = None
    name: str | None = None
    description: str | None = None  # the caller's own words (sanitized), not the docstring
    tests: list[str] = field(default_factory=list)
    examples: list[str] = field(default_factory=list)
    stored: bool | None = None
    known: bool = False
    worked: bool = False  # stored, with a success or a verified environment (before the write)
    version: int = 1
    parent_id: str | None = None
    reason: str | None = None
    test_command: str | None = None  # the test runner the run used (snippets/runner_commands.py)


def prepare_occurrence(
    found: Occurrence, analysis: SnippetAnalysis, project: str, task_id: str | None
) -> PreparedSnippet:
    """An occurrence with its analysis; identity is the project and the content key.

    Instance values in the code, its tests and examples become parameters with runnable
    defaults (snippets/instances.py) before anything is stored or embedded."""
    lifted = lift_instances(
        analysis.template,
        analysis.template_parameters,
        [_clean_code(t, analysis.language) for t in found.tests if t.strip()],
        [_clean_code(e, analysis.language) for e in found.examples if e.strip()],
    )
    analysis = dataclasses.replace(
        analysis, template=lifted.template, template_parameters=lifted.parameters
    )
    name = _clean(found.name) or analysis.name
    # The name is kept in a text index (structural search by name, schema.cypher), which
    # refuses a value past ~32 KB: one the code defines (unbounded there: minified code)
    # keeps its end, what a search by the name's end reads.
    if name is not None and len(name) > SNIPPET_NAME_CHARS:
        name = name[-SNIPPET_NAME_CHARS:]
    description = _clean(found.description)
    files = _files(analysis, found)
    lineage = lineage_key(
        language=analysis.language,
        kind=analysis.kind,
        given_name=_clean(found.name),
        path=_clean(found.path),
        whole_file=found.whole_file,
        defined_name=analysis.name,
        files=[f["path"] for f in files],
        scope=task_id,
    )
    props = _props(analysis, found, files)
    return PreparedSnippet(
        project=project,
        id=f"snippet:{analysis.content_key}",
        text_for_embedding=_embed_text(analysis, name, description or analysis.docstring, files),
        props=props | {"keywords": _keywords(analysis, name, description, files)},
        review_status="pending" if needs_review(analysis) else "unreviewed",
        requires=analysis.requires,
        files=files,
        lineage=lineage,
        relation=found.relation,
        relation_given=found.relation_given,
        ran=found.ran,
        name=name,
        description=description,
        tests=lifted.tests,
        examples=lifted.examples,
    )


def _files(analysis: SnippetAnalysis, found: Occurrence) -> list[dict[str, Any]]:
    """The files the code touches: each file of a patch, or the file it was written to."""
    files: list[dict[str, Any]] = [
        {"path": _clean(f.path) or f.path, "hunks": f.hunks, "added": f.added,
         "removed": f.removed, "symbols": list(f.symbols)}
        for f in analysis.patch_files
    ]  # fmt: skip
    path = _clean(found.path)
    if not files and path:
        files.append({"path": path, "hunks": None, "added": None, "removed": None, "symbols": []})
    return files


def _props(
    analysis: SnippetAnalysis, found: Occurrence, files: list[dict[str, Any]]
) -> dict[str, Any]:
    """What the code is: set when its node is created, the same for every occurrence."""
    return {
        "language": analysis.language,
        "kind": analysis.kind,
        "template": analysis.template,
        "signature": analysis.signature,
        "docstring": analysis.docstring,
        "parameters": json.dumps([vars(p) for p in analysis.parameters]),
        "template_parameters": json.dumps(
            [_template_parameter(p) for p in analysis.template_parameters]
        ),
        "imports": list(analysis.imports),
        "calls": list(analysis.calls),
        "size": analysis.size,
        "risk": analysis.risk,
        "findings": json.dumps([vars(f) for f in analysis.findings]),
        "content_key": analysis.content_key,
        "symbols": list(dict.fromkeys(s for f in files for s in f["symbols"])),
        "origin": found.origin,
    }


def _template_parameter(parameter: TemplateParameter) -> dict[str, Any]:
    """A lifted value: its example is kept only when the sanitizer finds nothing in it; its
    default (a stand-in for a private value) runs in its place."""
    example = parameter.example
    if example is not None and sanitize(example).text != example:
        example = None
    return {
        "name": parameter.name,
        "kind": parameter.kind,
        "example": example,
        "default": parameter.default,
    }


def _embed_text(
    analysis: SnippetAnalysis,
    name: str | None,
    description: str | None,
    files: list[dict[str, Any]],
) -> str:
    return embed_text(
        name=name,
        signature=analysis.signature,
        description=description,
        kind=analysis.kind,
        language=analysis.language,
        imports=analysis.imports,
        calls=analysis.calls,
        paths=[f["path"] for f in files],
        template=analysis.template,
    )


def embed_text(
    *,
    name: str | None,
    signature: str | None,
    description: str | None,
    kind: str | None,
    language: str | None,
    imports: Sequence[str],
    calls: Sequence[str],
    paths: Sequence[str],
    template: str,
) -> str:
    """What the vector of a snippet stands for: its purpose first, then a head of the code.

    Also what a stored snippet is embedded again from (ingest/reembed.py)."""
    parts = [
        name,
        signature,
        description,
        f"{kind} in {language}",
        "imports " + ", ".join(imports) if imports else None,
        "calls " + ", ".join(calls[:30]) if calls else None,
        "files " + ", ".join(paths[:10]) if paths else None,
        template[:_TEMPLATE_HEAD],
    ]
    return "\n".join(p for p in parts if p)[:_EMBED_CHARS]


def _keywords(
    analysis: SnippetAnalysis,
    name: str | None,
    description: str | None,
    files: list[dict[str, Any]],
) -> str:
    words = [
        name,
        analysis.signature,
        description,
        analysis.docstring,
        *analysis.imports,
        *analysis.calls,
        *(f["path"] for f in files),
        *(s for f in files for s in f["symbols"]),
        analysis.template[:_KEYWORD_SOURCE_CHARS],
    ]
    return identifier_keywords(" ".join(w for w in words if w))


def _clean(text: str | None) -> str | None:
    if text is None or not text.strip():
        return None
    return sanitize(text).text


def _clean_code(code: str, language: str) -> str:
    """Tests and examples are code that must still run: credentials lifted as in templates
    and the redactor over the rest, but no abstraction (``order_total(1234567)`` must not
    become ``order_total(<NUM>)``, a test no sandbox can run)."""
    return without_secrets(code, language)
