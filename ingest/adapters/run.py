"""One agent run on one task, whatever format it came in, turned into memory records.

Each trajectory reader fills a ``Run``; ``run_records`` makes of it one TaskRecord,
one EpisodeRecord per step (chained by ``step``), and a final submission episode
carrying the patch, all through ``validate_record``.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from metisgraph.ingest.adapters.base import Parsed, Refused, SourceRef, validate_record
from metisgraph.ingest.adapters.layout import run_name
from metisgraph.ingest.adapters.text import OBSERVATION_LIMIT, cap, cap_head, first_line, tag
from metisgraph.ingest.records import Outcome, SnippetKind, SnippetRelation, Source, TaskStatus

__all__ = ["Run", "Step", "derive_project", "run_records", "run_verdict"]

GOAL_LIMIT = 4_000
SUMMARY_LIMIT = 2_000

# SWE-bench names an instance after its repository: "owner/name" becomes "owner__name",
# then "-<number>" (sometimes a letter before the number, as in "-i1").
_INSTANCE = re.compile(r"^(?P<owner>[A-Za-z0-9][\w.-]*?)__(?P<name>[\w.-]+?)-[A-Za-z]*\d+$")
_PROJECT_CHARS = re.compile(r"[^A-Za-z0-9._:@/-]+")


@dataclass
class Step:
    """One agent step: what it thought, what it did, what came back."""

    pointer: str
    action_type: str
    command: str | None = None
    parameters: dict[str, Any] = field(default_factory=dict)
    thought: str | None = None
    observation: str | None = None
    returncode: int | None = None
    failed: bool = False  # an error marker in the output, where there is no return code
    executed: bool = False  # the action ran and produced an observation
    created_at: datetime | None = None
    facts: dict[str, Any] = field(default_factory=dict)

    @property
    def outcome(self) -> Outcome:
        if self.returncode is not None:
            return Outcome.success if self.returncode == 0 else Outcome.failure
        return Outcome.failure if self.failed else Outcome.unknown


@dataclass
class Run:
    """What a trajectory says about one run: readers fill it, ``run_records`` makes records."""

    format: str
    ref: SourceRef
    content: str  # the item's text, hashed into the task id
    instance_id: str
    goal: str
    agent: str
    model: str | None = None
    repo: str | None = None
    exit_status: str | None = None
    submission: str | None = None
    resolved: bool | None = None  # an outside label: did the tests pass?
    gave_up: bool = False  # the run stopped on an error or a limit, not by submitting
    started_at: datetime | None = None
    ended_at: datetime | None = None
    steps: list[Step | Refused] = field(default_factory=list)
    facts: dict[str, Any] = field(default_factory=dict)


def claimed_outcome(run: Run) -> Outcome:
    """What the agent itself claimed: a submission claims success; giving up, failure."""
    if run.gave_up:
        return Outcome.failure
    return Outcome.success if run.submission and run.submission.strip() else Outcome.unknown


def run_verdict(run: Run) -> tuple[TaskStatus, Outcome]:
    """Status and outcome: a passing label resolves; giving up abandons; a failing label fails."""
    if run.resolved is True:
        return TaskStatus.resolved, Outcome.success
    if run.gave_up:
        return TaskStatus.abandoned, Outcome.failure
    if run.resolved is False:
        return TaskStatus.open, Outcome.failure
    return TaskStatus.open, Outcome.unknown


def derive_project(project: str | None, instance_id: str, repo: str | None, stem: str) -> str:
    """The given project; else ``owner/name`` from a SWE-bench instance id; else repo; else stem."""
    if project:
        return project
    match = _INSTANCE.match(instance_id)
    if match:
        return f"{match['owner']}/{match['name']}"
    if repo:
        return repo
    return _PROJECT_CHARS.sub("-", stem).strip("-._:@/")[:128] or "default"


def task_id(run: Run) -> str:
    """Deterministic: the same trajectory always gives the same id."""
    digest = hashlib.sha256(run.content.encode("utf-8")).hexdigest()[:12]
    return f"{run.format}:{run.instance_id}:{digest}"


_FOLDER_DATE = re.compile(r"(?<!\d)(20\d\d)-?([01]\d)-?([0-3]\d)(?:[_T.-]|$)")


def run_moment(run: Run) -> tuple[datetime | None, str]:
    """When a run happened, from what it carries, and from where: its own start or end (the
    harness's), else a date in its folder or file name (``20240825_…``, ``2024-08-25…``);
    else nothing (None: it is dated at ingest time)."""
    if run.started_at is not None:
        return run.started_at, "run start"
    if run.ended_at is not None:
        return run.ended_at - timedelta(seconds=len(run.steps)), "run end"
    for part in reversed(Path(run.ref.file).parts):
        found = _FOLDER_DATE.match(part)
        if found is not None:
            try:
                year, month, date = (int(g) for g in found.groups())
                day = datetime(year, month, date, tzinfo=UTC)
            except ValueError:
                continue
            return day, f"name {part[:40]}"
    return None, "ingest time"


def _dated(run: Run) -> None:
    """Steps without a time of their own get the run's moment plus their place, a second
    apart (their order kept), marked estimated with where the moment came from; with no
    moment at all they are marked as dated at ingest time."""
    base, source = run_moment(run)
    for index, step in enumerate(run.steps):
        if isinstance(step, Refused) or step.created_at is not None:
            continue
        if base is not None:
            step.created_at = base + timedelta(seconds=index)
        step.facts["time_estimated"] = source
    if base is not None and run.started_at is None:
        run.started_at = base


def _after_steps(run: Run) -> datetime | None:
    """The moment after the last step, when the run's own end is unknown."""
    last = [s.created_at for s in run.steps if isinstance(s, Step) and s.created_at]
    return max(last) + timedelta(seconds=1) if last else None


def run_records(run: Run, project: str | None = None) -> Iterator[Parsed | Refused]:
    """The task, then its steps in order, then the submission (when there is one)."""
    _dated(run)
    stem = run.ref.file.rsplit("/", 1)[-1].split(".", 1)[0]
    name = derive_project(project, run.instance_id, run.repo, stem)
    tid = task_id(run)
    tags = _tags(run)
    status, outcome = run_verdict(run)
    yield validate_record(_task(run, name, tid, tags, status, outcome), run.ref)
    for index, step in enumerate(run.steps):
        if isinstance(step, Refused):
            yield step
            continue
        raw = _step_episode(step, name, tid, index, tags, run.instance_id)
        yield validate_record(raw, run.ref.at(step.pointer))
    if run.submission and run.submission.strip():
        raw = _submission(run, name, tid, len(run.steps), tags, outcome)
        yield validate_record(raw, run.ref.at("submission"))


def _tags(run: Run) -> list[str]:
    candidates = [
        tag("agent", run.agent),
        tag("model", run.model),
        tag("instance", run.instance_id),
        tag("repo", run.repo or _repo_from_instance(run.instance_id)),
    ]
    return [t for t in candidates if t]


def _repo_from_instance(instance_id: str) -> str | None:
    match = _INSTANCE.match(instance_id)
    return f"{match['owner']}/{match['name']}" if match else None


def _iso(moment: datetime | None) -> str | None:
    return moment.isoformat() if moment else None


def _task(
    run: Run, project: str, tid: str, tags: list[str], status: TaskStatus, outcome: Outcome
) -> dict[str, Any]:
    return {
        "record_type": "task",
        "project": project,
        "id": tid,
        "goal": cap_head(run.goal.strip(), GOAL_LIMIT),
        "status": status.value,
        "outcome": outcome.value,
        "started_at": _iso(run.started_at),
        "ended_at": _iso(run.ended_at),
        "tags": tags,
        "agent": run.agent,
        "run": run_name(Path(run.ref.file)),
        "instance": run.instance_id,
        "claimed_outcome": claimed_outcome(run).value,
    }


def _step_episode(
    step: Step, project: str, tid: str, index: int, tags: list[str], instance_id: str
) -> dict[str, Any]:
    thought = (step.thought or "").strip()
    facts: dict[str, Any] = {"instance_id": instance_id, **step.facts}
    if step.returncode is not None:
        facts["returncode"] = step.returncode
    observation = step.observation
    if observation is not None and len(observation) > OBSERVATION_LIMIT:
        facts["observation_chars"] = len(observation)
        observation = cap(observation)
    return {
        "record_type": "episode",
        "project": project,
        "id": f"{tid}:{index}",
        "task_id": tid,
        "step": index,
        "kind": "step",
        "summary": cap_head(thought, SUMMARY_LIMIT) if thought else describe_action(step),
        "reasoning": cap(thought) if thought else None,
        "action": {
            "type": step.action_type,
            "command": step.command,
            "parameters": step.parameters,
        },
        "observation": observation,
        "outcome": step.outcome.value,
        "source": (Source.executed if step.executed else Source.inferred).value,
        "created_at": _iso(step.created_at),
        "tags": tags,
        "facts": facts,
    }


def describe_action(step: Step) -> str:
    """A short line saying what a step did, for steps that came without a thought."""
    target = step.parameters.get("path") or first_line(step.command or "")
    if step.action_type == "submit":
        return "Submitted the changes"
    if step.action_type == "finish":
        return "Declared the task finished"
    if step.failed and step.observation and not target:
        return f"Failed: {first_line(step.observation)}"
    verbs = {"command": "Ran", "read": "Read", "edit": "Edited", "think": "Thought"}
    verb = verbs.get(step.action_type, step.action_type.capitalize())
    if not target:
        return f"{verb} (nothing recorded)"
    return f"Ran `{target}`" if step.action_type == "command" else f"{verb} {target}"


def _submission(
    run: Run, project: str, tid: str, index: int, tags: list[str], outcome: Outcome
) -> dict[str, Any]:
    patch = run.submission or ""
    files = _patched_files(patch)
    listed = ", ".join(files[:5]) + (f" and {len(files) - 5} more" if len(files) > 5 else "")
    summary = f"Submitted a patch for {run.instance_id}" + (f" changing {listed}" if files else "")
    return {
        "record_type": "episode",
        "project": project,
        "id": f"{tid}:{index}",
        "task_id": tid,
        "step": index,
        "kind": "submission",
        "summary": summary,
        "action": {"type": "submit", "command": None, "parameters": {"files": files}},
        "outcome": outcome.value,
        # The patch is the diff the environment produced, not the agent's claim.
        "source": Source.executed.value,
        "created_at": _iso(run.ended_at or _after_steps(run)),
        "tags": tags,
        "facts": {
            "instance_id": run.instance_id,
            "exit_status": run.exit_status,
            **run.facts,
            **({} if run.ended_at else {"time_estimated": run_moment(run)[1]}),
        },
        "snippets": [
            {
                "code": patch,
                "language": "diff",
                "kind": SnippetKind.patch.value,
                "name": f"{run.instance_id} patch",
                "relation": SnippetRelation.generated.value,
            }
        ],
    }


_DIFF_FILE = re.compile(r"^diff --git a/(\S+) b/", re.MULTILINE)
_PLUS_FILE = re.compile(r"^\+\+\+ (?:b/)?(\S+)", re.MULTILINE)


def _patched_files(patch: str) -> list[str]:
    files = _DIFF_FILE.findall(patch) or [f for f in _PLUS_FILE.findall(patch) if f != "/dev/null"]
    return list(dict.fromkeys(files))
