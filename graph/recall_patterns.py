"""Patterns and duplicates in recall's answer: one memory stands for the episodes it holds.

A merged duplicate is folded into its canonical episode's hit when both were found (the
hit lists it in ``duplicates``). A well-supported pattern that summarizes some hits comes
back beside them and ranks just above its best member: the lesson first, then its
instances. The patterns are read with the hits' expansion, in its round trip
(graph/recall_reads.shortlist_reads).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol, TypeVar

__all__ = ["PatternHit", "fold_duplicates", "patterns_for"]

# Above its best member, by less than any two distinct fused scores differ in practice:
# the pattern takes the member's place and the member comes right after it.
_ABOVE = 1e-6


class _Scored(Protocol):
    episode: dict[str, Any]
    score: float


H = TypeVar("H", bound=_Scored)


@dataclass
class PatternHit:
    pattern: dict[str, Any]
    score: float
    best_member: str  # the hit it ranks above
    members: list[str]  # recallable members, closest to the question first
    snippet: dict[str, Any] | None = None  # the snippet it recommends
    rank: int = 0  # its place among everything returned (1 = first)
    why: dict[str, Any] = field(default_factory=dict)


def fold_duplicates(hits: list[H]) -> list[H]:
    """The hits without the merged duplicates of a hit also found (best first kept)."""
    found = {h.episode["id"] for h in hits}
    return [h for h in hits if h.episode.get("duplicate_of") not in found]


def patterns_for(rows: list[dict[str, Any]], hits: list[Any]) -> list[PatternHit]:
    """Each pattern with a member among the hits, scored just above its best member."""
    score = {(h.episode["project"], h.episode["id"]): h.score for h in hits}
    out = []
    for row in rows:
        found = [m for m in row["members"] if (row["project"], m) in score]
        if not found:
            continue
        best = max(found, key=lambda m: score[(row["project"], m)])
        pattern = row["pattern"]
        out.append(
            PatternHit(
                pattern=pattern,
                score=score[(row["project"], best)] + _ABOVE,
                best_member=best,
                members=[best, *(m for m in row["members"] if m != best)],
                snippet=row.get("snippet"),
                why={
                    "above": best,
                    "support": pattern.get("support"),
                    "members_found": len(found),
                },
            )
        )
    return out
