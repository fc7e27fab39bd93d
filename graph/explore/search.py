"""Search for the explorer: errors by the keys a text signs to, episodes by full text.

Which keys a text names is decided in ``ingest`` (signing) and ``api`` (who may read what);
this module reads the graph (``cypher/search.cypher``): the Error nodes for some keys with
their sightings and fixes, and the episodes a text finds, with the errors they hit.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from metisgraph.graph.explore.listing import ErrorRow
from metisgraph.graph.lineage import ErrorKey
from metisgraph.graph.lineage.model import StepView
from metisgraph.graph.lucene import lucene_query, lucene_terms, project_scope
from metisgraph.graph.store import GraphStore

__all__ = ["MAX_SEARCH", "EpisodeHit", "episodes_by_text", "errors_by_members"]

MAX_SEARCH = 100
_FETCH_FACTOR = 5  # the index is asked for more, so the projects' filter leaves enough


@dataclass(frozen=True)
class EpisodeHit:
    """An episode a text found: its step, its full-text score, the keys of the errors it hit."""

    step: StepView
    score: float
    errors: list[str]

    @property
    def project(self) -> str:
        return self.step.project


async def errors_by_members(store: GraphStore, members: Iterable[ErrorKey]) -> list[ErrorRow]:
    """The errors named, with all their sightings and fixes; most sighted first."""
    rows = [m.row() for m in members]
    if not rows:
        return []
    return [ErrorRow.of(r) for r in await store.run("search_errors", members=rows)]


async def episodes_by_text(
    store: GraphStore, projects: list[str] | None, text: str, first: int
) -> list[EpisodeHit]:
    """The episodes of ``projects`` (None: every project) the text finds, best first."""
    if not 1 <= first <= MAX_SEARCH:
        raise ValueError(f"first: between 1 and {MAX_SEARCH}, got {first}")
    if projects is None:
        query = lucene_terms(text) or None
    else:
        query = lucene_query(text, tuple(project_scope(p) for p in projects)) if projects else None
    if query is None:
        return []
    rows = await store.run(
        "search_episodes",
        text=query,
        projects=projects,
        first=first,
        fetch=first * _FETCH_FACTOR,
    )
    return [EpisodeHit(StepView.of(r["episode"]), float(r["score"]), r["errors"]) for r in rows]
