"""What a PROFILEd statement cost: the db hits of its whole plan, for the tests that bound a
query's cost by them (rather than by time)."""

from __future__ import annotations

from typing import Any


def db_hits(plan: Any) -> int:
    """The db hits of a profiled plan (the driver's ``summary.profile``) and its children."""
    return int(plan.get("dbHits", 0)) + sum(db_hits(c) for c in plan.get("children") or [])
