"""The loop: plan → execute → observe → memorize, with a pluggable model and executor."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, Field, ValidationError

from metisgraph_client._client import Client
from metisgraph_client._errors import MetisgraphError
from metisgraph_client._models import OutcomeStats, PlanContext
from metisgraph_client._operations import new_id

__all__ = [
    "Executor",
    "Model",
    "ModelReplyError",
    "Observation",
    "Step",
    "StepRecord",
    "TaskReport",
    "parse_step",
    "run_task",
]


class Step(BaseModel):
    """The model's answer, as the planning prompt asks for it."""

    action: str
    parameters: dict[str, Any] = Field(default_factory=dict)
    reasoning: str = ""
    cites: list[str] = Field(default_factory=list)


@dataclass(frozen=True)
class Observation:
    """What running a step showed: its output, whether it worked, whether the task is done."""

    output: str
    success: bool
    error: str | None = None
    done: bool = False


Model = Callable[[str], str]  # prompt -> the model's reply (one JSON object)
Executor = Callable[[Step], Observation]


class ModelReplyError(MetisgraphError):
    """The model's reply is not the JSON object the prompt asks for."""


@dataclass
class StepRecord:
    number: int
    step: Step
    observation: Observation
    cited: list[str]  # the memory ids behind the labels the step cited
    episode_id: str


@dataclass
class TaskReport:
    task_id: str
    resolved: bool
    steps: list[StepRecord] = field(default_factory=list)
    feedback: list[OutcomeStats] = field(default_factory=list)

    @property
    def cited(self) -> list[str]:
        return list(dict.fromkeys(i for s in self.steps for i in s.cited))


_OBJECT = re.compile(r"\{.*\}", re.DOTALL)


def parse_step(reply: str) -> Step:
    """The step in a model's reply (the JSON object in it, fenced or not)."""
    found = _OBJECT.search(reply)
    try:
        return Step.model_validate(json.loads(found.group(0) if found else reply))
    except (ValueError, ValidationError) as error:
        raise ModelReplyError(f"the model's reply is not a step {{action, parameters, "
                              f"reasoning, cites}}: {error}") from None  # fmt: skip


def _cited(plan: PlanContext, step: Step) -> list[str]:
    """The ids of the memories a step cites that take outcome feedback (unknown labels none)."""
    found = (plan.memory(label.strip()) for label in step.cites)
    return [m.id for m in found if m is not None and m.takes_feedback]


def _record_step(client: Client, project: str, task_id: str, number: int, step: Step,
                 seen: Observation, cited: list[str]) -> str:  # fmt: skip
    episode_id = new_id("ep")
    client.record_episode(
        project, step.reasoning or step.action, id=episode_id, taskId=task_id, step=number,
        reasoning=step.reasoning or None,
        action={"type": "command", "command": step.action, "parameters": step.parameters},
        observation=seen.output or None, error=seen.error,
        outcome="success" if seen.success else "failure", source="executed",
        facts={"cites": step.cites, "cited": cited}, cites=cited,
    )  # fmt: skip
    return episode_id


def _state(steps: list[StepRecord]) -> str:
    """Where the task stands: every step taken so far in it (so a plan never loses its own
    task's history, with memory off or cut by the budget), and the last step's output."""
    done = [f"step {s.number}: {s.step.action} → {'worked' if s.observation.success else 'failed'}"
            for s in steps]  # fmt: skip
    last = steps[-1].observation.output
    return "\n".join(done) + (f"\nlast output:\n{last}" if last else "")


def run_task(
    client: Client,
    project: str,
    goal: str,
    *,
    model: Model,
    executor: Executor,
    max_steps: int = 8,
    task_id: str | None = None,
    environment: dict[str, Any] | None = None,
    tools: list[str] | None = None,
    budget: int = 2000,
    k: int = 8,
) -> TaskReport:
    """Work a task to its end: each step planned from memory, run, and memorised; then the
    task closed (resolved or abandoned) and outcome feedback sent for every cited memory.
    ``k=0`` plans without memory (a control run): steps are still recorded."""
    task_id = task_id or new_id("task")
    client.record_task(project, goal, id=task_id, status="open")
    report = TaskReport(task_id=task_id, resolved=False)
    state: str | None = None
    error: str | None = None
    for number in range(1, max_steps + 1):
        plan = client.plan_context(project, goal, state=state, error=error,
                                   environment=environment, tools=tools, k=k,
                                   budget=budget)  # fmt: skip
        step = parse_step(model(plan.prompt))
        seen = executor(step)
        cited = _cited(plan, step)
        episode = _record_step(client, project, task_id, number, step, seen, cited)
        report.steps.append(StepRecord(number, step, seen, cited, episode))
        state, error = _state(report.steps), seen.error
        if seen.done:
            report.resolved = seen.success
            break
    client.record_task(project, goal, id=task_id,
                       status="resolved" if report.resolved else "abandoned",
                       outcome="success" if report.resolved else "failure")  # fmt: skip
    note = f"cited while working task {task_id}"
    report.feedback = [client.record_outcome(project, memory_id, report.resolved, note)
                       for memory_id in report.cited]  # fmt: skip
    return report
