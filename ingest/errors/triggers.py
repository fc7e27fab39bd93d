"""Which lines may hold an error: one fast search picks them, every detector reads only those.

Every detector fires only on a line holding one of these words, so the words
are a superset of what the detectors look for. They are matched in lower case
through a regular expression built as a trie (words sharing a prefix share a
branch), which keeps the search cheap on long, error-free observations.
"""

from __future__ import annotations

import re

from metisgraph.ingest.errors.tool_errors import TOOL_TRIGGERS

__all__ = ["TRIGGER_WORDS", "candidate_lines"]

TRIGGER_WORDS = (
    # tracebacks and exceptions
    "traceback", 'file "', "error", "exception", "throwable", "failure", "fault", "failed",
    # crashes
    "panic", "fatal", "abort", "killed", "segmentation", "floating point", "illegal instruction",
    "trace/breakpoint", "signal", "sigsegv", "sigabrt", "sigbus", "sigfpe", "sigill", "sigkill",
    "sigtrap", "sigsys", "***", "double free", "(): ", "corrupted", "terminate called", "sanitizer",
    # databases
    "ora-", "tns-", "pls-", "sp2-", "sqlstate", "sql state", "duplicate entry", "doesn't exist",
    "unknown column", "sql syntax", "access denied", "lock wait", "deadlock", "foreign key",
    "data too long", "cannot be null", "unknown database", "mysql", "postgres", "psql", "psycopg",
    "asyncpg", "pq: ", "pg::", "libpq", "can't connect", "gone away", "lost connection",
    # statuses, exit codes, memory
    "http", "status", "response code", "returned", "0xc0", "exit", "non-zero", "oom",
    "command not found", ".go:",
    "out of memory",
    # log levels
    "err!", "crit", "emerg", "alert", "severe",
    # tools in their own words (ingest/errors/tool_errors.py)
    *TOOL_TRIGGERS,
)  # fmt: skip


_Node = dict[str, "_Node"]


def _trie(words: tuple[str, ...]) -> str:
    """One alternation for many words, with shared prefixes factored out."""
    root: _Node = {}
    for word in words:
        node = root
        for char in word:
            node = node.setdefault(char, {})
        node[""] = {}

    def pattern(node: _Node) -> str:
        branches = [
            re.escape(char) + pattern(child) for char, child in sorted(node.items()) if char
        ]
        if not branches:
            return ""
        body = branches[0] if len(branches) == 1 else f"(?:{'|'.join(branches)})"
        return f"(?:{body})?" if "" in node else body

    return pattern(root)


_FIRST_CHARS = re.escape("".join(sorted({w[0] for w in TRIGGER_WORDS}))) + "45"
_TRIGGER = re.compile(
    # A look-ahead on the first character lets the engine skip most positions at once.
    rf"(?=[{_FIRST_CHARS}])(?:{_trie(TRIGGER_WORDS)}|\b[45]\d\d\)?[ :-]+[a-z])|(?m:^e: )"
)


def candidate_lines(lines: list[str]) -> list[int]:
    """Indexes of the lines that hold a trigger word (an HTTP status with its reason counts)."""
    return [i for i, line in enumerate(lines) if _TRIGGER.search(line.lower())]
