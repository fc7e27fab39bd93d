"""What code memory's GraphQL returns: a snippet, its parts, its detail and reuse statistics."""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

import strawberry
from strawberry.scalars import JSON

from metisgraph.api.graphql.applies_types import Applies, applies_view
from metisgraph.api.graphql.common_types import FieldError, VerifiedEnvironment
from metisgraph.api.graphql.snippet_service import parse_note
from metisgraph.graph import native_value
from metisgraph.ingest.code import Verdict

__all__ = [
    "BridgeSnippet", "CodeParameter", "Compatibility", "FailedRun", "Finding", "LinkedEpisode",
    "OutcomeNote", "OutcomeStats", "Requirement", "Snippet", "SnippetDetail", "SnippetHit",
    "SnippetRecordResult", "SnippetVersion", "SnippetWhy", "StaleIn", "StructureMatch",
    "TemplateParameter", "TouchedFile", "bridge_snippet", "compatibility_view", "failed_run",
    "notes_view", "snippet_view",
]  # fmt: skip


@strawberry.type
class CodeParameter:
    name: str
    type: str | None
    default: str | None


@strawberry.type(description="A hard-coded value lifted into a parameter; secrets keep no example.")
class TemplateParameter:
    name: str
    kind: str
    example: str | None
    default: str | None = strawberry.field(
        description="What runs in its place when no value is given: a stand-in for a "
        "private value (never the original), possibly written with other parameters"
    )


@strawberry.type(description="A hit of the static safety scan.")
class Finding:
    rule: str
    line: int
    severity: str
    message: str


@strawberry.type(description="A package or runtime the code needs, with the ranges it worked in.")
class Requirement:
    name: str
    spec: str | None
    verified_ranges: list[str]


@strawberry.type(description="Whether a snippet can run in the caller's environment, and why.")
class Compatibility:
    status: str = strawberry.field(description="compatible | unknown | incompatible")
    reasons: list[str]


@strawberry.type(
    description="Where a snippet may no longer work: a package there moved past what it was "
    "verified with, or it failed there after working elsewhere."
)
class StaleIn:
    environment: str = strawberry.field(description="The environment's key")
    package: str | None = strawberry.field(description="The package that moved, when one did")
    verified: list[str] = strawberry.field(
        description="What it was verified with: its requirement's ranges, then the versions "
        "it worked with"
    )
    found: str | None = strawberry.field(description="The package's version there")
    reason: str = strawberry.field(description="moved | failed")
    since: datetime | None


@strawberry.type(description="A reusable unit of code (a template: no raw secrets).")
class Snippet:
    id: str
    project: str
    name: str | None
    language: str
    kind: str
    template: str
    description: str | None
    signature: str | None
    parameters: list[CodeParameter]
    template_parameters: list[TemplateParameter]
    imports: list[str]
    calls: list[str]
    size: int
    risk: str
    findings: list[Finding]
    review_status: str
    pending: bool = strawberry.field(description="Risky code waiting for a reviewer")
    version: int
    latest: bool
    uses: int
    successes: int
    failures: int
    success_rate: float | None
    recorded: int = strawberry.field(description="Distinct episodes and records that hold it")
    files: list[str]
    symbols: list[str]
    tests: list[str]
    examples: list[str]
    test_command: str | None = strawberry.field(
        description="The test command the run it came from used; verifySnippet runs it when "
        "no command is given and the snippet has no stored tests",
    )
    requires: list[Requirement]
    stale_in: list[StaleIn] = strawberry.field(
        description="Environments it may no longer work in (a later success there clears it)"
    )


@strawberry.type(description="A structural condition a snippet met: which name matched which.")
class StructureMatch:
    facet: str
    wanted: str
    found: str


@strawberry.type(description="Why a snippet ranked where it did.")
class SnippetWhy:
    semantic: float | None
    fulltext: float | None
    structure: list[StructureMatch]
    ranks: JSON


@strawberry.type
class SnippetHit:
    snippet: Snippet
    score: float
    why: SnippetWhy
    compatibility: Compatibility
    applies: Applies = strawberry.field(
        description="Whether its conditions (the environments it worked in, the package "
        "ranges it requires) hold in the caller's `environment`; one that does not ranks "
        "after every one that does"
    )


@strawberry.type
class SnippetVersion:
    id: str
    version: int
    latest: bool
    parent_id: str | None
    reason: str | None
    review_status: str | None


@strawberry.type(description="An episode on the other side of the bridge.")
class LinkedEpisode:
    id: str
    relation: str
    outcome: str | None
    summary: str | None
    task_id: str | None
    created_at: datetime | None


@strawberry.type(description="The last sandboxed run that failed (redacted).")
class FailedRun:
    at: str | None
    command: str | None
    exit_code: int | None = strawberry.field(description="Negative: killed by that signal")
    duration_ms: int | None
    output_tail: str | None
    environment_key: str | None


def failed_run(entry: str | None) -> FailedRun | None:
    if not entry:
        return None
    run = json.loads(entry)
    return FailedRun(
        at=run.get("at"), command=run.get("command"), exit_code=run.get("exit_code"),
        duration_ms=run.get("duration_ms"), output_tail=run.get("output_tail"),
        environment_key=run.get("environment"),
    )  # fmt: skip


@strawberry.type
class TouchedFile:
    path: str
    hunks: int | None
    added: int | None
    removed: int | None
    symbols: list[str]


@strawberry.type
class OutcomeNote:
    at: str | None
    success: bool | None
    note: str


@strawberry.type(
    description="A snippet with its versions, the episodes linked to it and where it worked."
)
class SnippetDetail:
    snippet: Snippet
    versions: list[SnippetVersion]
    episodes: list[LinkedEpisode]
    environments: list[VerifiedEnvironment]
    touched: list[TouchedFile]
    notes: list[OutcomeNote]
    compatibility: Compatibility
    last_failure: FailedRun | None


@strawberry.type(description="What happened to a recorded snippet, and the snippet as stored.")
class SnippetRecordResult:
    id: str | None
    status: str = strawberry.field(description="written | unchanged | refused")
    errors: list[FieldError]
    snippet: Snippet | None


@strawberry.type(description="A memory's reuse statistics and confidence after an outcome.")
class OutcomeStats:
    memory_id: str
    kind: str = strawberry.field(description="Episode | Snippet | Pattern")
    uses: int
    successes: int
    failures: int
    success_rate: float | None
    notes: list[OutcomeNote]
    confidence: float | None = strawberry.field(
        description="The Beta posterior's mean: the prior of its source moved by the reports"
    )
    prior_confidence: float | None
    weighted_successes: float = strawberry.field(
        description="Successes as they count: repeats from one task and agent count less"
    )
    weighted_failures: float
    independent_confirmations: int = strawberry.field(
        description="Distinct contexts (project, task, agent) that reported a success"
    )
    last_used_at: datetime | None
    duplicate: bool = strawberry.field(
        description="The idempotency key had been used for this very report: counted once"
    )


def _json_list(value: Any) -> list[dict[str, Any]]:
    loaded = json.loads(value) if isinstance(value, str) and value else []
    return loaded if isinstance(loaded, list) else []


def snippet_view(row: dict[str, Any]) -> Snippet:
    """A stored snippet (as graph/snippets.py returns it) as its GraphQL type."""
    return Snippet(
        id=row["id"], project=row["project"], name=row.get("name"), language=row["language"],
        kind=row["kind"], template=row["template"], description=row.get("description"),
        signature=row.get("signature"),
        parameters=[CodeParameter(name=p["name"], type=p.get("type"), default=p.get("default"))
                    for p in _json_list(row.get("parameters"))],
        template_parameters=[TemplateParameter(name=p["name"], kind=p["kind"],
                                               example=p.get("example"),
                                               default=p.get("default"))
                             for p in _json_list(row.get("template_parameters"))],
        imports=list(row.get("imports") or []), calls=list(row.get("calls") or []),
        size=row.get("size") or 0, risk=row.get("risk") or "none",
        findings=[Finding(rule=f["rule"], line=f["line"], severity=f["severity"],
                          message=f["message"]) for f in _json_list(row.get("findings"))],
        review_status=row.get("review_status") or "unreviewed",
        pending=row.get("review_status") == "pending",
        version=row.get("version") or 1, latest=row.get("latest") is not False,
        uses=row.get("uses") or 0, successes=row.get("successes") or 0,
        failures=row.get("failures") or 0, success_rate=row.get("success_rate"),
        recorded=row.get("recorded") or 0, files=list(row.get("files") or []),
        symbols=list(row.get("symbols") or []), tests=list(row.get("tests") or []),
        examples=list(row.get("examples") or []), test_command=row.get("test_command"),
        requires=[Requirement(name=r["name"], spec=r.get("spec"),
                              verified_ranges=[s for s in r.get("specs") or [] if s])
                  for r in row.get("requires") or []],
        stale_in=[StaleIn(environment=x["environment"], package=x.get("package"),
                          verified=list(x.get("verified") or []), found=x.get("found"),
                          reason=x.get("reason") or "moved", since=native_value(x.get("since")))
                  for x in row.get("stale_in") or []],
    )  # fmt: skip


def compatibility_view(verdict: Verdict) -> Compatibility:
    return Compatibility(status=verdict.status, reasons=list(verdict.reasons))


def notes_view(entries: list[str] | None) -> list[OutcomeNote]:
    notes = [parse_note(e) for e in entries or []]
    return [
        OutcomeNote(at=n.get("at"), success=n.get("success"), note=str(n.get("note") or ""))
        for n in notes
    ]


@strawberry.type(
    description="A snippet across the bridge, judged against the caller's environment."
)
class BridgeSnippet:
    snippet: Snippet
    relation: str = strawberry.field(description="GENERATED | USED | MODIFIED")
    compatible: str = strawberry.field(description="compatible | unknown | incompatible")
    compatibility: Compatibility
    success_rate: float | None
    risk: str
    applies: Applies = strawberry.field(
        description="Whether its conditions (the environments it worked in, the package "
        "ranges it requires) hold in the caller's environment; one that does not comes last"
    )


def bridge_snippet(row: dict[str, Any]) -> BridgeSnippet:
    verdict = Compatibility(status=row["compatible"], reasons=list(row["reasons"]))
    return BridgeSnippet(
        snippet=snippet_view(row),
        relation=row["relation"],
        compatible=row["compatible"],
        compatibility=verdict,
        success_rate=row.get("success_rate"),
        risk=row.get("risk") or "none",
        applies=applies_view(row.get("applies")),
    )
