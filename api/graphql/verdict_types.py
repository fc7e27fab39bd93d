"""GraphQL for harness verdicts: the tests a run passed and failed (on a task), and a test's
lineage across runs (testLineage)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

import strawberry

from metisgraph.api.graphql.context import Info, UserError
from metisgraph.api.graphql.graph_types import TaskSummary
from metisgraph.api.graphql.tenancy import readable_projects
from metisgraph.api.graphql.views import View, derived
from metisgraph.graph.lineage import (
    MAX_TEST_RUNS,
    HarnessTestLineage,
    HarnessTestRun,
    TaskView,
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


def _tasks(run: HarnessTestRun) -> list[TaskSummary]:
    return [TaskSummary.of(v) for t in run.tasks if (v := TaskView.of(run.project, t))]


@derived(
    HarnessTestRun,
    name="TestRunView",
    description="One run's verdict on a test.",
    skip=("harnesses",),
    computed={"tasks": _tasks},
    about={
        "failed": "The run failed the test (else it passed it)",
        "resolved": "The run's verdict on the instance",
        "at": "Its first task's start, else when the verdict was recorded",
        "tasks": "The tasks the verdict judged",
    },
)
class TestRunView(View[HarnessTestRun]):
    tasks: list[TaskSummary]


@derived(
    HarnessTestLineage,
    name="TestLineage",
    description="A test across runs, oldest run first.",
    about={
        "truncated": "More runs than the limit: the newest left out",
        "passing_since": "The first run that passed it after its last failure",
        "failing": "The newest run failed it",
    },
)
class TestLineageView(View[HarnessTestLineage]):
    first_failed: TestRunView | None
    last_failed: TestRunView | None
    passing_since: TestRunView | None
    failing: bool


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
        return TestLineageView.of(found)
