"""Harness verdicts as rows: matched to tasks by project, run and instance."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from metisgraph.ingest.records import VerdictRecord
from metisgraph.ingest.sanitize import redact

__all__ = ["run_key", "verdict_row"]


def run_key(project: str, run: str, instance: str) -> dict[str, str]:
    """What a verdict and a task are matched on. Identifiers, not prose: redacted (a secret
    never lands in a key) but never abstracted, so two instances never merge."""
    return {"project": project, "run": redact(run).text, "instance": redact(instance).text}


def _tests(record: VerdictRecord, result: str) -> list[str]:
    groups: Iterable[dict[str, list[str]]] = record.tests.values()
    return sorted({redact(t).text for group in groups for t in group.get(result, [])})


def verdict_row(record: VerdictRecord) -> dict[str, Any]:
    key = run_key(record.project, record.run, record.instance)
    return {
        **key,
        "id": f"{key['run']}/{key['instance']}",
        "resolved": record.resolved,
        "harness": record.harness,
        "source": record.source,
        "has_tests": bool(record.tests),
        "passed": _tests(record, "success"),
        "failed": _tests(record, "failure"),
    }
