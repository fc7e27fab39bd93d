"""The one shell tokenizer: heredocs, simple commands (segments) and their words; and which
commands only look around. Code extraction and tool extraction both read shell through it.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterator
from dataclasses import dataclass

__all__ = ["Heredoc", "heredocs", "is_inspection", "segments", "words"]

_HEREDOC = re.compile(r"(?<!<)<<(?P<dash>-?)[ \t]*(?P<q>['\"]?)(?P<tag>[A-Za-z_][\w.-]*)(?P=q)")
_WRITE_TARGET = re.compile(r"(?:>>?|\btee\s+(?:-a\s+)?)\s*(?P<path>[^\s<>;&|]+)")


@dataclass(frozen=True)
class Heredoc:
    """A here-document: the command line that opens it, its body, and where it sits."""

    command: str
    body: str
    start: int  # offset of the command line
    end: int  # offset just after the closing delimiter line

    @property
    def target(self) -> str | None:
        """The file the heredoc writes (`cat > x.py <<EOF`), if it writes one."""
        rest = _HEREDOC.sub(" ", self.command)
        match = _WRITE_TARGET.search(rest)
        return match["path"].strip("'\"") if match else None

    @property
    def program(self) -> str | None:
        """The program that reads the heredoc (`python3 - <<EOF` → python3)."""
        match = _HEREDOC.search(self.command)
        before = self.command[: match.start()] if match else self.command
        tail = re.split(r"&&|\|\||;|\|", before)[-1].split()
        return tail[0].rsplit("/", 1)[-1] if tail else None


def heredocs(command: str) -> list[Heredoc]:
    """Every heredoc in a command text, with its body and span."""
    found = []
    position = 0
    while (match := _HEREDOC.search(command, position)) is not None:
        line_start = command.rfind("\n", 0, match.start()) + 1
        line_end = command.find("\n", match.end())
        if line_end < 0:
            break
        body_lines, cursor, closed = [], line_end + 1, False
        while cursor <= len(command):
            next_end = command.find("\n", cursor)
            next_end = len(command) if next_end < 0 else next_end
            line = command[cursor:next_end]
            if (line.lstrip("\t") if match["dash"] else line).rstrip() == match["tag"]:
                closed = True
                cursor = next_end + 1
                break
            body_lines.append(line.lstrip("\t") if match["dash"] else line)
            cursor = next_end + 1
        body = "\n".join(body_lines)
        found.append(
            Heredoc(command[line_start:line_end], body, line_start, min(cursor, len(command)))
        )
        position = cursor if closed else len(command)
    return found


def segments(command: str) -> Iterator[str]:
    """Simple commands of a command line: split at ``;``, ``&``, ``&&``, ``||``, ``|``, newlines,
    parentheses, backticks and ``$( )``, outside quotes; comments are dropped."""
    for piece in _pieces(command):
        piece = piece.strip()
        if piece:
            yield piece


def _pieces(script: str) -> Iterator[str]:
    current: list[str] = []
    quote = ""
    i, n = 0, len(script)
    while i < n:
        char = script[i]
        if quote:
            if char == "\\" and quote == '"' and i + 1 < n:
                current.append(script[i : i + 2])
                i += 2
                continue
            quote = "" if char == quote else quote
            current.append(char)
        elif char in "'\"":
            quote = char
            current.append(char)
        elif char == "\\" and i + 1 < n:
            current.append(" " if script[i + 1] == "\n" else script[i : i + 2])
            i += 2
            continue
        elif char == "#" and (not current or current[-1].isspace()):
            while i < n and script[i] != "\n":
                i += 1
            continue
        elif char in ";|\n()`" or (char == "&" and not _redirect_ampersand(script, i)):
            yield "".join(current)
            current = []
        elif char == "$" and script.startswith("$(", i):
            yield "".join(current)
            current = []
            i += 2
            continue
        else:
            current.append(char)
        i += 1
    yield "".join(current)


def _redirect_ampersand(script: str, i: int) -> bool:
    """``2>&1``, ``&>file`` and ``>&2`` are redirections, not background operators."""
    before = script[i - 1] if i else ""
    after = script[i + 1] if i + 1 < len(script) else ""
    return before in "<>" or after == ">"


def words(segment: str) -> list[str]:
    """Shell words of one simple command; falls back to whitespace when quotes do not close."""
    try:
        found = shlex.split(segment, comments=False, posix=True)
    except ValueError:  # an unbalanced quote in a truncated command
        found = segment.split()
    return [word for word in found if word]


_LOOKING = frozenset(
    {
        "ls", "cat", "head", "tail", "grep", "egrep", "fgrep", "rg", "ag", "find", "nl", "wc",
        "pwd", "echo", "printf", "which", "type", "file", "stat", "tree", "less", "more",
        "diff", "cd", "pushd", "popd", "sort", "uniq", "cut", "tr", "du", "df", "env",
        "printenv", "true", "false", "clear", "date", "whoami", "id", "uname", "hostname",
        "history", "column", "awk", "jq", "realpath", "dirname", "basename", "readlink"
    }
)  # fmt: skip
_GIT_LOOKING = frozenset(
    {"status", "diff", "log", "show", "branch", "blame", "grep", "ls-files", "rev-parse"}
)
_PIP_LOOKING = frozenset({"show", "list", "freeze", "--version"})


def is_inspection(segment: str) -> bool:
    """Commands that only look (ls, grep, sed -n, git log …) and write nothing."""
    if re.search(r"(?<![0-9&])>(?!&)", segment):
        return False  # a redirection writes a file
    parts = words(segment)
    if not parts:
        return True
    program = parts[0].rsplit("/", 1)[-1]
    args = parts[1:]
    if program in _LOOKING:
        return not (program == "find" and {"-delete", "-exec", "-execdir"} & set(args))
    if program == "sed":
        return "-i" not in args and not any(a.startswith(("-i", "--in-place")) for a in args)
    if program == "git":
        return bool(args) and args[0] in _GIT_LOOKING
    if program in {"pip", "pip3"} or (program.startswith("python") and args[:2] == ["-m", "pip"]):
        rest = args[2:] if program.startswith("python") else args
        return bool(rest) and rest[0] in _PIP_LOOKING
    return program.startswith("python") and args in (["--version"], ["-V"])
