"""Failure lineage: an error's sightings, attempts, fixes, recurrences and related errors."""

from metisgraph.graph.lineage.claims import Claim, ErrorClaims, task_claims
from metisgraph.graph.lineage.environments import EnvironmentDiff, PackageChange, environment_diff
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
    "Attempt",
    "Claim",
    "EnvironmentDiff",
    "EnvironmentView",
    "ErrorClaims",
    "ErrorKey",
    "ErrorSummary",
    "Fix",
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
    "lineage",
    "task_claims",
]
