"""Tools: the programs an episode ran and the libraries its code imported."""

from metisgraph.ingest.tools.programs import (
    ToolUse,
    extract_tools,
    libraries_in_code,
    program_name,
    tools_in_command,
    tools_of_action,
)

__all__ = [
    "ToolUse",
    "extract_tools",
    "libraries_in_code",
    "program_name",
    "tools_in_command",
    "tools_of_action",
]
