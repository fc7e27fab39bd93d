"""A memory's text made compact for the planning prompt: the decisive lines of what a step
did, the error line of what it saw — each cut with a marker that says what was cut.

A prompt is read by a model that plans one step: a 40-line heredoc or a whole traceback
tells it less than the command line and the error line, and takes the budget other memories
need. Nothing here counts tokens; ``plan_prompt`` fits the result to the budget.
"""

from __future__ import annotations

import re

__all__ = ["cut_line", "decisive", "error_line", "outline"]

_LINE_CHARS = 300  # one line of a command or an output, at most
_COMMAND_LINES = 8  # a command's lines shown, at most (heredoc bodies first cut)
_BODY_LINES = 3  # a heredoc body's first lines kept
_HEREDOC = re.compile(r"<<-?\s*(['\"]?)([A-Za-z_][A-Za-z0-9_]*)\1")
_ERROR = re.compile(
    r"(\b[A-Z][A-Za-z0-9_.]*(Error|Exception|Exit|Interrupt|Warning)\b|\berror\b|\bERROR\b|"
    r"\bFAIL(ED|URE)?\b|\bfatal\b|No such file|not found|cannot |can't |Unable to|E: |"
    r"\bdenied\b|\binvalid\b|\bInvalid\b|Segmentation fault|Traceback)"
)
_TRACEBACK = "Traceback (most recent call last):"


def cut_line(line: str, limit: int = _LINE_CHARS) -> str:
    """The line, or its first ``limit`` characters and a marker of how many were cut."""
    if len(line) <= limit:
        return line
    return f"{line[:limit].rstrip()} … ({len(line) - limit} chars cut)"


def _lines(text: str) -> list[str]:
    return [line.rstrip() for line in text.strip().splitlines()]


def decisive(command: str, max_lines: int = _COMMAND_LINES) -> str:
    """A command cut to its informative lines: every line of the shell itself (the command
    lines, a heredoc's opening and closing lines), a heredoc's body to its first lines, the
    whole to ``max_lines``; each cut said where it was made."""
    lines = _lines(command)
    kept: list[str] = []
    n = 0
    while n < len(lines):
        line = lines[n]
        kept.append(cut_line(line))
        n += 1
        heredoc = _HEREDOC.search(line)
        if not heredoc:
            continue
        end = next((j for j in range(n, len(lines)) if lines[j].strip() == heredoc.group(2)), None)
        body = lines[n : len(lines) if end is None else end]
        kept += [cut_line(b) for b in body[:_BODY_LINES]]
        if len(body) > _BODY_LINES:
            kept.append(
                f"… ({len(body) - _BODY_LINES} more lines of the {heredoc.group(2)} body cut)"
            )
        n += len(body)
    if len(kept) > max_lines:
        rest = len(kept) - (max_lines - 1)
        kept = [*kept[: max_lines - 1], f"… ({rest} more lines cut)"]
    return "\n".join(kept)


def error_line(text: str) -> str | None:
    """The line that says what went wrong: the last line that reads as an error (a traceback
    ends with it), else the last line; None for blank text."""
    lines = [line for line in _lines(text) if line.strip()]
    if not lines:
        return None
    errors = [line for line in lines if _ERROR.search(line) and line.strip() != _TRACEBACK]
    return cut_line((errors[-1] if errors else lines[-1]).strip())


def outline(text: str, max_lines: int = 3) -> str | None:
    """An output cut for the prompt: whole when short; else its error line, or its first
    lines and last line; with a marker of how many lines were cut."""
    lines = [line for line in _lines(text) if line.strip()]
    if not lines:
        return None
    if len(lines) <= max_lines and sum(map(len, lines)) <= _LINE_CHARS:
        return "\n".join(lines)
    if len(lines) <= max_lines:
        return "\n".join(cut_line(line, _LINE_CHARS // max_lines) for line in lines)
    found = error_line(text) if any(_ERROR.search(line) for line in lines) else None
    if found is not None:
        return f"{found}\n… ({len(lines) - 1} other lines of output cut)"
    head = [cut_line(line, _LINE_CHARS // 2) for line in lines[: max_lines - 1]]
    return "\n".join([*head, f"… ({len(lines) - max_lines} lines cut)", cut_line(lines[-1])])
