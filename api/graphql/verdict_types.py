"""GraphQL for harness verdicts: the tests a run passed and failed (on a task), and a test's
lineage across runs (testLineage)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

import strawberry

from metisgraph.api.graphql.context import Info, UserError
from metisgraph.api.graphql.graph_types import TaskSummary
from metisgraph.api.graphql.tenancy import readable_projects
from metisgraph.graph import NodeRef
from metisgraph.graph.lineage import (
    MAX_TEST_RUNS,
    HarnessTestLineage,
    HarnessTestRun,
    harness_test_lineage,
)
from metisgraph.ingest.sanitize import redact

__all__ = ["RunVerdict", "VerdictQuery", "run_verdict"]


@strawberry.type(description="An evaluation harness's verdict on one instance of one run.")
class RunVerdict:
    run: str | None
    instance: str | None
    resolved: bool | None
    harnesses: list[str] = strawberry.field(description="The report shapes it was read from")
    sources: list[str] = strawberry.field(
        description="The report files it was read from (from the run's folder on)"
    )
    tests_failed: list[str] = strawberry.field(description="Tests the run failed")
    tests_passed: list[str] = strawberry.field(description="Tests the run passed")
    recorded_at: datetime | None


def run_verdict(row: dict[str, Any]) -> RunVerdict:
    return RunVerdict(
        run=row.get("run"),
        instance=row.get("instance"),
        resolved=row.get("resolved"),
        harnesses=list(row.get("harnesses") or []),
        sources=list(row.get("sources") or []),
        tests_failed=list(row.get("tests_failed") or []),
        tests_passed=list(row.get("tests_passed") or []),
        recorded_at=row.get("recorded_at"),
    )


@strawberry.type(description="One run's verdict on a test.")
class TestRunView:
    project: str
    run: str
    instance: str
    failed: bool = strawberry.field(description="The run failed the test (else it passed it)")
    resolved: bool | None = strawberry.field(description="The run's verdict on the instance")
    at: datetime | None = strawberry.field(
        description="Its first task's start, else when the verdict was recorded"
    )
    tasks: list[TaskSummary] = strawberry.field(description="The tasks the verdict judged")


@strawberry.type(name="TestLineage", description="A test across runs, oldest run first.")
class TestLineageView:
    test: str
    runs: list[TestRunView]
    truncated: bool = strawberry.field(description="More runs than the limit: the newest left out")
    first_failed: TestRunView | None
    last_failed: TestRunView | None
    passing_since: TestRunView | None = strawberry.field(
        description="The first run that passed it after its last failure"
    )
    failing: bool = strawberry.field(description="The newest run failed it")


def _task(project: str, t: dict[str, Any]) -> TaskSummary:
    return TaskSummary(
        id=strawberry.ID(NodeRef("Task", project, t["id"]).id),
        project=project,
        task_id=t["id"],
        goal=t.get("goal"),
        status=t.get("status"),
        agent=t.get("agent"),
    )


def _run(r: HarnessTestRun | None) -> TestRunView | None:
    if r is None:
        return None
    return TestRunView(
        project=r.project, run=r.run, instance=r.instance, failed=r.failed, resolved=r.resolved,
        at=r.at, tasks=[_task(r.project, t) for t in r.tasks],
    )  # fmt: skip


def _lineage(found: HarnessTestLineage) -> TestLineageView:
    runs = [_run(r) for r in found.runs]
    return TestLineageView(
        test=found.test, runs=[r for r in runs if r is not None], truncated=found.truncated,
        first_failed=_run(found.first_failed), last_failed=_run(found.last_failed),
        passing_since=_run(found.passing_since), failing=found.failing,
    )  # fmt: skip


@strawberry.type
class VerdictQuery:
    @strawberry.field(
        description="A test across runs: every harness verdict of the projects that ran it, "
        "failed or passed, oldest first, with when it last failed and whether a later run "
        f"passed it. The test as its verdicts name it (exactly). At most {MAX_TEST_RUNS} runs."
    )
    async def test_lineage(
        self, info: Info, projects: list[str], test: str, limit: int = 100
    ) -> TestLineageView:
        services = info.context.ready_services()
        scope = readable_projects(info.context.caller, projects)
        try:  # names are stored redacted: asked the same way
            found = await harness_test_lineage(services.store, scope, redact(test).text, limit)
        except ValueError as exc:
            raise UserError(str(exc)) from None
        return _lineage(found)
