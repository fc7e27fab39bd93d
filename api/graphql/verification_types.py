"""GraphQL for the verification gate: verifySnippet."""

from __future__ import annotations

from typing import Annotated, Any

import strawberry
from strawberry.scalars import JSON

from metisgraph.api.graphql.common_types import (
    EnvironmentInput,
    VerifiedEnvironment,
    environment_record,
    verified_environment_view,
)
from metisgraph.api.graphql.context import Info, UserError
from metisgraph.ingest.environment import environment_row
from metisgraph.ingest.sandbox import SnippetNotFound, Verification, verify_snippet

__all__ = ["VerificationMutation", "VerificationResult"]

MAX_PARAMETERS = 50
_MAX_VALUE_CHARS = 4000


@strawberry.type(description="The verdict of a sandboxed run of a snippet's tests or command.")
class VerificationResult:
    snippet_id: str
    status: str = strawberry.field(description="passed | failed | refused (nothing ran)")
    reason: str | None = strawberry.field(description="Why it failed or was refused")
    command: str | None
    exit_code: int | None = strawberry.field(description="Negative: killed by that signal")
    duration_ms: int | None
    timed_out: bool
    output_tail: str | None = strawberry.field(description="The end of the output, redacted")
    environment: VerifiedEnvironment | None = strawberry.field(
        description="Where it ran: a pass is VERIFIED_IN this environment"
    )
    uses: int | None
    successes: int | None
    failures: int | None
    success_rate: float | None


def _parameters(value: Any) -> dict[str, str]:
    """Values for the template's placeholders: {name: text}."""
    if value is None:
        return {}
    if not isinstance(value, dict) or len(value) > MAX_PARAMETERS:
        raise UserError(f"parameters: an object of at most {MAX_PARAMETERS} names and texts")
    for name, text in value.items():
        if not isinstance(text, str) or len(text) > _MAX_VALUE_CHARS:
            raise UserError(f"parameters.{name}: a text of at most {_MAX_VALUE_CHARS} characters")
    return dict(value)


def verification_view(verdict: Verification, project: str) -> VerificationResult:
    env = verdict.environment
    counts = verdict.counts or {}
    return VerificationResult(
        snippet_id=verdict.snippet_id, status=verdict.status, reason=verdict.reason,
        command=verdict.command, exit_code=verdict.exit_code, duration_ms=verdict.duration_ms,
        timed_out=verdict.timed_out, output_tail=verdict.output_tail,
        environment=verified_environment_view(environment_row(project, env, [])) if env else None,
        uses=counts.get("uses"), successes=counts.get("successes"),
        failures=counts.get("failures"), success_rate=counts.get("success_rate"),
    )  # fmt: skip


@strawberry.type
class VerificationMutation:
    @strawberry.mutation(  # type: ignore[untyped-decorator]
        description="Run a snippet's tests (or a check command) in the sandbox. A pass writes "
        "VERIFIED_IN the environment with the evidence; a failure counts against the snippet. "
        "High or critical risk runs only once approved."
    )
    async def verify_snippet(
        self,
        info: Info,
        project: str,
        snippet_id: str,
        environment: EnvironmentInput | None = None,
        command: Annotated[
            str | None,
            strawberry.argument(description="Run by sh in the work dir instead of the tests"),
        ] = None,
        parameters: Annotated[
            JSON | None,
            strawberry.argument(description="{name: value} for the template's placeholders"),
        ] = None,
    ) -> VerificationResult:
        services = info.context.ready_services()
        info.context.require(info, project)
        try:
            verdict = await verify_snippet(
                services.store, services.sandbox, project=project, snippet_id=snippet_id,
                environment=environment_record(environment), command=command,
                parameters=_parameters(parameters),
            )  # fmt: skip
        except SnippetNotFound as error:
            raise UserError(f"snippetId: {error}") from None
        except ValueError as error:
            raise UserError(str(error)) from None
        return verification_view(verdict, project)
