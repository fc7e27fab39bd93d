"""OpenHands ``output.jsonl``: one run a line, its ``history`` a list of events.

Evaluation runs carry ``instance_id``, ``instance.problem_statement``,
``test_result.git_patch`` (and ``test_result.report.resolved`` once evaluated);
resolver runs carry ``issue{owner, repo, number, title, body}``, ``git_patch`` and
``success``. Current histories are events: agent actions ``{id, action, args}``
answered by observations ``{cause, observation, content, extras}``. Older ones are
flat dicts, an action followed by its observation, or ``[action, observation]`` pairs.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from metisgraph.ingest.adapters.base import (
    Parsed,
    Refused,
    ShapeError,
    SourceRef,
    refuse,
)
from metisgraph.ingest.adapters.jsonfile import JsonLine, parse_or_refuse, read_lines
from metisgraph.ingest.adapters.labels import find_resolved
from metisgraph.ingest.adapters.run import Run, Step, run_records
from metisgraph.ingest.adapters.shape import as_int, as_object, object_at, text_at
from metisgraph.ingest.adapters.statement import problem_statement
from metisgraph.ingest.adapters.text import cap
from metisgraph.ingest.adapters.timestamps import parse_datetime

__all__ = ["parse_openhands", "read_openhands"]

FORMAT = "openhands"
# Bookkeeping events, not agent steps.
_NOT_STEPS = {"system", "recall", "change_agent_state", "null", "condensation"}
_TYPES = {
    "run": "command",
    "run_ipython": "command",
    "read": "read",
    "edit": "edit",
    "think": "think",
    "message": "think",
    "finish": "finish",
}
_EDIT_PARAMETERS = ("path", "command", "view_range", "insert_line", "old_str", "new_str")


@dataclass
class _Pair:
    index: int  # position in history of the action (or of an orphan observation)
    action: dict[str, Any] | None
    observation: dict[str, Any] | None
    malformed: bool = False  # an event that is not an object: refused alone, the run goes on
    raw: Any = None


def read_openhands(path: Path, project: str | None = None) -> Iterator[Parsed | Refused]:
    """Records from an OpenHands output.jsonl: a task and its chain per line."""
    for line in read_lines(path):
        if isinstance(line, Refused):
            yield line
            continue
        run = parse_or_refuse(parse_openhands, line, path)
        if isinstance(run, Refused):
            yield run
            continue
        yield from run_records(run, project)


def parse_openhands(line: JsonLine, path: Path) -> Run:
    """The run one output.jsonl line describes."""
    data = as_object(line.value, "")
    if not isinstance(data.get("history"), list):
        raise ShapeError("history", "expected a list of events")
    issue = object_at(data, "issue")
    instance = object_at(data, "instance")
    metadata = object_at(data, "metadata")
    test_result = object_at(data, "test_result")
    instance_id = _instance_id(data, issue, instance)
    steps = [_step(pair, line.ref) for pair in _pairs(data["history"])]
    times = [s.created_at for s in steps if isinstance(s, Step) and s.created_at]
    error = data.get("error")
    return Run(
        format=FORMAT,
        ref=line.ref,
        content=line.text,
        instance_id=instance_id,
        goal=_goal(data, issue, instance),
        agent=FORMAT,
        model=_model(metadata),
        repo=_repo(issue, instance),
        exit_status=str(error) if error else None,
        submission=text_at(test_result, "git_patch", "test_result.git_patch")
        or text_at(data, "git_patch"),
        resolved=_resolved(data, test_result, path, instance_id),
        gave_up=bool(error),
        started_at=parse_datetime(text_at(metadata, "start_time", "metadata.start_time")),
        ended_at=max(times, default=None),
        steps=steps,
        facts={"agent_class": metadata.get("agent_class"), "error": error},
    )


def _instance_id(data: dict[str, Any], issue: dict[str, Any], instance: dict[str, Any]) -> str:
    value = data.get("instance_id") or instance.get("instance_id")
    if value:
        return str(value)
    if issue.get("owner") and issue.get("repo") and issue.get("number") is not None:
        return f"{issue['owner']}__{issue['repo']}-{issue['number']}"
    raise ShapeError("instance_id", "missing, and no issue{owner, repo, number} to name the run")


def _goal(data: dict[str, Any], issue: dict[str, Any], instance: dict[str, Any]) -> str:
    statement = text_at(instance, "problem_statement", "instance.problem_statement")
    if statement and statement.strip():
        return statement
    title, body = issue.get("title"), issue.get("body")
    if isinstance(title, str) and title.strip():
        return f"{title}\n\n{body}" if isinstance(body, str) and body.strip() else title
    instruction = text_at(data, "instruction")
    if instruction and instruction.strip():
        return problem_statement(instruction)
    raise ShapeError(
        "instruction", "no problem statement, issue or instruction to take the goal from"
    )


def _model(metadata: dict[str, Any]) -> str | None:
    name = object_at(metadata, "llm_config", "metadata.llm_config").get("model")
    return name if isinstance(name, str) and name else None


def _repo(issue: dict[str, Any], instance: dict[str, Any]) -> str | None:
    repo = instance.get("repo")
    if isinstance(repo, str) and repo:
        return repo
    if issue.get("owner") and issue.get("repo"):
        return f"{issue['owner']}/{issue['repo']}"
    return None


def _resolved(
    data: dict[str, Any], test_result: dict[str, Any], path: Path, instance_id: str
) -> bool | None:
    report = object_at(test_result, "report", "test_result.report")
    if isinstance(report.get("resolved"), bool):
        return bool(report["resolved"])
    if isinstance(data.get("success"), bool):  # the resolver's own verdict
        return bool(data["success"])
    return find_resolved(path, instance_id)


def _pairs(history: list[Any]) -> list[_Pair]:
    """Actions with their observations, in order; agent errors that answer nothing stand alone.

    An event that is not an object becomes a refusal of its own, in its place.
    """
    events = [_flatten_pair(item) for item in history]
    flat = [(i, e) for i, group in enumerate(events) for e in group]
    pairs = _pairs_by_cause(flat) if any("id" in e for _, e in flat) else _pairs_in_sequence(flat)
    bad = [_Pair(i, None, None, True, history[i]) for i, group in enumerate(events) if not group]
    return sorted(pairs + bad, key=lambda pair: pair.index) if bad else pairs


def _flatten_pair(item: Any) -> list[dict[str, Any]]:
    if isinstance(item, list):  # oldest histories: [action, observation]
        return [e for e in item if isinstance(e, dict)]
    return [item] if isinstance(item, dict) else []


def _pairs_by_cause(flat: list[tuple[int, dict[str, Any]]]) -> list[_Pair]:
    answers = {e["cause"]: e for _, e in flat if "observation" in e and e.get("cause") is not None}
    pairs = []
    for index, event in flat:
        if "action" in event and event.get("source", "agent") == "agent":
            if event["action"] not in _NOT_STEPS:
                pairs.append(_Pair(index, event, answers.get(event.get("id"))))
        elif _orphan_error(event):
            pairs.append(_Pair(index, None, event))
    return pairs


def _pairs_in_sequence(flat: list[tuple[int, dict[str, Any]]]) -> list[_Pair]:
    pairs: list[_Pair] = []
    for position, (index, event) in enumerate(flat):
        if "action" in event:
            # The first message of an old history is the user's instruction.
            if event["action"] in _NOT_STEPS or (position == 0 and event["action"] == "message"):
                continue
            pairs.append(_Pair(index, event, None))
        elif pairs and pairs[-1].observation is None and pairs[-1].action is not None:
            pairs[-1].observation = event
        elif _orphan_error(event):
            pairs.append(_Pair(index, None, event))
    return pairs


def _orphan_error(event: dict[str, Any]) -> bool:
    return event.get("observation") == "error" and event.get("cause") is None


def _step(pair: _Pair, ref: SourceRef) -> Step | Refused:
    pointer = f"history[{pair.index}]"
    if pair.malformed:
        kind = "null" if pair.raw is None else type(pair.raw).__name__
        return refuse(ref.at(pointer), pair.raw, pointer, f"expected an object, got {kind}")
    try:
        if pair.action is None:
            return _error_step(pair.observation or {}, pointer)
        step = _action_step(pair.action, pointer)
        # A think action is answered by a fixed acknowledgement, not by the world.
        if pair.observation is not None and step.action_type != "think":
            _observe(step, pair.observation, pointer)
    except ShapeError as exc:
        return refuse(ref.at(pointer), pair.action or pair.observation, exc.field, exc.message)
    return step


def _error_step(event: dict[str, Any], pointer: str) -> Step:
    """An error the agent caused without a valid action (a malformed tool call)."""
    step = Step(pointer, "think")
    step.observation = text_at(event, "content", f"{pointer}.content") or ""
    step.failed = True
    step.created_at = parse_datetime(text_at(event, "timestamp", f"{pointer}.timestamp"))
    return step


def _action_step(event: dict[str, Any], pointer: str) -> Step:
    name = str(event["action"])
    args = object_at(event, "args", f"{pointer}.args") if "args" in event else event
    kind = _TYPES.get(name, "command")
    command, parameters = _command(name, args, pointer)
    thought = _thought(name, event, args, pointer)
    created = parse_datetime(text_at(event, "timestamp", f"{pointer}.timestamp"))
    return Step(
        pointer, kind, command=command, parameters=parameters, thought=thought, created_at=created
    )


def _command(name: str, args: dict[str, Any], pointer: str) -> tuple[str | None, dict[str, Any]]:
    parameters: dict[str, Any] = {"tool": name}
    if name == "run":
        return text_at(args, "command", f"{pointer}.args.command"), parameters
    if name == "run_ipython":
        parameters["language"] = "python"
        return text_at(args, "code", f"{pointer}.args.code"), parameters
    if name in {"read", "edit"}:
        for key in _EDIT_PARAMETERS:
            if args.get(key) not in (None, ""):
                value = args[key]
                parameters[key] = cap(value) if isinstance(value, str) else value
        if isinstance(args.get("file_text"), str):
            parameters["file_text"] = cap(args["file_text"])
        sub = parameters.get("command") or name
        return f"{sub} {parameters.get('path', '')}".strip(), parameters
    if name == "finish" and "task_completed" in args:
        parameters["task_completed"] = args["task_completed"]
    if name.startswith("browse") and isinstance(args.get("url"), str):
        parameters["url"] = args["url"]
    return None, parameters


def _thought(name: str, event: dict[str, Any], args: dict[str, Any], pointer: str) -> str | None:
    keys = {"message": ("content",), "finish": ("final_thought", "thought", "message")}
    for key in (*keys.get(name, ()), "thought"):
        value = text_at(args, key, f"{pointer}.args.{key}")
        if value and value.strip():
            return value
    return _model_text(event)


def _model_text(event: dict[str, Any]) -> str | None:
    """What the model wrote beside its tool call, when the action kept no thought."""
    metadata = event.get("tool_call_metadata")
    response = metadata.get("model_response") if isinstance(metadata, dict) else None
    choices = response.get("choices") if isinstance(response, dict) else None
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        return None
    message = choices[0].get("message")
    content = message.get("content") if isinstance(message, dict) else None
    return content if isinstance(content, str) and content.strip() else None


def _observe(step: Step, event: dict[str, Any], pointer: str) -> None:
    content = text_at(event, "content", f"{pointer}.content") or ""
    # Current events keep the exit code in extras.metadata; older ones in extras or flat.
    extras = _mapping(event.get("extras")) or event
    returncode = as_int(_mapping(extras.get("metadata")).get("exit_code"))
    if returncode is None:
        returncode = as_int(extras.get("exit_code"))
    step.observation = content
    step.returncode = returncode if step.action_type == "command" else None
    step.failed = event.get("observation") == "error" or content.lstrip().startswith("ERROR:")
    step.executed = True


def _mapping(value: object) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}
