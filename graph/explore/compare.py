"""Compare for the explorer: the errors projects share, each project's side of them.

An error is shared when two or more of the projects sighted the same key (the same
signature). Each side says where the error was fixed or worked round and what was tried and
did not end it — the links lineage derives from evidence (RESOLVED {kind, rule, why},
ATTEMPTED), never time order — and how often it came back after the project's own fix, or
was met after another project compared had fixed it. A *contrast* is one way of dealing with
the error (its rule and why, say ``module: installs pyyaml for yaml``) that fixed it in one
project and was tried without ending it in another (``cypher/compare.cypher``).
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from metisgraph.graph.explore.listing import ErrorRow
from metisgraph.graph.lineage.model import StepView
from metisgraph.graph.rows import native_time
from metisgraph.graph.store import GraphStore

__all__ = [
    "MAX_COMPARE",
    "MAX_DEALT",
    "Comparison",
    "Contrast",
    "Dealt",
    "SharedError",
    "Side",
    "compare",
]

MAX_COMPARE = 100  # shared errors a comparison returns at most
MAX_DEALT = 50  # fixes, and attempts, listed per error and project


@dataclass(frozen=True)
class Dealt:
    """A step that dealt with the error, on evidence: fixed, workaround or attempt."""

    episode: StepView
    kind: str
    rule: str
    why: str
    confidence: float | None

    @classmethod
    def of(cls, row: dict[str, Any]) -> Dealt:
        return cls(
            StepView.of(row["episode"]),
            row.get("kind") or "fixed",
            row.get("rule") or "",
            row.get("why") or "",
            row.get("confidence"),
        )

    @property
    def way(self) -> tuple[str, str]:
        return self.rule, self.why


@dataclass(kw_only=True)
class Side:
    """One project's side of a shared error."""

    error: ErrorRow
    workarounds: int
    attempt_count: int
    recurrences: int = 0  # sightings after its own first fix
    after_fix_elsewhere: int = 0  # sightings, before any fix of its own, after one elsewhere
    fixed_by: list[Dealt]  # fixes and workarounds, oldest first
    attempts: list[Dealt]
    first_fixed_at: datetime | None


@dataclass(frozen=True)
class Contrast:
    """One way of dealing with the error that worked in some projects and failed in others."""

    rule: str
    why: str
    worked_in: list[str]
    failed_in: list[str]


@dataclass
class SharedError:
    key: str
    sides: list[Side]
    contrasts: list[Contrast] = field(default_factory=list)

    @property
    def projects(self) -> list[str]:
        return [s.error.project for s in self.sides]

    @property
    def kind(self) -> str | None:
        return self.sides[0].error.kind

    @property
    def signature(self) -> str | None:
        return self.sides[0].error.signature

    @property
    def template(self) -> str | None:
        return self.sides[0].error.template


@dataclass(frozen=True)
class Comparison:
    projects: list[str]
    shared_count: int  # shared errors in all, beyond the page too
    shared: list[SharedError]


async def compare(store: GraphStore, projects: list[str], first: int) -> Comparison:
    """The errors two or more of ``projects`` share, most widespread and sighted first."""
    names = sorted(set(projects))
    if len(names) < 2:
        raise ValueError("projects: name at least two projects to compare")
    if not 1 <= first <= MAX_COMPARE:
        raise ValueError(f"first: between 1 and {MAX_COMPARE}, got {first}")
    found = await store.run("compare_shared", projects=names, first=first, side=MAX_DEALT)
    shared: dict[str, SharedError] = {}
    for row in found[0]["rows"]:
        entry = shared.setdefault(row["key"], SharedError(row["key"], []))
        entry.sides.append(_side(row))
    errors = list(shared.values())
    await _after_fix(store, errors)
    for error in errors:
        error.contrasts = _contrasts(error.sides)
    return Comparison(names, found[0]["shared"], errors)


def _side(row: dict[str, Any]) -> Side:
    return Side(
        error=ErrorRow.of(row),
        workarounds=row["workarounds"],
        attempt_count=row["attempt_count"],
        fixed_by=[Dealt.of(r) for r in row["dealt"]],
        attempts=[Dealt.of(r) for r in row["attempts"]],
        first_fixed_at=native_time(row.get("first_fixed_at")),
    )


async def _after_fix(store: GraphStore, errors: list[SharedError]) -> None:
    """Count each side's sightings after its own first fix and after a fix elsewhere."""
    rows, sides = [], {}
    for error in errors:
        for side in error.sides:
            others = [
                s.first_fixed_at
                for s in error.sides
                if s is not side and s.first_fixed_at is not None
            ]
            own, elsewhere = side.first_fixed_at, min(others, default=None)
            if own is None and elsewhere is None:
                continue
            rows.append({"project": side.error.project, "key": error.key, "own": own,
                         "elsewhere": elsewhere})  # fmt: skip
            sides[(side.error.project, error.key)] = side
    if not rows:
        return
    for r in await store.run("compare_after_fix", rows=rows):
        side = sides[(r["project"], r["key"])]
        side.recurrences = r["recurrences"]
        side.after_fix_elsewhere = r["after_fix_elsewhere"]


def _contrasts(sides: list[Side]) -> list[Contrast]:
    """Ways (rule and why) that fixed the error in one project and were only tried in another."""
    worked: dict[tuple[str, str], set[str]] = defaultdict(set)
    failed: dict[tuple[str, str], set[str]] = defaultdict(set)
    for side in sides:
        for d in side.fixed_by:
            worked[d.way].add(side.error.project)
        for d in side.attempts:
            failed[d.way].add(side.error.project)
    out = []
    for way in sorted(worked.keys() & failed.keys()):
        w, f = worked[way], failed[way]
        if any(p != q for p in w for q in f):
            out.append(Contrast(way[0], way[1], sorted(w), sorted(f)))
    return out
