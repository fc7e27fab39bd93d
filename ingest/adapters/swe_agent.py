"""SWE-agent ``.traj``: ``trajectory[{action, observation, response, thought, state}]``.

The issue is in ``replay_config.problem_statement`` (SWE-agent 1.x) or in the first
user message of ``history`` that is not a demonstration. ``info`` holds the exit
status and the submitted patch; whether the patch resolved the issue is known only
from a harness label beside the file. Observations carry no return code, so a step
fails only on the markers SWE-agent's own tools print when a command was refused.
"""

from __future__ import annotations

import shlex
from collections.abc import Iterator
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
from metisgraph.ingest.adapters.shape import as_object, list_at, object_at, text_at, text_of
from metisgraph.ingest.adapters.statement import problem_statement

__all__ = ["parse_swe_agent", "read_swe_agent"]

FORMAT = "swe-agent"
_READ = {"open", "goto", "scroll_up", "scroll_down", "search_file", "search_dir", "find_file"}
_EDIT = {"edit", "create", "insert", "append", "str_replace", "undo_edit", "replace"}
_FINISH_PREFIX = "exit"
# What SWE-agent's tools print when they refuse or fail a command.
_FAILURE_MARKERS = (
    "Your proposed edit has introduced new syntax error",
    "No replacement was performed",
    ": command not found",
)
_FAILURE_PREFIXES = ("Usage: ",)  # a tool called with the wrong arguments


def read_swe_agent(path: Path, project: str | None = None) -> Iterator[Parsed | Refused]:
    """Records from one SWE-agent trajectory file."""
    loaded = load_json(path)
    if isinstance(loaded, Refused):
        yield loaded
        return
    run = parse_or_refuse(parse_swe_agent, loaded, path)
    if isinstance(run, Refused):
        yield run
        return
    yield from run_records(run, project)


def parse_swe_agent(doc: JsonLine, path: Path) -> Run:
    """The run a SWE-agent trajectory describes."""
    data = as_object(doc.value, "")
    if not isinstance(data.get("trajectory"), list):
        raise ShapeError("trajectory", "expected a list of steps")
    info = object_at(data, "info")
    replay = object_at(data, "replay_config")
    statement = object_at(replay, "problem_statement", "replay_config.problem_statement")
    instance_id = text_at(statement, "id", "replay_config.problem_statement.id")
    exit_status = text_at(info, "exit_status", "info.exit_status")
    stats = object_at(info, "model_stats", "info.model_stats")
    instance = instance_id or path.name.split(".traj")[0]
    return Run(
        format=FORMAT,
        ref=doc.ref,
        content=doc.text,
        instance_id=instance,
        goal=_goal(data, statement),
        agent=FORMAT,
        model=_model(replay),
        repo=_repo(data["trajectory"]),
        exit_status=exit_status,
        submission=text_at(info, "submission", "info.submission"),
        resolved=find_resolved(path, instance),
        gave_up=exit_status is not None and "submitted" not in exit_status.lower(),
        steps=[_step(item, i, doc.ref) for i, item in enumerate(data["trajectory"])],
        facts={"cost": stats.get("instance_cost"), "api_calls": stats.get("api_calls")},
    )


def _goal(data: dict[str, Any], statement: dict[str, Any]) -> str:
    text = text_at(statement, "text", "replay_config.problem_statement.text")
    if text and text.strip():
        return text
    for index, message in enumerate(list_at(data, "history")):
        if not isinstance(message, dict) or message.get("role") != "user":
            continue
        if message.get("is_demo"):
            continue
        return problem_statement(text_of(message.get("content"), f"history[{index}].content"))
    raise ShapeError("history", "no user message holds the issue")


def _model(replay: dict[str, Any]) -> str | None:
    agent = object_at(replay, "agent", "replay_config.agent")
    model = object_at(agent, "model", "replay_config.agent.model")
    name = model.get("name")
    return name if isinstance(name, str) and name else None


def _repo(trajectory: list[Any]) -> str | None:
    """SWE-agent 0.x clones ``owner/name`` into ``/owner__name``: the working dir names the repo."""
    for item in trajectory[:1]:
        if not isinstance(item, dict):
            return None
        try:
            working_dir = object_at(item, "state").get("working_dir")
        except ShapeError:
            return None
        if isinstance(working_dir, str):
            owner, sep, name = working_dir.rstrip("/").rsplit("/", 1)[-1].partition("__")
            return f"{owner}/{name}" if sep and owner and name else None
    return None


def _step(item: object, index: int, ref: SourceRef) -> Step | Refused:
    pointer = f"trajectory[{index}]"
    try:
        data = as_object(item, pointer)
        action = (text_at(data, "action", f"{pointer}.action") or "").strip()
        observation = text_at(data, "observation", f"{pointer}.observation")
        thought = text_at(data, "thought", f"{pointer}.thought")
    except ShapeError as exc:
        return refuse(ref.at(pointer), item, exc.field, exc.message)
    kind, parameters = _classify(action, _open_file(data))
    step = Step(pointer, kind, command=action or None, parameters=parameters, thought=thought)
    step.observation = observation
    step.executed = bool(action) and observation is not None
    step.failed = _failed(observation or "")
    if isinstance(data.get("execution_time"), int | float):
        step.facts["execution_time"] = data["execution_time"]
    return step


def _failed(observation: str) -> bool:
    return observation.lstrip().startswith(_FAILURE_PREFIXES) or any(
        marker in observation for marker in _FAILURE_MARKERS
    )


def _classify(action: str, open_file: str | None) -> tuple[str, dict[str, Any]]:
    """Action type and parameters from SWE-agent's command line."""
    words = _words(action)
    if not words:
        return "think", {}
    tool = words[0]
    parameters: dict[str, Any] = {"tool": tool}
    if tool == "str_replace_editor" and len(words) > 2:
        parameters["path"] = words[2]
        return ("read" if words[1] == "view" else "edit"), parameters
    if tool in {"open", "create"} and len(words) > 1:
        parameters["path"] = words[1]
    elif tool in _EDIT | {"goto", "scroll_up", "scroll_down", "search_file"} and open_file:
        parameters["path"] = open_file
    if tool == "submit":
        return "submit", parameters
    if tool.startswith(_FINISH_PREFIX):
        return "finish", parameters
    if tool in _READ:
        return "read", parameters
    return ("edit" if tool in _EDIT else "command"), parameters


def _words(action: str) -> list[str]:
    first = action.split("\n", 1)[0]
    try:
        return shlex.split(first)
    except ValueError:  # unbalanced quotes in an edit's text
        return first.split()


def _open_file(data: dict[str, Any]) -> str | None:
    try:
        state = object_at(data, "state")
    except ShapeError:
        return None
    value = state.get("open_file")
    return value if isinstance(value, str) and value not in {"", "n/a"} else None
