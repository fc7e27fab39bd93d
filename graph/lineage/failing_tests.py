"""A test's lineage across runs: which runs failed it, which passed it, and where it stands.

Harness verdicts (cypher/verdicts.cypher) keep the tests each run of an instance passed and
failed. Followed across runs, oldest first, they say when a test started failing, whether a
later run made it pass, and whether it fails still.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from metisgraph.graph.rows import native_time
from metisgraph.graph.store import GraphStore

__all__ = ["MAX_TEST_RUNS", "HarnessTestLineage", "HarnessTestRun", "harness_test_lineage"]

MAX_TEST_RUNS = 500


@dataclass(frozen=True)
class HarnessTestRun:
    """One run's verdict on the test."""

    project: str
    run: str
    instance: str
    failed: bool  # the run failed the test (else it passed it)
    resolved: bool | None  # the run's verdict on the instance
    at: datetime | None  # its first task's start, else when the verdict was recorded
    harnesses: list[str] = field(default_factory=list)
    tasks: list[dict[str, Any]] = field(default_factory=list)  # {id, goal, status, outcome, agent}


@dataclass(frozen=True)
class HarnessTestLineage:
    """The runs of a test, oldest first, and what they add up to."""

    test: str
    runs: list[HarnessTestRun]
    truncated: bool  # more runs than the limit: the newest are not shown

    @property
    def first_failed(self) -> HarnessTestRun | None:
        return next((r for r in self.runs if r.failed), None)

    @property
    def last_failed(self) -> HarnessTestRun | None:
        return next((r for r in reversed(self.runs) if r.failed), None)

    @property
    def passing_since(self) -> HarnessTestRun | None:
        """The first run that passed it after its last failure (None: it never failed, or
        no run has passed it since)."""
        last = self.last_failed
        if last is None:
            return None
        after = self.runs[self.runs.index(last) + 1 :]
        return next((r for r in after if not r.failed), None)

    @property
    def failing(self) -> bool:
        """The newest run failed it."""
        return bool(self.runs) and self.runs[-1].failed


def _run(row: dict[str, Any]) -> HarnessTestRun:
    tasks = [
        {**t, "started_at": native_time(t.get("started_at")),
         "ended_at": native_time(t.get("ended_at"))}
        for t in row.get("tasks") or []
    ]  # fmt: skip
    return HarnessTestRun(
        project=row["project"],
        run=row["run"],
        instance=row["instance"],
        failed=bool(row["failed"]),
        resolved=row.get("resolved"),
        at=native_time(row.get("at")),
        harnesses=list(row.get("harnesses") or []),
        tasks=tasks,
    )


async def harness_test_lineage(
    store: GraphStore, projects: Sequence[str], test: str, limit: int = MAX_TEST_RUNS
) -> HarnessTestLineage:
    """Every run of these projects whose verdict names the test, oldest first (``limit`` at
    most)."""
    if not 1 <= limit <= MAX_TEST_RUNS:
        raise ValueError(f"limit: between 1 and {MAX_TEST_RUNS}, got {limit}")
    if not test.strip():
        raise ValueError("test: must not be blank")
    rows = await store.run("test_lineage", projects=list(projects), test=test, limit=limit + 1)
    return HarnessTestLineage(
        test=test, runs=[_run(r) for r in rows[:limit]], truncated=len(rows) > limit
    )
