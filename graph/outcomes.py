"""Outcome feedback on any kind of memory: store a report once, recount what reports say.

The queries live in cypher/outcomes.cypher. A memory is an Episode, a Snippet or a Pattern;
everything here is the same for each (the label goes into the query text, checked).
"""

from __future__ import annotations

import uuid
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any

from metisgraph.graph.confidence import CONFIDENCE, ConfidenceSettings
from metisgraph.graph.cypher import Query, query
from metisgraph.graph.staleness import refresh_staleness
from metisgraph.graph.store import GraphStore, Transaction

__all__ = [
    "MEMORY_LABELS",
    "MIGRATION_BATCH",
    "OUTCOME_NOTES_KEPT",
    "OutcomeReport",
    "ReportConflict",
    "add_evidence_steps",
    "bridge_report_key",
    "evidence_params",
    "memory_label",
    "record_outcome",
    "recount_steps",
    "verdict_feedback_within",
]

Row = dict[str, Any]
MEMORY_LABELS = ("Episode", "Snippet", "Pattern")
OUTCOME_NOTES_KEPT = 20
MIGRATION_BATCH = 1000  # rows a migration commits at once: each batch well within the timeout


class ReportConflict(ValueError):
    """The idempotency key was used already, for a report that said something else."""


@dataclass(frozen=True)
class OutcomeReport:
    """Whether reusing a memory worked, where it was applied, and who says so."""

    project: str
    memory_id: str
    success: bool
    key: str | None = None  # the caller's idempotency key: the same key counts once
    applied_in: str | None = None  # the episode it was used in
    applied_project: str | None = None  # that episode's project (default: the memory's)
    agent: str = "-"  # the caller, when the episode's task names no agent
    note: str | None = None  # as stored: callers sanitize it first


def _labelled(name: str, label: str) -> Query:
    if label not in MEMORY_LABELS:
        raise ValueError(f"not a kind of memory: {label!r}")
    return query(name).naming(label=label)


def evidence_params(settings: ConfidenceSettings = CONFIDENCE) -> Row:
    """What recount_evidence reads from the settings: repeats' weight, the priors."""
    priors = {s: {"mean": p.mean, "strength": p.strength} for s, p in settings.priors.items()}
    return {
        "repeat_weight": settings.repeat_weight,
        "priors": priors,
        "fallback": priors[settings.unknown_source],
    }


def recount_steps(
    label: str, keys: Sequence[Row], settings: ConfidenceSettings = CONFIDENCE
) -> list[tuple[str | Query, Row]]:
    """The write step that recounts these memories ({project, id}) from their reports."""
    if not keys:
        return []
    return [
        (_labelled("recount_evidence", label), {"keys": list(keys), **evidence_params(settings)})
    ]


def bridge_report_key(episode_id: str, snippet_id: str, outcome: str) -> str:
    """The key of the report bridge_outcome_reports writes for this link and outcome."""
    return f"bridge:{episode_id}:{snippet_id}:{outcome}"


def add_evidence_steps(
    label: str, keys: Sequence[Row], settings: ConfidenceSettings = CONFIDENCE
) -> list[tuple[str | Query, Row]]:
    """The write step that adds to these memories' statistics ({project, id, reports}) the
    reports the transaction wrote with `pending` set (the keys in `reports`): the totals a
    recount gives, without rereading the reports counted before (cypher/outcomes.cypher
    add_evidence)."""
    if not keys:
        return []
    return [(_labelled("add_evidence", label), {"keys": list(keys), **evidence_params(settings)})]


def verdict_feedback_within(
    keys: Sequence[Row], settings: ConfidenceSettings = CONFIDENCE
) -> Callable[[Transaction], Awaitable[int]]:
    """Harness verdicts as feedback, as the last step of the write transaction that applied
    them (keys: {project, run, instance}): the code each judged run submitted is reported
    about with the verdict's outcome — replacing the report of the agent's own claim — and
    recounted. Inside the transaction, so code written by the same batch is reached and a
    crash never leaves a verdict applied with its feedback still to do. Returns how many
    pieces of code were told."""

    async def feedback(tx: Transaction) -> int:
        if not keys:
            return 0
        rows = await tx.run("verdict_bridges", keys=list(keys))
        if not rows:
            return 0
        await tx.run("retract_bridge_reports", rows=rows)
        await tx.run("bridge_outcome_reports", rows=rows, pending=False)  # recounted below
        told = sorted({(r["project"], r["id"]) for r in rows})
        for step, params in recount_steps("Snippet", [{"project": p, "id": i} for p, i in told]):
            await tx.run_query(step, params)
        return len(told)

    return feedback


async def memory_label(store: GraphStore, project: str, memory_id: str) -> str | None:
    """Episode, Snippet or Pattern: what the id names in the project (None: nothing)."""
    rows = await store.run("memory_label", project=project, id=memory_id)
    return str(rows[0]["label"]) if rows else None


async def record_outcome(
    store: GraphStore,
    report: OutcomeReport,
    settings: ConfidenceSettings = CONFIDENCE,
    *,
    also: Sequence[tuple[str | Query, Row]] = (),
) -> Row | None:
    """Store the report (once per key) and return the memory's statistics after it, with
    `label` and `duplicate` (the key had been used for this very report). None when the
    project holds no such memory; ReportConflict when the key said something else.

    `also`: further write steps for the same transaction (run before the recount).
    """
    label = await memory_label(store, report.project, report.memory_id)
    if label is None:
        return None
    duplicate = False
    if report.key is not None:
        stored = await store.run("outcome_report_stored", project=report.project, key=report.key)
        if stored:
            _same_or_refuse(stored[0], report)
            duplicate = True
    key = report.key or f"report:{uuid.uuid4().hex}"
    steps: list[tuple[str | Query, Row]] = []
    if not duplicate:
        steps.append(
            (_labelled("record_outcome_report", label), _report_params(report, label, key))
        )
        steps.append(("touch_project", {"projects": [report.project]}))
        steps.extend(also)
    keys = [{"project": report.project, "id": report.memory_id}]
    steps.extend(recount_steps(label, keys, settings))
    rows = await store.write_many(steps)
    if not rows:
        return None  # forgotten between the two transactions
    if label == "Snippet" and not duplicate and report.applied_in is not None:
        await refresh_staleness(store, report.project, snippets=[report.memory_id])
    return {**rows[0], "label": label, "duplicate": duplicate}


def _same_or_refuse(stored: Row, report: OutcomeReport) -> None:
    if stored["memory_id"] != report.memory_id or stored["success"] != report.success:
        said = "success" if stored["success"] else "failure"
        raise ReportConflict(
            f"idempotencyKey {report.key!r} was used for another report "
            f"({said} of {stored['memory_id']!r})"
        )


def _report_params(report: OutcomeReport, label: str, key: str) -> Row:
    return {
        "project": report.project,
        "id": report.memory_id,
        "label": label,
        "key": key,
        "success": report.success,
        "applied_in": report.applied_in,
        "applied_project": report.applied_project or report.project,
        "agent": report.agent,
        "note": report.note,
        "keep": OUTCOME_NOTES_KEPT,
    }


async def migrate_outcomes(
    store: GraphStore, project: str | None = None, *, batch: int = MIGRATION_BATCH
) -> dict[str, int]:
    """Memories stored before outcome reports: priors kept apart, `active_at`, reuse
    counted before as one report per outcome, recounted; each project's clock.

    Every part commits in transactions of at most ``batch`` rows (or memories), never the
    whole store at once, and takes only what is still to do: a run cut short (a crash, a
    failed batch) is finished by the next one, to the same graph. ``project`` narrows it to
    one project (None: the whole store).
    """
    scope = {"project": project, "batch": batch}
    changes = {
        "memories": sum(
            r["memories"]
            for r in await store.run("migrate_memory_priors", **scope, **evidence_params())
        ),
        "legacy": sum(r["memories"] for r in await store.run("migrate_legacy_outcomes", **scope)),
        "projects": sum(r["projects"] for r in await store.run("migrate_project_clocks", **scope)),
    }
    for label in ("Episode", "Snippet"):
        after = ("", "")
        while keys := await store.run(
            "memories_reported",
            label=label,
            project=project,
            after_project=after[0],
            after_id=after[1],
            limit=batch,
        ):
            await store.write_many(recount_steps(label, keys))
            changes[f"recounted_{label.lower()}s"] = changes.get(
                f"recounted_{label.lower()}s", 0
            ) + len(keys)
            after = (keys[-1]["project"], keys[-1]["id"])
    return changes
