"""GraphQL search for portals: errors and episodes by text, across the projects one may read.

A text is signed the way ingest and lineage sign one (sanitized, then every error in it), so a
pasted stack trace finds its error by signature (and the errors of its family); the same text
finds episodes through the full-text index, and the errors those episodes hit come after.
"""

from __future__ import annotations

import strawberry

from metisgraph.api.graphql.context import Info, UserError
from metisgraph.api.graphql.error_refs import MAX_ERROR_TEXT
from metisgraph.api.graphql.graph_types import ERROR, ERROR_ID
from metisgraph.api.graphql.tenancy import readable_projects, visible_projects
from metisgraph.api.graphql.views import View, derived
from metisgraph.graph.explore import MAX_SEARCH, ErrorRow, episodes_by_text, errors_by_members
from metisgraph.graph.explore import EpisodeHit as EpisodeRow
from metisgraph.graph.explore import projects as project_rows
from metisgraph.graph.lineage import ErrorKey, error_members
from metisgraph.ingest.errors import extract_errors
from metisgraph.ingest.sanitize import sanitize

__all__ = ["SearchQuery"]


@derived(
    ErrorRow,
    description="An error a search found, with its sightings, fixes and state.",
    node=ERROR,
    about={"id": ERROR_ID, "open": "Never fixed, or sighted after its last fix"},
    register=False,
)
class ErrorHit(View[ErrorRow]):
    matched: str = strawberry.field(
        description="SIGNATURE: the text signs to this error (or its family); "
        "EPISODES: episodes the text found hit it"
    )


@derived(
    EpisodeRow,
    name="EpisodeHit",
    description="An episode a search found.",
    rename={"episode": "step"},
    refs={"errors": "Error"},
    about={
        "score": "The full-text score: higher is closer",
        "errors": "The errors it hit (global ids)",
    },
)
class EpisodeHit(View[EpisodeRow]):
    pass


@strawberry.type(description="What a text finds.")
class SearchResult:
    signed: list[str] = strawberry.field(
        description="The error keys the text signs to, as ingest signs it (empty: none in it)"
    )
    errors: list[ErrorHit]
    episodes: list[EpisodeHit]


@strawberry.type
class SearchQuery:
    @strawberry.field(
        description="Errors and episodes by text (a message, a pasted trace, words) in the "
        "projects named, or every project the caller may read; at most first of each "
        f"(≤ {MAX_SEARCH})."
    )
    async def search(
        self, info: Info, text: str, projects: list[str] | None = None, first: int = 20
    ) -> SearchResult:
        services = info.context.ready_services()
        caller = info.context.caller
        if not text.strip():
            raise UserError("text: must not be empty")
        if len(text) > MAX_ERROR_TEXT:
            raise UserError(f"text: at most {MAX_ERROR_TEXT:,} characters")
        if not 1 <= first <= MAX_SEARCH:
            raise UserError(f"first: between 1 and {MAX_SEARCH}, got {first}")
        scope = (
            readable_projects(caller, projects)
            if projects is not None
            else visible_projects(caller)
        )
        store = services.store
        names = scope if scope is not None else [p.name for p in await project_rows(store, None)]
        clean = sanitize(text).text
        keys = list(dict.fromkeys(e.key for e in extract_errors(clean)))
        members = await error_members(services.store, names, keys)
        episodes = await episodes_by_text(services.store, scope, clean, first)
        signed = await errors_by_members(services.store, members)
        seen = {(r.project, r.key) for r in signed}
        met = [
            ErrorKey(s.step.project, k)
            for s in episodes
            for k in s.errors
            if (s.step.project, k) not in seen
        ]
        via = await errors_by_members(services.store, dict.fromkeys(met))
        return SearchResult(
            signed=keys,
            errors=[ErrorHit.of(r, matched="SIGNATURE") for r in signed][:first]
            + [ErrorHit.of(r, matched="EPISODES") for r in via][: max(0, first - len(signed))],
            episodes=[EpisodeHit.of(s) for s in episodes],
        )
