"""GraphQL types more than one area uses, each defined once: the record enums, an environment
(stated by a caller, or stored), a snippet given inline, a field's error.

The areas (record, memory, recall, snippet, verification types) import from here; the
schema module merges the areas. Nothing here imports an area, so no module imports itself
back.
"""

from __future__ import annotations

from datetime import datetime
from enum import Enum
from typing import Any

import strawberry
from strawberry.scalars import JSON

from metisgraph.api.graphql.context import UserError
from metisgraph.graph import native_value
from metisgraph.ingest import EnvironmentInput as EnvironmentRecord
from metisgraph.ingest import Outcome, SnippetKind, SnippetRelation, Source, TaskStatus

__all__ = [
    "CallerEnvironment",
    "Environment",
    "EnvironmentInput",
    "FieldError",
    "Outcome",
    "PackageVersion",
    "SnippetInput",
    "SnippetKind",
    "SnippetRelation",
    "Source",
    "TaskStatus",
    "ToolStats",
    "VerifiedEnvironment",
    "environment_record",
    "environment_view",
    "plain",
    "tool_stats_view",
    "verified_environment_view",
]

# The record enums are the GraphQL enums (registering returns the same classes).
for _enum in (Outcome, Source, TaskStatus, SnippetKind, SnippetRelation):
    strawberry.enum(_enum)


@strawberry.type
class FieldError:
    field: str
    message: str


@strawberry.input(description="An environment stated by the caller.")
class EnvironmentInput:
    os: str | None = None
    os_version: str | None = None
    arch: str | None = None
    runtime: str | None = None
    runtime_version: str | None = None
    packages: JSON | None = strawberry.field(default=None, description="{name: version}")


@strawberry.input(
    description="Deprecated: the same as EnvironmentInput, the name recall's context took "
    "first. The caller's environment: compatibility is judged against it."
)
class CallerEnvironment(EnvironmentInput):
    pass


@strawberry.input(description="Code recorded with an episode.")
class SnippetInput:
    code: str
    language: str | None = None
    kind: SnippetKind | None = None
    name: str | None = None
    description: str | None = None
    relation: SnippetRelation | None = None
    tests: list[str] | None = None
    examples: list[str] | None = None


@strawberry.type
class PackageVersion:
    name: str
    version: str | None


@strawberry.type(description="The environment an episode ran in.")
class Environment:
    key: str
    os: str | None
    os_version: str | None
    arch: str | None
    runtime: str | None
    runtime_version: str | None
    packages: list[PackageVersion]


@strawberry.type(
    description="An environment the snippet worked in; a sandboxed pass adds its evidence."
)
class VerifiedEnvironment(Environment):
    verified_at: datetime | None = None
    command: str | None = None
    exit_code: int | None = None
    duration_ms: int | None = None
    output_tail: str | None = None


def plain(value: Any) -> Any:
    """Strawberry input objects as the plain JSON shape the record models validate."""
    if isinstance(value, Enum):
        return value.value
    if isinstance(value, list):
        return [plain(v) for v in value]
    if hasattr(value, "__strawberry_definition__"):
        return {
            k: plain(v) for k, v in vars(value).items() if v is not None and not k.startswith("_")
        }
    return value


def environment_record(given: EnvironmentInput | None) -> EnvironmentRecord | None:
    """A stated environment as the record ingest reads; versions are text.

    Packages other than {name: version} are the caller's error, named, never dropped.
    """
    if given is None:
        return None
    packages: object = given.packages if given.packages is not None else {}
    if not isinstance(packages, dict):
        raise UserError("environment.packages: expected an object {name: version}")
    return EnvironmentRecord(
        os=given.os,
        os_version=given.os_version,
        arch=given.arch,
        runtime=given.runtime,
        runtime_version=given.runtime_version,
        packages={str(name): str(version) for name, version in packages.items()},
    )


def _fields(row: dict[str, Any]) -> dict[str, Any]:
    packages = [
        PackageVersion(name=p["name"], version=p.get("version")) for p in row.get("packages") or []
    ]
    return {
        "key": row["key"],
        "os": row.get("os"),
        "os_version": row.get("os_version"),
        "arch": row.get("arch"),
        "runtime": row.get("runtime"),
        "runtime_version": row.get("runtime_version"),
        "packages": packages,
    }


def environment_view(row: dict[str, Any] | None) -> Environment | None:
    """A stored environment (as graph returns it) as its GraphQL type."""
    return None if not row else Environment(**_fields(row))


def verified_environment_view(row: dict[str, Any]) -> VerifiedEnvironment:
    """A stored environment with a VERIFIED_IN's evidence, when it has one."""
    return VerifiedEnvironment(
        **_fields(row),
        verified_at=native_value(row.get("verified_at")),
        command=row.get("command"),
        exit_code=row.get("exit_code"),
        duration_ms=row.get("duration_ms"),
        output_tail=row.get("output_tail"),
    )


@strawberry.type(description="A tool used in a project, with how its uses went there.")
class ToolStats:
    name: str
    kind: str | None
    uses: int = strawberry.field(description="Episodes of the project that used it")
    successes: int
    failures: int
    failure_rate: float | None = strawberry.field(description="failures / uses")
    last_used_at: datetime | None = strawberry.field(description="Its latest episode's time")


def tool_stats_view(row: dict[str, Any]) -> ToolStats:
    return ToolStats(
        name=row["name"], kind=row.get("kind"), uses=int(row.get("uses") or 0),
        successes=int(row.get("successes") or 0), failures=int(row.get("failures") or 0),
        failure_rate=row.get("failure_rate"), last_used_at=native_value(row.get("last_used_at")),
    )  # fmt: skip
