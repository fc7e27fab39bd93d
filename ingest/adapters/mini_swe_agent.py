"""mini-swe-agent ``.traj.json``: ``trajectory_format`` mini-swe-agent-1 and -1.1.

Format 1: ``messages`` of system / user / assistant; the assistant writes a THOUGHT
and one fenced bash block; the next user message is ``<returncode>N</returncode>
<output>…</output>``, or a complaint about the format, or (after the final command)
the submission itself. Format 1.1 (mini-swe-agent 2) adds native tool calls: the
assistant message carries ``tool_calls`` and each result is a ``role: tool`` message
with ``extra.returncode``; the run ends with a ``role: exit`` message. Outcome labels
(results_summary.json, eval/<id>.report.json) are looked up beside the file.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

from metisgraph.ingest.adapters.base import (
    Parsed,
    Refused,
    ShapeError,
    SourceRef,
    refuse,
)
from metisgraph.ingest.adapters.jsonfile import JsonLine, load_json, parse_or_refuse
from metisgraph.ingest.adapters.labels import find_resolved
from metisgraph.ingest.adapters.run import Run, Step, run_records
from metisgraph.ingest.adapters.shape import (
    as_int,
    as_object,
    list_at,
    object_at,
    text_at,
    text_of,
)
from metisgraph.ingest.adapters.statement import problem_statement
from metisgraph.ingest.adapters.timestamps import from_epoch

__all__ = ["parse_mini_swe_agent", "read_mini_swe_agent"]

FORMAT = "mini-swe-agent"
_FENCE = re.compile(r"```(?:bash|mswea_bash_command)[ \t]*\n(.*?)\n```", re.DOTALL)
_THOUGHT = re.compile(r"^\s*THOUGHT:\s*", re.IGNORECASE)
_RETURNCODE = re.compile(r"<returncode>\s*(-?\d+)\s*</returncode>")
_OUTPUT = re.compile(r"<output>\n?(.*)</output>", re.DOTALL)
# The first line a command prints to hand in its work (v1, then v2 spelling).
_SUBMIT_MARKERS = ("COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT", "MINI_SWE_AGENT_FINAL_OUTPUT")


def read_mini_swe_agent(path: Path, project: str | None = None) -> Iterator[Parsed | Refused]:
    """Records from one mini-swe-agent trajectory file."""
    loaded = load_json(path)
    if isinstance(loaded, Refused):
        yield loaded
        return
    run = parse_or_refuse(parse_mini_swe_agent, loaded, path)
    if isinstance(run, Refused):
        yield run
        return
    yield from run_records(run, project)


def parse_mini_swe_agent(doc: JsonLine, path: Path) -> Run:
    """The run a mini-swe-agent trajectory describes."""
    data = as_object(doc.value, "")
    info = object_at(data, "info")
    messages = list_at(data, "messages")
    if not messages:
        raise ShapeError("messages", "expected a non-empty list of messages")
    instance_id = text_at(data, "instance_id") or path.name.split(".traj")[0]
    steps = _steps(messages, doc.ref)
    times = [s.created_at for s in steps if isinstance(s, Step) and s.created_at]
    exit_status = text_at(info, "exit_status", "info.exit_status")
    stats = object_at(info, "model_stats", "info.model_stats")
    return Run(
        format=FORMAT,
        ref=doc.ref,
        content=doc.text,
        instance_id=instance_id,
        goal=_goal(messages, info),
        agent=FORMAT,
        model=_model(info, messages),
        exit_status=exit_status,
        submission=_submission(info, messages),
        resolved=find_resolved(path, instance_id),
        gave_up=exit_status is not None and exit_status != "Submitted",
        started_at=min(times, default=None),
        ended_at=max(times, default=None),
        steps=steps,
        facts={
            "trajectory_format": data.get("trajectory_format"),
            "mini_version": info.get("mini_version"),
            "cost": stats.get("instance_cost"),
            "api_calls": stats.get("api_calls"),
        },
    )


def _goal(messages: list[Any], info: dict[str, Any]) -> str:
    agent_config = object_at(object_at(info, "config", "info.config"), "agent", "info.config.agent")
    template = agent_config.get("instance_template")
    for index, message in enumerate(messages):
        if isinstance(message, dict) and message.get("role") == "user":
            prompt = text_of(message.get("content"), f"messages[{index}].content")
            return problem_statement(prompt, template if isinstance(template, str) else None)
    raise ShapeError("messages", "no user message holds the task")


def _model(info: dict[str, Any], messages: list[Any]) -> str | None:
    model_config = object_at(object_at(info, "config", "info.config"), "model", "info.config.model")
    name = model_config.get("model_name")
    if isinstance(name, str) and name:
        return name
    for message in messages:
        response = _extra(message).get("response")
        if isinstance(response, dict) and isinstance(response.get("model"), str):
            return str(response["model"])
    return None


def _submission(info: dict[str, Any], messages: list[Any]) -> str | None:
    submission = text_at(info, "submission", "info.submission")
    if submission:
        return submission
    for message in reversed(messages):
        if isinstance(message, dict) and message.get("role") == "exit":
            extra = _extra(message)
            value = extra.get("submission")
            return value if isinstance(value, str) else None
    return None


def _steps(messages: list[Any], ref: SourceRef) -> list[Step | Refused]:
    assistants = [i for i, m in enumerate(messages) if _role(m) == "assistant"]
    steps: list[Step | Refused] = []
    for n, index in enumerate(assistants):
        end = assistants[n + 1] if n + 1 < len(assistants) else len(messages)
        followers = list(enumerate(messages[index + 1 : end], start=index + 1))
        try:
            steps.extend(_assistant_steps(messages[index], index, followers))
        except ShapeError as exc:
            steps.append(
                refuse(ref.at(f"messages[{index}]"), messages[index], exc.field, exc.message)
            )
    return steps


def _assistant_steps(
    message: dict[str, Any], index: int, followers: list[tuple[int, Any]]
) -> list[Step]:
    pointer = f"messages[{index}]"
    content = text_of(message.get("content"), f"{pointer}.content")
    thought = _THOUGHT.sub("", _FENCE.split(content)[0]).strip() or None
    created = _timestamp(message)
    calls = _tool_calls(message, pointer)
    if not calls:
        fences = _FENCE.findall(content)
        # mini-swe-agent refuses a reply unless it holds exactly one command block.
        calls = [(None, fences[0])] if len(fences) == 1 else []
    if not calls:
        return [_unparsed_step(pointer, content, created, followers)]
    steps = []
    for k, (call_id, command) in enumerate(calls):
        where = pointer if len(calls) == 1 else f"{pointer}.tool_calls[{k}]"
        step = Step(where, "command", command=command, thought=thought, created_at=created)
        if call_id:
            step.facts["tool_call_id"] = call_id
        _observe(step, _observation_for(call_id, followers))
        steps.append(step)
    return steps


def _unparsed_step(
    pointer: str, content: str, created: datetime | None, followers: list[tuple[int, Any]]
) -> Step:
    """A reply with no runnable action: the agent only talked, and was told off for it."""
    thought = _THOUGHT.sub("", content).strip() or None
    step = Step(pointer, "think", thought=thought, created_at=created)
    reply = next((m for _, m in followers if _role(m) in {"user", "tool"}), None)
    if reply is not None:
        step.observation = text_of(reply.get("content"), f"{pointer}.reply")
        step.failed = True
    return step


def _tool_calls(message: dict[str, Any], pointer: str) -> list[tuple[str | None, str]]:
    calls = []
    for k, call in enumerate(list_at(message, "tool_calls", f"{pointer}.tool_calls")):
        where = f"{pointer}.tool_calls[{k}]"
        function = object_at(as_object(call, where), "function", f"{where}.function")
        arguments = function.get("arguments")
        if isinstance(arguments, str):
            try:
                arguments = json.loads(arguments)
            except json.JSONDecodeError:
                raise ShapeError(f"{where}.function.arguments", "not valid JSON") from None
        command = arguments.get("command") if isinstance(arguments, dict) else None
        if not isinstance(command, str):
            raise ShapeError(f"{where}.function.arguments.command", "expected a string")
        call_id = call.get("id")
        calls.append((call_id if isinstance(call_id, str) else None, command))
    return calls


def _observation_for(call_id: str | None, followers: list[tuple[int, Any]]) -> Any:
    if call_id is not None:
        for _, message in followers:
            if _role(message) == "tool" and message.get("tool_call_id") == call_id:
                return message
    for _, message in followers:
        if _role(message) in {"user", "exit"}:
            return message
    return None


def _observe(step: Step, message: Any) -> None:
    command = step.command or ""
    submitting = any(command.lstrip().startswith(f"echo {m}") for m in _SUBMIT_MARKERS)
    if submitting:
        step.action_type = "submit"
    if message is None:
        return
    text = text_of(message.get("content"), f"{step.pointer}.observation")
    extra = _extra(message)
    raw_output = extra.get("raw_output")
    returncode = as_int(extra.get("returncode"))
    tagged = _RETURNCODE.search(text)
    if returncode is None and tagged:
        returncode = int(tagged.group(1))
    if isinstance(raw_output, str):
        step.observation = raw_output
    elif tagged:
        inner = _OUTPUT.search(text)
        step.observation = inner.group(1) if inner else text[tagged.end() :].strip()
    else:
        step.observation = text
    if returncode is None and submitting and _role(message) in {"user", "exit"}:
        returncode = 0  # the agent only stops on a submission whose command exited 0
    step.returncode = returncode
    step.failed = returncode is None  # a timeout or exception message instead of output
    step.executed = True


def _timestamp(message: dict[str, Any]) -> datetime | None:
    extra = _extra(message)
    stamp = extra.get("timestamp")
    response = extra.get("response")
    if not isinstance(stamp, int | float) and isinstance(response, dict):
        stamp = response.get("created")
    if isinstance(stamp, int | float) and not isinstance(stamp, bool) and stamp > 0:
        return from_epoch(float(stamp))
    return None


def _role(message: Any) -> str | None:
    role = message.get("role") if isinstance(message, dict) else None
    return role if isinstance(role, str) else None


def _extra(message: Any) -> dict[str, Any]:
    extra = message.get("extra") if isinstance(message, dict) else None
    return extra if isinstance(extra, dict) else {}
