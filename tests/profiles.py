"""What a PROFILEd statement cost: the db hits of its whole plan, for the tests that bound a
query's cost by them (rather than by time)."""

from __future__ import annotations

from typing import Any


def db_hits(plan: Any) -> int:
    """The db hits of a profiled plan (the driver's ``summary.profile``) and its children."""
    return int(plan.get("dbHits", 0)) + sum(db_hits(c) for c in plan.get("children") or [])


def plan_lines(plan: Any, depth: int = 0) -> str:
    """A profiled plan as indented lines (operator, db hits, rows, details): a failing bound
    shows where the hits went."""
    args = plan.get("args") or {}
    line = (
        f"{'  ' * depth}{plan.get('operatorType')} hits={plan.get('dbHits', 0)} "
        f"rows={plan.get('rows', 0)} {str(args.get('Details', ''))[:160]}"
    )
    return "\n".join([line, *(plan_lines(c, depth + 1) for c in plan.get("children") or [])])
