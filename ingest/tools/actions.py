"""Tools an agent's action used, read according to what the action is: a shell command,
code run in an interpreter, or an editor writing a file.
"""

from __future__ import annotations

import re
from typing import Any

from metisgraph.ingest.code.language import language_from_path
from metisgraph.ingest.tools.libraries import libraries_in_code
from metisgraph.ingest.tools.programs import EDITORS, tools_in_command
from metisgraph.ingest.tools.uses import ToolUse, dedupe

__all__ = ["EDITOR_ACTIONS", "extract_tools", "tools_of_action"]


def extract_tools(command: str | None = None, code: str | None = None) -> list[ToolUse]:
    """Tools from a shell command and libraries from code, deduplicated by name, in order."""
    uses = tools_in_command(command) if command else []
    if code:
        uses += libraries_in_code(code)
    return dedupe(uses)


# Actions whose command line names an editor and whose body is file content, not commands.
EDITOR_ACTIONS = frozenset({"edit", "read"})
# Languages a libraries scan understands (others: nothing is guessed from their text).
_CODE_LANGUAGES = frozenset({"python", "java", "javascript", "typescript"})
_SHELL_ESCAPE = re.compile(r"^[ \t]*!(?!=)(.+)$", re.MULTILINE)  # IPython: !pip install x
_SHELL_MAGIC = re.compile(r"^[ \t]*%(pip|conda)\b(.*)$", re.MULTILINE)  # %pip install x
_CONTENT_PARAMETERS = ("new_str", "file_text", "content", "code")


def tools_of_action(
    action_type: str | None, command: str | None, parameters: dict[str, Any] | None = None
) -> list[ToolUse]:
    """Tools an agent's action used, read according to what the action is.

    * a shell command (the default) is read as shell (``tools_in_command``);
    * code run in an interpreter (``parameters.language``, e.g. an OpenHands IPython cell)
      is read for its imports and its shell escapes (``!pip install x``, ``%pip``): its
      lines are Python, and helper calls such as ``edit_file_by_replace(...)`` are no tools;
    * an editor action (``edit``, ``read``) names at most its editor
      (``str_replace_editor``); what it writes is file content, read for imports in the
      language of the file it edits (``parameters.path``), never as commands.
    """
    parameters = parameters or {}
    language = parameters.get("language")
    if action_type in EDITOR_ACTIONS:
        return _editor_action(command or "", parameters)
    if isinstance(language, str) and language.lower() in {"python", "ipython"}:
        code = command or ""
        uses: list[ToolUse] = []
        for match in _SHELL_ESCAPE.finditer(code):
            uses += tools_in_command(match.group(1))
        for match in _SHELL_MAGIC.finditer(code):
            uses += tools_in_command(match.group(1) + match.group(2))
        python = _SHELL_MAGIC.sub("", _SHELL_ESCAPE.sub("", code))
        return dedupe([*uses, *libraries_in_code(python, "python")])
    return tools_in_command(command) if command else []


def _editor_action(command: str, parameters: dict[str, Any]) -> list[ToolUse]:
    first, _, body = command.partition("\n")
    words = first.split(maxsplit=1)
    uses: list[ToolUse] = []
    tool = parameters.get("tool")
    for name in (words[0] if words else None, tool if isinstance(tool, str) else None):
        if name and name.lower() in EDITORS:
            uses.append(ToolUse(name.lower(), "editor"))
    path = parameters.get("path")
    language = language_from_path(path) if isinstance(path, str) and path else None
    if language not in _CODE_LANGUAGES:
        return dedupe(uses)
    # SWE-agent writes the content after the command (``edit 3:5\n…``, ``insert '…'``);
    # OpenHands-style editors pass it as parameters.
    content = [body, words[1] if len(words) > 1 else ""]
    content += [v for k in _CONTENT_PARAMETERS if isinstance(v := parameters.get(k), str)]
    for text in content:
        if text.strip():
            uses += libraries_in_code(text.strip().strip("'\""), language)
    return dedupe(uses)
