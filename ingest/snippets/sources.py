"""Where code sits in an episode: its inline snippets, its action, and the code in its text.

Every piece comes with the bridge relation it gets: code the episode wrote into a file or
proposed is GENERATED, a command it ran is USED, an edit of an existing file is MODIFIED.
Episode text is read from the prepared (already sanitized) properties, never from the raw
record; inline snippets are raw and are made safe by analysis and redaction downstream.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from metisgraph.ingest.code import (
    ExtractedSnippet,
    extract_command_snippets,
    extract_snippets,
    normalize_language,
)
from metisgraph.ingest.code.language import language_from_path
from metisgraph.ingest.prepare.episode import PreparedEpisode
from metisgraph.ingest.records import SnippetInput, SnippetRelation

__all__ = ["Occurrence", "episode_occurrences", "input_occurrence"]

GENERATED = SnippetRelation.generated.value
USED = SnippetRelation.used.value
MODIFIED = SnippetRelation.modified.value

# Code an agent ran or wrote to a file; everything else it wrote down (fences) it generated.
_ACTION_RELATIONS = {
    "heredoc": GENERATED,
    "command": USED,
    "sed": USED,
    "python-c": USED,
    "edit": MODIFIED,
}
_EDIT_CREATES = frozenset({"create", "write"})


@dataclass(frozen=True)
class Occurrence:
    """One piece of code as it was found, before analysis.

    `whole_file` says the code is a file's full content (a heredoc or an editor `create`), so
    a later write of the same path is a new version of it; a fragment (`str_replace`, `sed -i`)
    only touches the file. `relation_given` is true when a caller chose the relation. `ran`
    says the episode acted with this code (its action, or code recorded with it), as opposed
    to code it only wrote down in its reasoning: only code that ran is verified by success.
    """

    code: str
    origin: str
    relation: str
    language: str | None = None
    kind: str | None = None
    path: str | None = None
    whole_file: bool = False
    relation_given: bool = False
    ran: bool = True
    name: str | None = None
    description: str | None = None
    tests: tuple[str, ...] = field(default=())
    examples: tuple[str, ...] = field(default=())


def input_occurrence(snippet: SnippetInput, origin: str) -> Occurrence:
    """A snippet a caller recorded: its own language, kind, name and relation."""
    return Occurrence(
        code=snippet.code,
        origin=origin,
        relation=snippet.relation.value,
        language=snippet.language,
        kind=snippet.kind.value if snippet.kind else None,
        relation_given="relation" in snippet.model_fields_set,
        name=snippet.name,
        description=snippet.description,
        tests=tuple(snippet.tests),
        examples=tuple(snippet.examples),
    )


def episode_occurrences(episode: PreparedEpisode) -> list[Occurrence]:
    """Inline snippets first, then the action's code, then fenced code in reasoning and summary."""
    found: list[Occurrence] = []
    if episode.record is not None:
        found += (input_occurrence(s, "inline") for s in episode.record.snippets)
    found += _action_occurrences(episode.props)
    for key in ("reasoning", "summary"):
        text = episode.props.get(key)
        if text:
            found += (_from_extracted(s, GENERATED, ran=False) for s in extract_snippets(text))
    return found


def _action_occurrences(props: dict[str, Any]) -> list[Occurrence]:
    action_type = props.get("action_type")
    command = props.get("action_command")
    parameters = _parameters(props.get("action_parameters"))
    if action_type == "edit":
        edit = _edit_occurrence(parameters)
        return [edit] if edit else []
    if not command or action_type in {"read", "think", "finish"}:
        return []
    language = normalize_language(parameters.get("language"))
    if language not in (None, "bash"):
        # An interpreter cell (OpenHands run_ipython): the command is the program itself.
        return [Occurrence(command, "interpreter", USED, language=language)]
    return [
        _from_extracted(s, _ACTION_RELATIONS.get(s.origin, USED), appends=_appends(command, s.path))
        for s in extract_command_snippets(command)
    ]


def _appends(command: str, path: str | None) -> bool:
    """`cat >> file <<EOF` adds to a file: its body is a fragment, not the whole file."""
    return path is not None and re.search(r">>\s*['\"]?" + re.escape(path), command) is not None


def _edit_occurrence(parameters: dict[str, Any]) -> Occurrence | None:
    """An editor action: `create` writes a whole file, the others change part of one."""
    path = parameters.get("path") if isinstance(parameters.get("path"), str) else None
    creates = parameters.get("command") in _EDIT_CREATES
    code = parameters.get("file_text") if creates else parameters.get("new_str")
    if not isinstance(code, str) or not code.strip():
        return None
    language = language_from_path(path) if path else None
    return Occurrence(
        code,
        "editor",
        GENERATED if creates else MODIFIED,
        language=language,
        path=path,
        whole_file=creates,
    )


def _from_extracted(
    snippet: ExtractedSnippet, relation: str, *, ran: bool = True, appends: bool = False
) -> Occurrence:
    return Occurrence(
        code=snippet.code,
        origin=snippet.origin,
        relation=relation,
        ran=ran,
        language=snippet.language,
        path=snippet.path,
        whole_file=snippet.origin == "heredoc" and snippet.path is not None and not appends,
    )


def _parameters(raw: Any) -> dict[str, Any]:
    if not isinstance(raw, str) or not raw:
        return {}
    try:
        value = json.loads(raw)
    except json.JSONDecodeError:
        return {}
    return value if isinstance(value, dict) else {}
