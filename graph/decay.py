"""Decay that follows use: memory nobody uses or confirms loses weight, then goes cold.

Time is counted from a memory's `active_at` — when it was stored, last used or last
confirmed, never the time of the event it describes, so imported history is not stale on
arrival — up to its project's clock, `(:Project).active_at`: the last time anything in the
project was stored or used. A project nobody touched for a year has forgotten nothing; in a
project that kept working, what was never needed fades. Using or confirming a memory
(an outcome report, a sandboxed pass, a citation by a step that worked: `count_cited` in
cypher/write.cypher) moves its `active_at` and restores it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from metisgraph.graph.project_cache import ProjectCache
from metisgraph.graph.rows import native_value
from metisgraph.graph.store import GraphStore

__all__ = [
    "CLOCK_REUSE_SECONDS",
    "TIERS",
    "DecaySettings",
    "decay_factor",
    "idle_days",
    "project_clocks",
    "recent_clocks",
    "warm_since",
]

TIERS = ("warm", "cold")


@dataclass(frozen=True)
class DecaySettings:
    # Idle time that halves the part of a memory's weight that can decay. Most libraries a
    # project depends on release a minor version or two in six months; a memory no one
    # needed over that stretch is as likely outdated as not.
    half_life_days: float = 180.0
    # The share of its weight an idle memory always keeps: decay ranks down, never out.
    # ln 0.75 = -0.29 in score units, about what separates neighbouring hits, so an idle
    # memory that answers the question still beats a fresh one that only relates to it.
    floor: float = 0.75
    # Idle this long (two years: past most libraries' support windows) a memory is in the
    # cold tier: kept, searchable on request, not recalled by default. None: no cold tier.
    cold_after_days: float | None = 730.0

    def __post_init__(self) -> None:
        if self.half_life_days <= 0 or not 0.0 <= self.floor <= 1.0:
            raise ValueError("decay: half_life_days > 0 and floor in [0, 1]")
        if self.cold_after_days is not None and self.cold_after_days <= 0:
            raise ValueError("decay: cold_after_days > 0, or None for no cold tier")


def _moment(value: Any) -> datetime | None:
    native = native_value(value)
    if not isinstance(native, datetime):
        return None
    return native if native.tzinfo else native.replace(tzinfo=UTC)


def idle_days(active_at: Any, clock: Any) -> float:
    """Days from a memory's last sign of life to its project's clock (never negative)."""
    since, until = _moment(active_at), _moment(clock)
    if since is None or until is None:
        return 0.0
    return max(0.0, (until - since).total_seconds() / 86400)


def decay_factor(idle: float, settings: DecaySettings) -> float:
    """1 for a memory just used; falls towards `floor` with each half-life idle."""
    return float(settings.floor + (1.0 - settings.floor) * 0.5 ** (idle / settings.half_life_days))


async def project_clocks(store: GraphStore, projects: Sequence[str]) -> dict[str, datetime]:
    """Each project's clock; a project with none yet is on the wall clock."""
    rows = await store.run("project_clocks", projects=list(projects))
    now = datetime.now(UTC)
    found = {r["project"]: _moment(r["active_at"]) for r in rows}
    return {p: found.get(p) or now for p in projects}


# How long a project's clock, once read, serves recall's warm-tier filter (`recent_clocks`).
CLOCK_REUSE_SECONDS = 30.0
_RECENT: ProjectCache[datetime] = ProjectCache()


async def recent_clocks(store: GraphStore, projects: Sequence[str]) -> dict[str, datetime]:
    """Each project's clock as read at most CLOCK_REUSE_SECONDS ago (read now if not).

    For the warm tier's filter alone: a clock only moves forward (`touch_project`, at most
    once an hour; an import keeps the later of its own and the export's), so one read a
    little earlier starts the warm tier a little earlier — the channels let in a few more
    candidates, never fewer — and recall checks each hit against its project's clock read
    with it (`_in_tiers`). The cold tier alone needs the clock as it is now. One statement
    fewer per question: its driver and socket work in the API (issue 23)."""
    stale = _RECENT.stale(store, projects, CLOCK_REUSE_SECONDS)
    read = await project_clocks(store, stale) if stale else {}
    for project, clock in read.items():
        _RECENT.put(store, project, clock)
    return _RECENT.kept(store, projects) | read


def warm_since(clocks: Mapping[str, datetime], settings: DecaySettings) -> datetime | None:
    """The earliest `active_at` still warm in any of the projects (None: no cold tier)."""
    if settings.cold_after_days is None or not clocks:
        return None
    return min(clocks.values()) - timedelta(days=settings.cold_after_days)
