"""Find code in what agents write: fenced blocks, heredocs, sed edits, `python -c`, patches."""

from __future__ import annotations

import re
from collections.abc import Iterator

from metisgraph.ingest.code.commands import Heredoc, heredocs, is_inspection, segments, words
from metisgraph.ingest.code.grammars import parser_for
from metisgraph.ingest.code.isolation import isolated
from metisgraph.ingest.code.language import (
    detect_language,
    language_from_path,
    normalize_language,
)
from metisgraph.ingest.code.model import ExtractedSnippet

__all__ = ["extract_command_snippets", "extract_snippets"]

_FENCE = re.compile(
    r"^(?P<indent>[ \t]*)(?P<fence>`{3,}|~{3,})[ \t]*(?P<info>[^\n`]*)\n"
    r"(?P<body>.*?)\n?^(?P=indent)(?P=fence)[ \t]*$",
    re.M | re.S,
)
_NOT_CODE = frozenset(
    {"text", "txt", "output", "log", "plaintext", "stdout", "stderr", "pytb", "traceback"}
)
_DIFF_START = re.compile(r"^(?:diff --git |--- \S)")
_DIFF_LINE = re.compile(
    r"^(?:diff --git |index |--- |\+\+\+ |@@ |new file mode|deleted file mode|old mode|new mode|"
    r"similarity index|rename (?:from|to) |Binary files|[ +\-\\]|$)"
)
_SWE_EDIT = re.compile(r"^edit\s+\d+:\d+\s*\n(?P<body>.*?)\n^end_of_edit\s*$", re.M | re.S)
_INTERPRETERS = {
    "python": "python",
    "python3": "python",
    "python2": "python",
    "bash": "bash",
    "sh": "bash",
    "zsh": "bash",
    "node": "javascript",
    "psql": "sql",
    "mysql": "sql",
    "sqlite3": "sql",
    "kubectl": "yaml",
    "ruby": "ruby",
}
_PROMPT = re.compile(r"^\s*(?:\$|#|>>>|\w+@[\w.-]+:\S*[$#])\s+")


def extract_snippets(text: str) -> list[ExtractedSnippet]:
    """Code in free text: fenced blocks (shell blocks are read as commands) and bare patches."""
    found: list[ExtractedSnippet] = []
    outside: list[str] = []
    cursor = 0
    for match in _FENCE.finditer(text):
        outside.append(text[cursor : match.start()])
        cursor = match.end()
        found += _from_fence(match["info"], match["body"])
    outside.append(text[cursor:])
    for chunk in outside:
        found += (ExtractedSnippet(diff, "diff", "patch") for diff in _bare_patches(chunk))
    return found


def _from_fence(info: str, body: str) -> list[ExtractedSnippet]:
    language = normalize_language(info)
    if not body.strip() or language in _NOT_CODE:
        return []
    if not language:
        language = detect_language(body)
        if language == "bash" and not _reads_as_commands(_without_prompts(body)):
            return []  # an untagged block of output (a table, a trace, results): not code
    if language == "bash":
        return extract_command_snippets(_without_prompts(body))
    return [ExtractedSnippet(body, language, "fence")]


# The first word of a command: a program, a path to one, a variable or an assignment.
_COMMAND_WORD = re.compile(r"^(?:[A-Za-z_][\w.+-]*|\.{0,2}/[\w./+-]+|~[\w./+-]*|\$\S+|\w+=.*)$")
_SHELL_SYNTAX = frozenset({"{", "}", "(", ")", "[", "[[", "!", "((", "then", "do", "done", "fi"})


def _reads_as_commands(body: str) -> bool:
    """Whether an untagged block is shell: it parses, and every command starts like one.

    Blocks without a language tag default to shell, but agents and issue reports also fence
    program output: tables (``===== ====``), numbers, tracebacks (``core.py in f(self)``).
    """
    if isolated(_shell_error, body, overran=True):  # long blocks in a worker process
        return False
    found = False
    for segment in segments(body):
        first = next(iter(words(segment)), None)
        if first is None or first.startswith("#") or first in _SHELL_SYNTAX:
            continue
        if not _COMMAND_WORD.match(first):
            return False
        found = True
    return found


def _shell_error(body: str) -> bool:
    """Whether bash's grammar finds an error in ``body`` (none without the grammar)."""
    parser = parser_for("bash")
    return parser is not None and parser.parse(body.encode()).root_node.has_error


def _without_prompts(body: str) -> str:
    """A console transcript keeps only its commands; plain scripts pass unchanged."""
    lines = body.splitlines()
    if not any(_PROMPT.match(line) for line in lines) or not _PROMPT.match(lines[0]):
        return body
    return "\n".join(_PROMPT.sub("", line) for line in lines if _PROMPT.match(line))


def _bare_patches(text: str) -> Iterator[str]:
    lines = text.splitlines()
    index = 0
    while index < len(lines):
        if not _DIFF_START.match(lines[index]):
            index += 1
            continue
        end = index + 1
        while end < len(lines) and _DIFF_LINE.match(lines[end]):
            end += 1
        block = "\n".join(lines[index:end]).rstrip()
        if re.search(r"^@@ ", block, re.M):
            yield block + "\n"
        index = end


def extract_command_snippets(command: str) -> list[ExtractedSnippet]:
    """Code in one shell action: heredoc bodies, sed -i edits, `python -c` programs, SWE-agent
    edit blocks, and the command sequence itself unless it only inspects things."""
    found: list[ExtractedSnippet] = []
    edits = list(_SWE_EDIT.finditer(command))
    for edit in edits:
        body = edit["body"]
        if body.strip():
            language = detect_language(body)
            found.append(ExtractedSnippet(body, language, "edit"))
    if edits:
        return found
    docs = heredocs(command)
    found += (snippet for doc in docs if (snippet := _from_heredoc(doc)) is not None)
    residual = _without_heredocs(command, docs)
    kept: list[str] = []
    for segment in segments(residual):
        own = _from_segment(segment)
        if own is not None:
            found.append(own)
        elif not is_inspection(segment):
            kept.append(segment)
    if kept:
        found.append(ExtractedSnippet(residual.strip(), "bash", "command"))
    return found


def _from_heredoc(doc: Heredoc) -> ExtractedSnippet | None:
    """A heredoc that writes a file or feeds an interpreter (a commit message is not code)."""
    target = doc.target
    if not doc.body.strip() or (target is None and _interpreter(doc) is None):
        return None
    language = (language_from_path(target) if target else None) or _interpreter(doc)
    language = language or detect_language(doc.body, target)
    return ExtractedSnippet(doc.body, language, "heredoc", target)


def _without_heredocs(command: str, docs: list[Heredoc]) -> str:
    """The command with each heredoc that writes a file removed; other heredocs stay in place."""
    pieces, cursor = [], 0
    for doc in docs:
        if doc.target is None and _interpreter(doc) is None:
            continue
        pieces.append(command[cursor : doc.start])
        cursor = doc.end
    pieces.append(command[cursor:])
    return "".join(pieces)


def _interpreter(doc: Heredoc) -> str | None:
    program = re.sub(r"[\d.]+$", "", doc.program or "")
    return _INTERPRETERS.get(program)


def _from_segment(segment: str) -> ExtractedSnippet | None:
    """A segment that is code of its own: an in-place sed edit or a `python -c` program."""
    parts = words(segment)
    if not parts:
        return None
    program = parts[0].rsplit("/", 1)[-1]
    if program == "sed" and any(p == "-i" or p.startswith(("-i", "--in-place")) for p in parts[1:]):
        path = parts[-1] if len(parts) > 2 else None
        return ExtractedSnippet(segment, "bash", "sed", path)
    if re.fullmatch(r"python[\d.]*", program) and "-c" in parts[1:-1]:
        code = parts[parts.index("-c", 1) + 1]
        return ExtractedSnippet(code, "python", "python-c")
    return None
