"""Code memory as a service: record a snippet, search, read one; report how reuse of any
memory went.

The GraphQL resolvers call these; they check what a caller may act on and raise UserError
with a message naming the field. Caller text (queries, notes) is sanitized like memory.
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from metisgraph.api.graphql.context import UserError
from metisgraph.api.services import Services
from metisgraph.graph import (
    CallerConditions,
    OutcomeReport,
    ReportConflict,
    SnippetHit,
    SnippetSearch,
    Vector,
    existing_episode_hashes,
    record_outcome,
    search_snippets,
    snippet_detail,
)
from metisgraph.ingest import EnvironmentInput
from metisgraph.ingest.adapters import FieldError, Parsed, SourceRef, validate_record
from metisgraph.ingest.code import Verdict, normalize_language
from metisgraph.ingest.environment import extract_environment
from metisgraph.ingest.question import environment_query
from metisgraph.ingest.sanitize import sanitize
from metisgraph.ingest.snippets import verdict_for

__all__ = [
    "MAX_K",
    "MAX_KEY_CHARS",
    "MAX_NOTE_CHARS",
    "MAX_STRUCTURE",
    "OutcomeArguments",
    "RecordedSnippet",
    "Structure",
    "parse_note",
    "read_snippet",
    "record_snippet",
    "report_outcome",
    "search",
]

MAX_K = 100
MAX_STRUCTURE = 20  # names of one facet (imports, calls, symbols, ...) asked for at once
MAX_NOTE_CHARS = 2000
MAX_KEY_CHARS = 200
_MAX_NAME_CHARS = 256


@dataclass
class RecordedSnippet:
    id: str | None
    status: str  # written | unchanged | refused
    errors: list[FieldError]
    snippet: dict[str, Any] | None


async def record_snippet(services: Services, raw: dict[str, Any]) -> RecordedSnippet:
    """Validate a snippet record like a file line, ingest it, and read the stored node back."""
    item = validate_record({"record_type": "snippet", **raw}, SourceRef("graphql", None, "input"))
    if not isinstance(item, Parsed):
        return RecordedSnippet(None, "refused", list(item.errors), None)
    summary = await services.ingestor.ingest([item], keep_results=True)
    done = next(r for r in summary.results if r.kind == "snippet")
    if done.id is None:
        errors = [FieldError("code", e.removeprefix("code: ")) for e in done.errors]
        return RecordedSnippet(None, "refused", errors, None)
    stored = await snippet_detail(services.store, item.record.project, done.id)
    return RecordedSnippet(done.id, done.status, [], stored)


async def search(
    services: Services,
    *,
    project: str,
    query: str | None,
    language: str | None,
    kind: str | None,
    imports: list[str],
    calls: list[str],
    k: int,
    environment: EnvironmentInput | None,
    require_verified: bool = False,
    embed_after: asyncio.Event | None = None,
    structure: Structure | None = None,
    hide_pending: bool = False,
) -> list[tuple[SnippetHit, Verdict]]:
    """Snippets for a query and/or structure, each with its verdict for `environment`;
    with `require_verified`, only those a sandboxed run passed in an environment that
    does not contradict `environment`. ``embed_after``: the questions' lane is one thread;
    the query waits for this before it is embedded (a caller's more urgent embedding goes
    first), while its words are searched. ``structure``: the signature, files and symbols
    asked for besides imports and calls. ``hide_pending``: leave out risky snippets waiting
    for a reviewer (a caller who may not review the project: as recall does)."""
    if not 1 <= k <= MAX_K:
        raise UserError(f"k must be between 1 and {MAX_K}, got {k}")
    wanted_imports = _names("imports", imports)
    wanted_calls = _names("calls", calls)
    shape = (structure or Structure()).checked()
    text = sanitize(query).text.strip() if query and query.strip() else None
    if text is None and not (wanted_imports or wanted_calls or shape.asked):
        raise UserError(
            "give a query, imports, calls, symbols, files, a name or parameters to search "
            "snippets by"
        )
    q = SnippetSearch(
        project=project,
        text=text,
        language=normalize_language(language) or (language.strip().lower() if language else None),
        kind=kind,
        imports=tuple(wanted_imports),
        calls=tuple(wanted_calls),
        symbols=tuple(shape.symbols),
        files=tuple(shape.files),
        name=shape.name,
        parameters=tuple(shape.parameters),
        k=min(MAX_K, 2 * k) if hide_pending else k,  # room for the pending ones left out
        verified=require_verified,
        environment=_compatible_with(environment) if require_verified else None,
        caller=_caller(environment),
        judge=lambda snippet: verdict_for(snippet, environment),
    )
    embedding = _query_vector(services, text, project, embed_after) if text else None
    hits = await search_snippets(
        services.store, q, vector_filters=services.vector_filters, embedding=embedding
    )
    if hide_pending:
        hits = [hit for hit in hits if hit.snippet.get("review_status") != "pending"][:k]
    return [(hit, verdict_for(hit.snippet, environment)) for hit in hits]


async def _query_vector(
    services: Services, text: str, project: str, after: asyncio.Event | None
) -> Vector:
    """A caller waits: the questions' lane (remembered per project), not ingest's."""
    if after is not None:
        await after.wait()
    found = await services.embedder.aencode_queries([text], tenant=project)
    return Vector(found[0].tolist())


def _caller(environment: EnvironmentInput | None) -> CallerConditions | None:
    stated = environment_query(environment)
    return stated.conditions() if stated is not None else None


def _compatible_with(environment: EnvironmentInput | None) -> dict[str, str | None] | None:
    """The caller's environment as verified ones are matched: normalised like ingest's."""
    stated = extract_environment((), environment) if environment is not None else None
    if stated is None:
        return None
    version = stated.runtime_version
    minor = ".".join(version.lstrip("v").split(".")[:2]) if version else None
    return {"os": stated.os, "arch": stated.arch, "runtime": stated.runtime,
            "runtime_minor": minor}  # fmt: skip


@dataclass(frozen=True)
class Structure:
    """The structural facets besides imports and calls, as the caller gave them."""

    symbols: list[str] = field(default_factory=list)
    files: list[str] = field(default_factory=list)
    name: str | None = None
    parameters: list[str] = field(default_factory=list)

    def checked(self) -> Structure:
        """Blank names dropped; too many, or too long, refused naming the argument."""
        name = _names("name", [self.name] if self.name else [])
        return Structure(
            symbols=_names("symbols", self.symbols),
            files=[f.removeprefix("./") for f in _names("files", self.files)],
            name=name[0] if name else None,
            parameters=_names("parameters", self.parameters),
        )

    @property
    def asked(self) -> bool:
        return bool(self.symbols or self.files or self.name or self.parameters)


def _names(field: str, values: list[str]) -> list[str]:
    names = [v.strip() for v in values if v.strip()]
    if len(names) > MAX_STRUCTURE:
        raise UserError(f"{field}: at most {MAX_STRUCTURE} names, got {len(names)}")
    too_long = [n for n in names if len(n) > _MAX_NAME_CHARS]
    if too_long:
        raise UserError(f"{field}: names are at most {_MAX_NAME_CHARS} characters")
    return names


async def read_snippet(services: Services, project: str, snippet_id: str) -> dict[str, Any] | None:
    return await snippet_detail(services.store, project, snippet_id)


@dataclass(frozen=True)
class OutcomeArguments:
    """recordOutcome's arguments, as the caller gave them."""

    project: str
    memory_id: str
    success: bool
    applied_in: str | None = None
    applied_in_project: str | None = None
    note: str | None = None
    idempotency_key: str | None = None


async def report_outcome(services: Services, given: OutcomeArguments, agent: str) -> dict[str, Any]:
    """Report whether reusing a memory (episode, snippet or pattern) worked: stored once per
    idempotency key, with the episode it was applied in; the memory's statistics after it.
    The note is sanitized and kept with the time."""
    _check_outcome(given)
    applied_project = given.applied_in_project or given.project
    if given.applied_in is not None:
        found = await existing_episode_hashes(
            services.store, [{"project": applied_project, "id": given.applied_in}]
        )
        if not found:
            raise UserError(
                f"appliedIn: no episode {given.applied_in!r} in project {applied_project!r}"
            )
    entry = None
    if given.note is not None and given.note.strip():
        entry = json.dumps({"at": datetime.now(UTC).isoformat(), "success": given.success,
                            "note": sanitize(given.note).text})  # fmt: skip
    report = OutcomeReport(
        project=given.project, memory_id=given.memory_id, success=given.success,
        key=given.idempotency_key, applied_in=given.applied_in,
        applied_project=applied_project, agent=agent, note=entry,
    )  # fmt: skip
    try:
        row = await record_outcome(services.store, report)
    except ReportConflict as conflict:
        raise UserError(str(conflict)) from None
    if row is None:
        raise UserError(
            f"memoryId: no episode, snippet or pattern {given.memory_id!r} in project "
            f"{given.project!r}"
        )
    return row


def _check_outcome(given: OutcomeArguments) -> None:
    if given.note is not None and len(given.note) > MAX_NOTE_CHARS:
        raise UserError(f"note: at most {MAX_NOTE_CHARS} characters, got {len(given.note)}")
    key = given.idempotency_key
    if key is not None and not (key.strip() and len(key) <= MAX_KEY_CHARS):
        raise UserError(f"idempotencyKey: 1 to {MAX_KEY_CHARS} characters, not blank")
    if given.applied_in is not None and not given.applied_in.strip():
        raise UserError("appliedIn: must not be empty")
    same_project = (given.applied_in_project or given.project) == given.project
    if given.applied_in == given.memory_id and same_project:
        raise UserError("appliedIn: a memory is not applied in itself; name the episode it helped")


def parse_note(entry: str) -> dict[str, Any]:
    """A stored outcome note back as {at, success, note}."""
    value = json.loads(entry)
    return value if isinstance(value, dict) else {"at": None, "success": None, "note": str(value)}
