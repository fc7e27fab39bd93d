"""`metisgraph eval lineage`: the product's fix attributions scored against labelled runs.

The runs a label file names go through the normal ingest pipeline into a fresh project
namespace; the graph's claims about each error each run's task hit (``task_claims``) are
read back and set beside the labels. A product error is the label's when it was sighted at
one of the label's steps (the closest text wins when several labels share a step). Scored,
overall and per source:

* fixes — precision over every (error, step) the product claims fixed it, recall over the
  labelled fixes whose step the product names;
* workarounds — the same over workaround claims;
* unresolved — errors the product found and claims nothing about, against those labelled so.

A labelled error the product never extracted counts as missed in every recall
(``coverage`` says how many it found). Claims on product errors that match no label are
counted apart and in the strict fix precision. Every project the runs wrote is removed
afterwards.
"""

from __future__ import annotations

import uuid
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from difflib import SequenceMatcher
from pathlib import Path
from typing import Any

from metisgraph.api.eval.lineage_labels import (
    LineageLabel,
    StepRecord,
    StepRef,
    in_namespace,
    load_labels,
    read_runs,
    steps_of,
)
from metisgraph.api.services import Services
from metisgraph.graph.lineage import ErrorClaims, task_claims

__all__ = ["LabelView", "LineageReport", "evaluate_lineage", "score"]


@dataclass
class LabelView:
    """A label beside what the product says about its error."""

    label: LineageLabel
    found: bool = False
    fixes: set[str] = field(default_factory=set)  # steps (pointers) claimed to fix it
    workarounds: set[str] = field(default_factory=set)
    evidence: dict[str, list[str]] = field(default_factory=dict)  # step -> the claims' why
    failed_task: bool = False

    @property
    def product_verdict(self) -> str:
        if not self.found:
            return "not found"
        if self.fixes:
            return "fixed"
        return "workaround" if self.workarounds else "unresolved"

    def as_json(self) -> dict[str, Any]:
        return {
            "label": self.label.name,
            "line": self.label.line,
            "error": self.label.error[:120],
            "verdict": self.label.verdict,
            "step": self.label.step,
            "product": self.product_verdict,
            "fixes": sorted(self.fixes),
            "workarounds": sorted(self.workarounds),
            "evidence": self.evidence,
        }


@dataclass
class Unlabelled:
    """A product error at no labelled step, and the claims on it."""

    run: str
    sample: str
    fixes: int
    workarounds: int


def _ratio(hit: int, total: int) -> float | None:
    return round(hit / total, 3) if total else None


def score(views: Iterable[LabelView], unlabelled: Iterable[Unlabelled] = ()) -> dict[str, Any]:
    """Precision and recall of fixes, workarounds and unresolved over the views given."""
    views, extra = list(views), list(unlabelled)
    out: dict[str, Any] = {"errors": len(views), "found": sum(v.found for v in views)}
    for verdict, claimed in (("fixed", "fixes"), ("workaround", "workarounds")):
        claims = [(v, s) for v in views for s in getattr(v, claimed)]
        right = [(v, s) for v, s in claims if v.label.verdict == verdict and s in v.label.accepted]
        labelled = [v for v in views if v.label.verdict == verdict]
        recalled = [v for v in labelled if getattr(v, claimed) & v.label.accepted]
        stray = sum(getattr(u, claimed) for u in extra)
        out[verdict] = {
            "labelled": len(labelled),
            "claims": len(claims),
            "right": len(right),
            "precision": _ratio(len(right), len(claims)),
            "recall": _ratio(len(recalled), len(labelled)),
            "claims_on_unlabelled": stray,
            "strict_precision": _ratio(len(right), len(claims) + stray),
        }
    shown = [v for v in views if v.product_verdict == "unresolved"]
    labelled = [v for v in views if v.label.verdict == "unresolved"]
    out["unresolved"] = {
        "labelled": len(labelled),
        "claims": len(shown),
        "right": sum(v.label.verdict == "unresolved" for v in shown),
        "precision": _ratio(sum(v.label.verdict == "unresolved" for v in shown), len(shown)),
        "recall": _ratio(sum(v.product_verdict == "unresolved" for v in labelled), len(labelled)),
    }
    failed = [(v, s) for v in views if v.failed_task for s in v.fixes]
    out["failed_tasks"] = {
        "fix_claims": len(failed),
        "without_evidence": sum(not v.evidence.get(s) for v, s in failed),
        "wrong": sum(not (v.label.verdict == "fixed" and s in v.label.accepted) for v, s in failed),
    }
    return out


@dataclass
class LineageReport:
    overall: dict[str, Any]
    sources: dict[str, dict[str, Any]]
    views: list[LabelView]
    unlabelled: list[Unlabelled]
    ingest: dict[str, int] = field(default_factory=dict)

    def as_json(self) -> dict[str, Any]:
        return {
            "overall": self.overall,
            "sources": self.sources,
            "labels": [v.as_json() for v in self.views],
            "unlabelled": [u.__dict__ for u in self.unlabelled],
        }


async def evaluate_lineage(
    services: Services,
    labels_file: Path,
    runs: Path,
    *,
    keep: bool = False,
    namespace: str | None = None,
) -> LineageReport:
    """Ingest the labelled runs into a fresh namespace, read the claims, score them."""
    labels = load_labels(labels_file)
    namespace = namespace or f"eval-{uuid.uuid4().hex[:8]}-"
    created: set[str] = set()
    records = list(
        in_namespace(read_runs(runs, [label.run for label in labels]), namespace, created)
    )
    try:
        summary = await services.ingestor.ingest(item for _, item in records)
        steps = steps_of(records)
        tasks = {(s.project, s.task_id) for s in steps.values()}
        claims = await task_claims(services.store, tasks)
    finally:
        if not keep:
            for project in sorted(created):
                await services.store.run("forget_project", project=project)
    views, unlabelled = match(labels, steps, claims)
    by_source: dict[str, list[LabelView]] = defaultdict(list)
    for view in views:
        by_source[view.label.source].append(view)
    return LineageReport(
        overall=score(views, unlabelled),
        sources={s: score(v) for s, v in sorted(by_source.items())},
        views=views,
        unlabelled=unlabelled,
        ingest=summary.as_dict(),
    )


def match(
    labels: list[LineageLabel], steps: dict[StepRef, StepRecord], claims: list[ErrorClaims]
) -> tuple[list[LabelView], list[Unlabelled]]:
    """Each label beside the product errors sighted at its steps, and the errors at none."""
    where = {(r.project, r.episode_id): ref for ref, r in steps.items()}
    at_step: dict[StepRef, list[LineageLabel]] = defaultdict(list)
    for label in labels:
        for pointer in label.seen:
            at_step[StepRef(label.run, pointer)].append(label)
    views = {label.line: LabelView(label) for label in labels}
    unlabelled: list[Unlabelled] = []
    for error in claims:
        sighted = [where[(error.project, e)] for e in error.seen if (error.project, e) in where]
        candidates = {lab.line: lab for ref in sighted for lab in at_step.get(ref, [])}
        if not candidates:
            run = str(sighted[0].run) if sighted else error.task
            sample = (error.sample or "")[:160]
            unlabelled.append(Unlabelled(run, sample, len(error.fixes), len(error.workarounds)))
            continue
        best = max(candidates.values(), key=lambda lab: _likeness(lab.error, error))
        _add(views[best.line], error, where)
    return [views[label.line] for label in labels], unlabelled


def _likeness(line: str, error: ErrorClaims) -> float:
    sample = (error.sample or "").strip()
    text = next((s for s in sample.splitlines() if line.strip()[:40] in s), sample)
    kind = (error.kind or "").rsplit(":", 1)[-1].rsplit(".", 1)[-1]
    bonus = 0.5 if kind and kind in line else 0.0
    return SequenceMatcher(None, line.strip()[:300], text[:300]).ratio() + bonus


def _add(view: LabelView, error: ErrorClaims, where: dict[tuple[str, str], StepRef]) -> None:
    view.found = True
    view.failed_task = view.failed_task or error.task_outcome == "failure"
    for claims, into in ((error.fixes, view.fixes), (error.workarounds, view.workarounds)):
        for claim in claims:
            ref = where.get((error.project, claim.episode))
            pointer = ref.pointer if ref else f"episode {claim.episode}"
            into.add(pointer)
            if claim.why:
                view.evidence.setdefault(pointer, []).append(claim.why)
