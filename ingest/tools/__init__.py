"""Tools: the programs an episode ran and the libraries its code imported."""

from metisgraph.ingest.tools.actions import extract_tools, tools_of_action
from metisgraph.ingest.tools.libraries import libraries_in_code
from metisgraph.ingest.tools.programs import program_name, tools_in_command
from metisgraph.ingest.tools.uses import ToolUse

__all__ = [
    "ToolUse",
    "extract_tools",
    "libraries_in_code",
    "program_name",
    "tools_in_command",
    "tools_of_action",
]
