"""What recall says of its own answer, as GraphQL shows it: the channels it had to drop, and
its abstention (the similarity, the threshold and where that came from)."""

from __future__ import annotations

import strawberry

from metisgraph.api.graphql.views import View, derived
from metisgraph.graph import Gate

__all__ = ["ABSTENTION", "Abstention", "RecallWarning", "abstention_view"]

ABSTENTION = "The similarity test behind `abstained` (docs/recall.md, abstention)"


@strawberry.type(description="A channel dropped from the question: the others answered.")
class RecallWarning:
    channel: str
    reason: str


@derived(
    Gate,
    name="Abstention",
    description="What recall's abstention read and decided",
    skip=("abstained", "reason"),
    about={
        "similarity": "The closest memory's similarity (cosine); null when nothing was found, "
        "or a shared error or code location (or a vector outage) spared the question the test",
        "threshold": "The similarity it was held to",
        "source": "Where the threshold came from: request (abstainBelow), calibrated "
        "(measured on the project's store; 'for code the project does not know' when the "
        "question names only code no memory touches) or default (too small to measure)",
    },
)
class Abstention(View[Gate]):
    pass


def abstention_view(gate: Gate | None) -> Abstention | None:
    return Abstention.maybe(gate)
