"""`metisgraph eval plan`: does the planning prompt hand the agent what fixed the error?

The runs a label file names go through the normal ingest pipeline into a fresh project
namespace (as for `eval lineage`). Then, for each error the labels say a run fixed,
planContext is asked as an agent that just hit it would ask: the goal
"<repository>: <error line>", in the run's project (every project the runs wrote readable),
at the budget given (2000 tokens by default). A prompt *holds the fix* when it shows the
labelled fixing step (its id, or the id of a step labelled part of the same change) together
with the head of that step's action as stored — its first non-blank line, whitespace
collapsed, at most ``HEAD_CHARS`` characters. Scored overall and per source, with the
prompts' token counts and the prompts that say no memory applies while memories were left
out. Every project the runs wrote is removed afterwards.
"""

from __future__ import annotations

import re
import statistics
import uuid
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from metisgraph.api.eval.lineage_labels import (
    LineageLabel,
    StepRef,
    in_namespace,
    load_labels,
    read_runs,
    steps_of,
)
from metisgraph.api.graphql.plan_service import PlanRequest, plan_context
from metisgraph.api.services import Services

__all__ = ["HEAD_CHARS", "PlanCase", "PlanReport", "action_head", "evaluate_plan", "holds"]

HEAD_CHARS = 80
_NONE = "no memory applies"
_SPACE = re.compile(r"\s+")


def _flat(text: str) -> str:
    return _SPACE.sub(" ", text).strip()


def action_head(command: str | None) -> str | None:
    """What a prompt must show of an action: its first non-blank line, whitespace collapsed,
    at most ``HEAD_CHARS`` characters."""
    line = next((x for x in (command or "").splitlines() if x.strip()), "")
    return _flat(line)[:HEAD_CHARS].strip() or None


def holds(prompt: str, ids: Iterable[str], heads: Iterable[str | None]) -> tuple[bool, bool]:
    """(the fix is shown with its action, its step is at least named) in ``prompt``."""
    flat = _flat(prompt)
    cited = [i for i in ids if i in prompt]
    shown = any(h and h in flat for h in heads)
    return bool(cited) and shown, bool(cited)


@dataclass
class PlanCase:
    """One fixed error: the question asked, and what the prompt held."""

    label: LineageLabel
    goal: str
    heads: list[str | None] = field(default_factory=list)
    holds: bool = False
    cited: bool = False
    tokens: int = 0
    shown: int = 0
    left_out: int = 0
    claims_none: bool = False  # says no memory applies while memories were left out
    error: str | None = None
    prompt: str = ""

    def as_json(self, *, prompt: bool = False) -> dict[str, Any]:
        out: dict[str, Any] = {
            "label": self.label.name, "line": self.label.line, "source": self.label.source,
            "goal": self.goal[:200], "fix": self.heads, "holds": self.holds,
            "cited": self.cited, "tokens": self.tokens, "memories": self.shown,
            "left_out": self.left_out, "claims_none": self.claims_none,
        }  # fmt: skip
        if self.error:
            out["error"] = self.error
        if prompt:
            out["prompt"] = self.prompt
        return out


def score(cases: Iterable[PlanCase]) -> dict[str, Any]:
    """How many prompts hold the fix, cite its step, claim none applies; their tokens."""
    cases = list(cases)
    tokens = sorted(c.tokens for c in cases if not c.error)
    return {
        "fixed": len(cases),
        "holds": sum(c.holds for c in cases),
        "holds_ratio": round(sum(c.holds for c in cases) / len(cases), 3) if cases else None,
        "cited": sum(c.cited for c in cases),
        "claims_none_while_left_out": sum(c.claims_none for c in cases),
        "failed": sum(bool(c.error) for c in cases),
        "tokens_median": statistics.median(tokens) if tokens else None,
        "tokens_max": tokens[-1] if tokens else None,
        "memories_median": statistics.median(c.shown for c in cases) if cases else None,
    }


@dataclass
class PlanReport:
    overall: dict[str, Any]
    sources: dict[str, dict[str, Any]]
    cases: list[PlanCase]
    budget: int
    ingest: dict[str, int] = field(default_factory=dict)

    def as_json(self, *, prompts: bool = False) -> dict[str, Any]:
        return {
            "budget": self.budget,
            "overall": self.overall,
            "sources": self.sources,
            "cases": [c.as_json(prompt=prompts) for c in self.cases],
        }


def goal_of(label: LineageLabel) -> str:
    """The question an agent that just hit the error asks."""
    line = label.error.strip()
    return f"{label.repository}: {line}" if label.repository else line


async def evaluate_plan(
    services: Services,
    labels_file: Path,
    runs: Path,
    *,
    budget: int = 2000,
    k: int = 8,
    keep: bool = False,
    namespace: str | None = None,
) -> PlanReport:
    """Ingest the labelled runs into a fresh namespace, plan for each fixed error, score."""
    labels = load_labels(labels_file)
    namespace = namespace or f"eval-{uuid.uuid4().hex[:8]}-"
    created: set[str] = set()
    records = list(in_namespace(read_runs(runs, [x.run for x in labels]), namespace, created))
    cases: list[PlanCase] = []
    try:
        summary = await services.ingestor.ingest(item for _, item in records)
        steps = steps_of(records)
        fixed = [x for x in labels if x.verdict == "fixed"]
        wanted = {
            (steps[r].project, steps[r].episode_id)
            for x in fixed
            for r in (StepRef(x.run, p) for p in x.accepted)
            if r in steps
        }
        rows = await services.store.run(
            "eval_step_actions", steps=[{"project": p, "id": i} for p, i in sorted(wanted)]
        )
        commands = {(r["project"], r["id"]): r.get("command") for r in rows}
        for label in fixed:
            cases.append(await _case(services, label, steps, commands, created, budget, k))
    finally:
        if not keep:
            for project in sorted(created):
                await services.store.run("forget_project", project=project)
    by_source: dict[str, list[PlanCase]] = defaultdict(list)
    for case in cases:
        by_source[case.label.source].append(case)
    return PlanReport(
        overall=score(cases),
        sources={s: score(c) for s, c in sorted(by_source.items())},
        cases=cases,
        budget=budget,
        ingest=summary.as_dict(),
    )


async def _case(
    services: Services,
    label: LineageLabel,
    steps: dict[StepRef, Any],
    commands: dict[tuple[str, str], str | None],
    projects: set[str],
    budget: int,
    k: int,
) -> PlanCase:
    case = PlanCase(label, goal_of(label))
    fixers = [
        steps[r] for r in (StepRef(label.run, p) for p in sorted(label.accepted)) if r in steps
    ]
    seen = steps.get(StepRef(label.run, label.seen[0]))
    if not fixers or seen is None:
        case.error = "the labelled steps were not ingested"
        return case
    case.heads = [action_head(commands.get((s.project, s.episode_id))) for s in fixers]
    request = PlanRequest(
        project=seen.project, goal=case.goal, k=k, budget=budget,
        projects=tuple(sorted(projects - {seen.project})),
    )  # fmt: skip
    try:
        planned = await plan_context(services, request)
    except Exception as exc:  # one failing question is counted, the others go on
        case.error = f"{type(exc).__name__}: {exc}"[:300]
        return case
    fitted = planned.fitted
    case.prompt = fitted.prompt
    case.tokens, case.shown, case.left_out = fitted.tokens, len(fitted.memories), fitted.left_out
    case.claims_none = _NONE in fitted.prompt and fitted.left_out > 0
    case.holds, case.cited = holds(fitted.prompt, [s.episode_id for s in fixers], case.heads)
    return case
