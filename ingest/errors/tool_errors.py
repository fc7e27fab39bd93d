"""Errors that tools print in their own words, without an exception class or an error level:
a shell utility refusing a path, Python run with a module that is not installed, a linter's
syntax error on an edit, an exception reported after a prefix, an editor tool refusing a call.

Each is a failure the agent then has to deal with; the lineage of "what fixed it" needs them
found (graph/lineage/attribution.py). The patterns are the tools' message shapes, not any
one run's text.
"""

from __future__ import annotations

import re

from metisgraph.ingest.errors.sightings import Sighting

__all__ = ["TOOL_TRIGGERS", "tool_error"]

# Words of these lines for the trigger search (ingest/errors/triggers.py).
TOOL_TRIGGERS = (
    "no such file", "cannot access", "cannot remove", "cannot stat", "can't cd",
    "no module named", "e999", "no replacement was performed", "is required for command",
    "parameter `", "parameter '", "invalid `", "no exact match found", "raised ",
    "caught exception",
)  # fmt: skip

_SHELL = re.compile(
    r"^(?:/bin/(?:ba)?sh: (?:line )?\d+: |bash: (?:line \d+: )?)?(?P<prog>[\w.+-]+): "
    r"(?:cannot (?:access|open|stat|remove)|can't cd to) '?(?P<path>[^':]+?)'?"
    r"(?:: (?P<reason>No such file or directory|Permission denied|Not a directory))?\s*$"
    r"|^(?:/bin/(?:ba)?sh: (?:line )?\d+: |bash: (?:line \d+: )?)(?P<path2>[^:\s]+): "
    r"(?P<reason2>No such file or directory|Permission denied)\s*$"
)
_PYTHON_M = re.compile(r"^(?:\S*/)?python[\d.]*: No module named (?P<module>[\w.]+)\s*$")
_LINT = re.compile(r"^-?\s*(?P<code>E9\d\d) (?P<cls>\w+Error): (?P<msg>.+)$")
_PREFIXED = re.compile(
    r"(?:Caught exception|raised|Failed with error|Error|Exception):\s+"
    r"(?P<cls>[A-Z]\w*(?:Error|Exception)): (?P<msg>\S.*)$"
    r"|\braised (?P<cls2>[A-Z]\w*(?:Error|Exception)): (?P<msg2>\S.*)$"
)
_EDITOR = re.compile(
    r"^(?:ERROR:\s*)?\[?(?P<msg>No replacement was performed\b.*"
    r"|Parameter [`'][\w]+[`'] is (?:required|expected)\b.*"
    r"|Invalid [`'][\w]+[`'] parameter\b.*"
    r"|No exact match found in \S+.*)$"
)


def tool_error(line: str, index: int) -> Sighting | None:
    """One of the tool messages above on this line, else None."""
    text = line.rstrip()
    if found := _SHELL.match(text):
        prog = found["prog"] or "sh"
        reason = found["reason"] or found["reason2"] or "failed"
        path = found["path"] or found["path2"] or ""
        kind = f"shell:{_short(reason)}"
        return Sighting("shell", kind, f"{prog}: {path}: {reason}", index, index + 1, chain=[kind])
    if found := _PYTHON_M.match(text):
        kind = "python:ModuleNotFoundError"
        message = f"No module named '{found['module']}'"
        return Sighting("python", kind, message, index, index + 1, chain=[kind])
    if found := _LINT.match(text):
        kind = f"python:{found['cls']}"
        return Sighting("python", kind, found["msg"], index, index + 1, chain=[kind])
    if (found := _EDITOR.match(text)) is not None:
        kind = "tool:editor"
        return Sighting("tool", kind, found["msg"], index, index + 1, chain=[kind])
    if found := _PREFIXED.search(text):
        cls = found["cls"] or found["cls2"]
        kind = f"python:{cls}"
        message = found["msg"] or found["msg2"]
        return Sighting("python", kind, message, index, index + 1, chain=[kind])
    return None


def _short(reason: str) -> str:
    return {
        "No such file or directory": "ENOENT",
        "Permission denied": "EACCES",
        "Not a directory": "ENOTDIR",
    }.get(reason, "error")
