"""Failure lineage: an error's sightings, attempts, fixes, recurrences and related errors."""

from metisgraph.graph.lineage.claims import Claim, ErrorClaims, task_claims
from metisgraph.graph.lineage.environments import EnvironmentDiff, PackageChange, environment_diff
from metisgraph.graph.lineage.failing_tests import (
    MAX_TEST_RUNS,
    HarnessTestLineage,
    HarnessTestRun,
    harness_test_lineage,
)
from metisgraph.graph.lineage.members import ErrorKey, error_members
from metisgraph.graph.lineage.model import (
    Attempt,
    EnvironmentView,
    ErrorSummary,
    Fix,
    Lineage,
    ProjectCount,
    Recurrence,
    RelatedError,
    Sighting,
    SnippetView,
    StepView,
    TaskView,
)
from metisgraph.graph.lineage.query import MAX_PAGE, LineageRequest, lineage

__all__ = [
    "MAX_PAGE",
    "MAX_TEST_RUNS",
    "Attempt",
    "Claim",
    "EnvironmentDiff",
    "EnvironmentView",
    "ErrorClaims",
    "ErrorKey",
    "ErrorSummary",
    "Fix",
    "HarnessTestLineage",
    "HarnessTestRun",
    "Lineage",
    "LineageRequest",
    "PackageChange",
    "ProjectCount",
    "Recurrence",
    "RelatedError",
    "Sighting",
    "SnippetView",
    "StepView",
    "TaskView",
    "environment_diff",
    "error_members",
    "harness_test_lineage",
    "lineage",
    "task_claims",
]
