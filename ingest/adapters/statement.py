"""Finding the problem statement inside the prompt an agent was given.

Agents wrap the issue text in their own instructions; the task's goal is the issue,
not the instructions. When the run kept its prompt template we cut the issue out of
the rendered prompt by the template's own words around ``{{task}}``; otherwise we
look for the wrappers agents commonly use; otherwise the whole prompt is the goal.
"""

from __future__ import annotations

import re

__all__ = ["from_template", "problem_statement"]

_TASK_SLOT = re.compile(r"\{\{\s*task\s*\}\}")
_JINJA = re.compile(r"\{\{.*?\}\}|\{%.*?%\}|\{#.*?#\}", re.DOTALL)
_TAGS = ("pr_description", "issue_description", "issue", "problem_statement", "task")
_ISSUE_BLOCK = re.compile(r"ISSUE:\s*\n(?P<body>.*?)\n\s*INSTRUCTIONS:", re.DOTALL)
_LEAD_IN = re.compile(r"^\s*Consider the following (?:PR description|issue):\s*\n", re.IGNORECASE)


def problem_statement(prompt: str, template: str | None = None) -> str:
    """The issue text inside ``prompt`` (see the module docstring for how)."""
    if template:
        cut = from_template(prompt, template)
        if cut:
            return cut
    for name in _TAGS:
        match = re.search(rf"<{name}>(?P<body>.*?)</{name}>", prompt, re.DOTALL)
        if match and match["body"].strip():
            return _LEAD_IN.sub("", match["body"]).strip()
    match = _ISSUE_BLOCK.search(prompt)
    if match and match["body"].strip():
        return match["body"].strip()
    return prompt.strip()


def from_template(prompt: str, template: str) -> str | None:
    """What stood in ``{{task}}`` when ``template`` was rendered into ``prompt``, if we can tell."""
    parts = _TASK_SLOT.split(template, maxsplit=1)
    if len(parts) != 2:
        return None
    before = _JINJA.split(parts[0])[-1]  # the literal text right before the slot
    after = _JINJA.split(parts[1])[0]  # and right after it
    start = prompt.find(before) if before.strip() else 0
    if start < 0:
        return None
    start += len(before)
    end = prompt.find(after, start) if after.strip() else len(prompt)
    if end < 0:
        return None
    body = prompt[start:end].strip()
    return body or None
