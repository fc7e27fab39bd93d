"""GraphQL for code memory: recordSnippet, recordOutcome, searchSnippets and snippet."""

from __future__ import annotations

from typing import Annotated, Any, cast

import strawberry
from strawberry.scalars import JSON

from metisgraph.api.graphql import snippet_service as service
from metisgraph.api.graphql.applies_types import applies_view
from metisgraph.api.graphql.common_types import (
    EnvironmentInput,
    FieldError,
    SnippetInput,
    SnippetKind,
    environment_record,
    plain,
    verified_environment_view,
)
from metisgraph.api.graphql.context import Info
from metisgraph.api.graphql.snippet_views import (
    Compatibility,
    LinkedEpisode,
    OutcomeStats,
    Snippet,
    SnippetDetail,
    SnippetHit,
    SnippetRecordResult,
    SnippetVersion,
    SnippetWhy,
    StructureMatch,
    TouchedFile,
    compatibility_view,
    failed_run,
    notes_view,
    snippet_view,
)
from metisgraph.api.scopes import Scope
from metisgraph.graph import SnippetHit as FoundSnippet
from metisgraph.graph import native_value
from metisgraph.ingest import EnvironmentInput as EnvironmentRecord
from metisgraph.ingest.code import Verdict
from metisgraph.ingest.snippets import verdict_for

__all__ = [
    "Compatibility",
    "Snippet",
    "SnippetMutation",
    "SnippetQuery",
    "SnippetRecordInput",
    "snippet_view",
]


@strawberry.input(
    description="A snippet recorded on its own; validated like a line of an ingest file."
)
class SnippetRecordInput(SnippetInput):
    project: str
    id: str | None = None
    episode_id: str | None = strawberry.field(
        default=None, description="The episode that generated, used or modified it"
    )
    environment: EnvironmentInput | None = None


def _hit(found: FoundSnippet, verdict: Verdict) -> SnippetHit:
    why = SnippetWhy(
        semantic=found.channels.get("semantic"),
        fulltext=found.channels.get("fulltext"),
        structure=[
            StructureMatch(facet=m["facet"], wanted=m["wanted"], found=m["found"])
            for m in found.matched
        ],
        ranks=cast(JSON, found.ranks),
    )
    return SnippetHit(
        snippet=snippet_view(found.snippet),
        score=found.score,
        why=why,
        compatibility=compatibility_view(verdict),
        applies=applies_view(found.applies),
    )


def _detail(row: dict[str, Any], environment: EnvironmentRecord | None) -> SnippetDetail:
    return SnippetDetail(
        snippet=snippet_view(row),
        versions=[SnippetVersion(id=v["id"], version=v["version"] or 1,
                                 latest=v.get("latest") is not False, parent_id=v.get("parent_id"),
                                 reason=v.get("reason"), review_status=v.get("review_status"))
                  for v in row["versions"]],
        episodes=[LinkedEpisode(id=e["id"], relation=e["relation"], outcome=e.get("outcome"),
                                summary=e.get("summary"), task_id=e.get("task_id"),
                                created_at=native_value(e.get("created_at")))
                  for e in row["episodes"]],
        environments=[verified_environment_view(v) for v in row["environments"]],
        touched=[TouchedFile(path=t["path"], hunks=t.get("hunks"), added=t.get("added"),
                             removed=t.get("removed"), symbols=list(t.get("symbols") or []))
                 for t in row["touched"]],
        notes=notes_view(row.get("outcome_notes")),
        compatibility=compatibility_view(verdict_for(row, environment)),
        last_failure=failed_run(row.get("last_failure")),
    )  # fmt: skip


@strawberry.type
class SnippetQuery:
    @strawberry.field(
        description="Snippets by meaning and by structure (imports, calls, symbols, files, "
        "the signature's name and parameter names); every structure asked for must hold."
    )  # type: ignore[untyped-decorator]
    async def search_snippets(
        self,
        info: Info,
        project: str,
        query: str | None = None,
        language: str | None = None,
        imports: list[str] | None = None,
        calls: list[str] | None = None,
        kind: SnippetKind | None = None,
        k: int = 10,
        environment: EnvironmentInput | None = None,
        symbols: Annotated[
            list[str] | None,
            strawberry.argument(
                description="Definitions the snippet touches (a patch's changed functions or "
                "classes) or defines: a full dotted name or its last part"
            ),
        ] = None,
        files: Annotated[
            list[str] | None,
            strawberry.argument(
                description="Files the snippet was written to or patches: a path or its "
                "trailing components (`orders/load.py`)"
            ),
        ] = None,
        name: Annotated[
            str | None,
            strawberry.argument(description="The signature's name (a function, class or script)"),
        ] = None,
        parameters: Annotated[
            list[str] | None,
            strawberry.argument(description="Parameter names the signature must all take"),
        ] = None,
        require_verified: Annotated[
            bool,
            strawberry.argument(
                description="Only snippets a sandboxed run verified (verifySnippet), in an "
                "environment compatible with `environment` when it is given"
            ),
        ] = False,
    ) -> list[SnippetHit]:
        services = info.context.ready_services()
        info.context.require(info, project)
        found = await service.search(
            services, project=project, query=query, language=language,
            kind=plain(kind), imports=imports or [], calls=calls or [], k=k,
            environment=environment_record(environment), require_verified=require_verified,
            structure=service.Structure(symbols=symbols or [], files=files or [], name=name,
                                        parameters=parameters or []),
            hide_pending=not info.context.caller.allows(project, Scope.review),
        )  # fmt: skip
        return [_hit(hit, verdict) for hit, verdict in found]

    @strawberry.field(description="One snippet with its versions, requirements and episodes.")  # type: ignore[untyped-decorator]
    async def snippet(
        self, info: Info, project: str, id: str, environment: EnvironmentInput | None = None
    ) -> SnippetDetail | None:
        services = info.context.ready_services()
        info.context.require(info, project)
        row = await service.read_snippet(services, project, id)
        return None if row is None else _detail(row, environment_record(environment))


@strawberry.type
class SnippetMutation:
    @strawberry.mutation(description="Record one snippet; analysed, sanitized and versioned.")  # type: ignore[untyped-decorator]
    async def record_snippet(self, info: Info, input: SnippetRecordInput) -> SnippetRecordResult:
        services = info.context.ready_services()
        info.context.require(info, input.project)
        await info.context.reserve_records(1)
        done = await service.record_snippet(services, plain(input))
        if done.status != "refused":
            await info.context.audit("record", input.project, target=done.id, count=1)
        return SnippetRecordResult(
            id=done.id,
            status=done.status,
            errors=[FieldError(field=e.field, message=e.message) for e in done.errors],
            snippet=snippet_view(done.snippet) if done.snippet else None,
        )

    @strawberry.mutation(
        description="Report whether reusing a memory (episode, snippet or pattern) worked. "
        "appliedIn: the episode it was used in; the same idempotencyKey counts once."
    )  # type: ignore[untyped-decorator]
    async def record_outcome(
        self,
        info: Info,
        project: str,
        memory_id: str,
        success: bool,
        note: str | None = None,
        applied_in: str | None = None,
        applied_in_project: str | None = None,
        idempotency_key: str | None = None,
    ) -> OutcomeStats:
        services = info.context.ready_services()
        # Applied in another project: the report writes there too (an APPLIED_IN link).
        info.context.require(info, {project, applied_in_project or project})
        given = service.OutcomeArguments(
            project, memory_id, success, applied_in, applied_in_project, note, idempotency_key
        )
        row = await service.report_outcome(services, given, info.context.caller.name)
        return OutcomeStats(
            memory_id=row["id"], kind=row["label"], uses=row["uses"], successes=row["successes"],
            failures=row["failures"], success_rate=row["success_rate"],
            notes=notes_view(row["notes"]),
            confidence=row["confidence"], prior_confidence=row["prior_confidence"],
            weighted_successes=row["evidence_for"], weighted_failures=row["evidence_against"],
            independent_confirmations=row["contexts"],
            last_used_at=native_value(row["last_used_at"]), duplicate=row["duplicate"],
        )  # fmt: skip
