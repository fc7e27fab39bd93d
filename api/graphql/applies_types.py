"""Whether a memory applies to the caller: its conditions checked against the caller's
stated environment (graph/applicability.py), as recall hits and snippets show it."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import strawberry

from metisgraph.graph import Applicability

__all__ = ["Applies", "applies_view"]

_NOT_STATED = {"status": "unknown", "reasons": ["the caller stated no environment"]}


@strawberry.type(
    description="Whether a memory's conditions (OS, architecture, runtime and package "
    "versions, the error) hold in the caller's stated environment, and why. One that does "
    "not hold ranks below one that does."
)
class Applies:
    status: str = strawberry.field(
        description="yes | no | unknown (unknown also when the caller stated no environment)"
    )
    reasons: list[str]


def applies_view(found: Applicability | Mapping[str, Any] | None) -> Applies:
    """The GraphQL view of a judgement (as recall keeps it on a hit, or on a snippet row)."""
    if isinstance(found, Applicability):
        return Applies(status=found.status, reasons=list(found.reasons))
    row = found or _NOT_STATED
    return Applies(status=str(row["status"]), reasons=list(row["reasons"]))
