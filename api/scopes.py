"""What a caller may do in a project (read, write, review, admin) and what each field needs.

``REQUIRED`` names the scope every root field of the schema needs, on every project it
touches. Resolvers that record, review, forget or ask check it through ``Context.require``
(a field missing from the table is refused for everyone); the browsing reads check read
through metisgraph.api.graphql.tenancy. tests/test_keys.py fails on a root field not in the table.
"""

from __future__ import annotations

from collections.abc import Iterable
from enum import StrEnum

__all__ = ["REQUIRED", "Scope", "implied", "parse_scopes", "required"]


class Scope(StrEnum):
    """read: recall and browse; write: record and forget memories; review: approve or
    reject them; admin: everything, forget the whole project, read its audit trail."""

    read = "read"
    write = "write"
    review = "review"
    admin = "admin"


_IMPLIES = {
    Scope.read: {Scope.read},
    Scope.write: {Scope.read, Scope.write},
    Scope.review: {Scope.read, Scope.review},
    Scope.admin: set(Scope),
}


def implied(scopes: Iterable[Scope]) -> frozenset[Scope]:
    """Everything holding ``scopes`` allows (``write`` allows ``read``; ``admin`` all)."""
    return frozenset(s for scope in scopes for s in _IMPLIES[scope])


def parse_scopes(names: Iterable[str]) -> frozenset[Scope]:
    """Scopes by name; an unknown name is a ValueError naming the known ones."""
    out = set()
    for name in names:
        try:
            out.add(Scope(name.strip().lower()))
        except ValueError:
            known = ", ".join(s.value for s in Scope)
            raise ValueError(f"unknown scope {name!r}; known: {known}") from None
    return frozenset(out)


# Every root field and the scope it needs on the projects it names (one line a field).
REQUIRED: dict[str, Scope] = {
    "Query.recall": Scope.read,
    "Query.planContext": Scope.read,
    "Query.searchSnippets": Scope.read,
    "Query.snippet": Scope.read,
    "Query.lineage": Scope.read,
    "Query.testLineage": Scope.read,
    "Query.projects": Scope.read,
    "Query.errors": Scope.read,
    "Query.tools": Scope.read,
    "Query.error": Scope.read,
    "Query.task": Scope.read,
    "Query.node": Scope.read,
    "Query.neighbourhood": Scope.read,
    "Query.search": Scope.read,
    "Query.trends": Scope.read,
    "Query.compare": Scope.read,
    "Query.analytics": Scope.read,
    # Pending memories (risky, waiting for a decision) are for reviewers: kept from the recall
    # and planContext of a caller without review on every project asked (Context.recallable).
    "Query.reviewQueue": Scope.review,
    "Query.memoryReview": Scope.review,
    "Query.auditLog": Scope.admin,
    "Mutation.recordEpisode": Scope.write,
    "Mutation.recordEpisodes": Scope.write,
    "Mutation.recordTask": Scope.write,
    "Mutation.recordSnippet": Scope.write,
    "Mutation.recordOutcome": Scope.write,
    "Mutation.verifySnippet": Scope.write,
    "Mutation.forget": Scope.write,
    "Mutation.reviewMemory": Scope.review,
    "Mutation.review": Scope.review,
    "Mutation.forgetProject": Scope.admin,
    # Merges duplicates and retires snippets across the whole project (all reversible: a
    # merged episode keeps duplicateOf, a retired snippet revives on use), as a writer may.
    "Mutation.maintain": Scope.write,
}


def required(parent: str, field: str) -> Scope | None:
    """The scope ``parent.field`` needs; None for a field the table does not know."""
    return REQUIRED.get(f"{parent}.{field}")
