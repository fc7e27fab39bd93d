"""Unified diffs: the files a patch touches, its hunks, and the symbols those hunks change."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from metisgraph.ingest.code.model import PatchFile

__all__ = ["declared_symbol", "parse_patch"]

_HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@ ?(?P<context>.*)$")
_GIT_HEADER = re.compile(r"^diff --git (?:\"?a/)?(?P<old>\S+) (?:\"?b/)?(?P<new>\S+?)\"?$")
# Statement words that can stand where a C-like declaration has its return type or name.
_KEYWORDS = (
    r"(?:return|new|else|elif|if|for|while|switch|catch|throw|case|goto|delete|await|yield|"
    r"and|or|not|in|is|assert|raise|print|with|lambda|del|import|from|except|sizeof|typeof)"
)
_DECLARATIONS = (
    re.compile(r"^(?:async\s+)?def\s+(?P<name>\w+)"),  # Python, Ruby
    re.compile(
        r"^(?:export\s+)?(?:default\s+)?(?:(?:public|private|protected|internal|static|final|"
        r"abstract|sealed|data|open)\s+)*(?:class|interface|enum|struct|trait|record|object|type)"
        r"\s+(?P<name>\w+)"
    ),
    re.compile(r"^(?:export\s+)?(?:default\s+)?(?:async\s+)?function\s*\*?\s*(?P<name>\w+)"),
    re.compile(r"^func\s+(?:\([^)]*\)\s*)?(?P<name>\w+)"),  # Go
    re.compile(r"^(?:pub(?:\([^)]*\))?\s+)?(?:async\s+)?(?:unsafe\s+)?fn\s+(?P<name>\w+)"),  # Rust
    re.compile(
        r"^(?:export\s+)?(?:const|let|var)\s+(?P<name>\w+)\s*=\s*(?:async\s+)?(?:function\b|\([^)]*\)\s*=>|\w+\s*=>)"
    ),
    re.compile(
        # Java, C#, C, C++: modifiers, a return type, a name and an opening parenthesis.
        r"^(?:(?:public|private|protected|static|final|abstract|synchronized|native|default|"
        r"override|virtual|inline|extern|const|unsigned)\s+)*(?:<[^>]+>\s+)?"
        rf"(?!{_KEYWORDS}\b)[\w<>\[\],.?*&:]+\s+[*&]*"
        rf"(?P<name>(?!{_KEYWORDS}\b)\w+)\s*\([^;]*(?<!:)$"
    ),
)


_COMMENT_ONLY = re.compile(r"^\s*(?:#|//|/\*|\*|--|<!--)")
_DECORATOR = re.compile(r"^\s*@\w")
_CLOSING_ONLY = re.compile(r"^\s*[})\]]+[;,]?\s*$")


def declared_symbol(line: str) -> str | None:
    """The name a line declares (function, method, class), if it declares one."""
    stripped = line.strip()
    for pattern in _DECLARATIONS:
        match = pattern.match(stripped)
        if match:
            return match["name"]
    return None


@dataclass
class _File:
    path: str
    from_git_header: bool = False
    hunks: int = 0
    added: int = 0
    removed: int = 0
    symbols: dict[str, None] = field(default_factory=dict)

    def frozen(self) -> PatchFile:
        return PatchFile(self.path, self.hunks, self.added, self.removed, tuple(self.symbols))


@dataclass
class _Hunk:
    context: str | None
    lines: list[tuple[str, str]] = field(default_factory=list)  # (marker, text)


def parse_patch(diff: str) -> tuple[PatchFile, ...]:
    """Files, hunks, added and removed lines, and touched symbols of a unified diff."""
    files: list[_File] = []
    lines = diff.splitlines()
    index = 0
    while index < len(lines):
        line = lines[index]
        git = _GIT_HEADER.match(line)
        if git:
            files.append(_File(git["new"], from_git_header=True))
        elif (
            line.startswith("--- ")
            and lines[index + 1 : index + 2]
            and lines[index + 1].startswith("+++ ")
        ):
            _file_paths(files, line[4:], lines[index + 1][4:])
            index += 1
        elif files and (hunk_header := _HUNK.match(line)):
            index = _read_hunk(lines, index + 1, hunk_header, files[-1])
            continue
        index += 1
    return tuple(f.frozen() for f in files)


def _file_paths(files: list[_File], old: str, new: str) -> None:
    """`--- a/x` / `+++ b/x` name the file; after a git header they only confirm it."""
    path = _path_of(new) or _path_of(old) or "/dev/null"
    if files and files[-1].from_git_header and not files[-1].hunks:
        files[-1].path = path
    else:
        files.append(_File(path))


def _read_hunk(lines: list[str], index: int, header: re.Match[str], target: _File) -> int:
    """Read one hunk's lines, as many as its header counts; return where the next line is."""
    old_left = int(header[2] if header[2] is not None else 1)
    new_left = int(header[4] if header[4] is not None else 1)
    context = header["context"]
    hunk = _Hunk(declared_symbol(context) if context else None)
    while index < len(lines) and (old_left > 0 or new_left > 0):
        line = lines[index]
        marker = line[:1] or " "  # some tools strip the space of an empty context line
        if marker not in "+- \\":
            break
        old_left -= marker in "- "
        new_left -= marker in "+ "
        if marker != "\\":  # "\\ No newline at end of file"
            hunk.lines.append((marker, line[1:]))
        index += 1
    target.hunks += 1
    _close(hunk, target)
    return index


def _path_of(raw: str) -> str | None:
    """`b/src/x.py\t2024-01-01` → `src/x.py`; /dev/null (a created or deleted file) → None."""
    path = raw.split("\t", 1)[0].strip().strip('"')
    if path == "/dev/null":
        return None
    return re.sub(r"^[ab]/", "", path)


def _close(hunk: _Hunk, target: _File) -> None:
    target.added += sum(1 for marker, _ in hunk.lines if marker == "+")
    target.removed += sum(1 for marker, _ in hunk.lines if marker == "-")
    for symbol in _touched_symbols(hunk):
        target.symbols[symbol] = None


def _touched_symbols(hunk: _Hunk) -> list[str]:
    """For each changed line, the innermost declaration around it, qualified by its parents.

    One pass per side of the diff keeps the declarations open at each line (by indentation);
    a scope the hunk starts inside is named by the hunk header.
    """
    touched: list[str] = []
    sides = {"-": _Side(hunk.context), "+": _Side(hunk.context)}
    for marker, line in hunk.lines:
        if not line.strip() or _COMMENT_ONLY.match(line):
            continue  # a comment changes no behaviour; a doc comment belongs to what follows
        for name, side in sides.items():
            if marker in {" ", name}:
                touched += side.read(line, changed=marker == name)
    for side in sides.values():
        touched += side.flush()
    return touched


class _Side:
    """The declarations open at the current line on one side (old or new) of a hunk."""

    def __init__(self, context: str | None) -> None:
        self.context = context
        self.open: list[tuple[int, str]] = []  # (indent, name), indents increasing
        self.decorators: list[str] = []  # chains of changed decorators awaiting their target

    def read(self, line: str, *, changed: bool) -> list[str]:
        """Follow one visible line; return the symbols it touches, if it is a change."""
        indent = _indent(line)
        # A closing bracket sits at the indentation of the declaration it closes.
        limit = indent + (1 if _CLOSING_ONLY.match(line) else 0)
        while self.open and self.open[-1][0] >= limit:
            self.open.pop()
        own = declared_symbol(line)
        if own:
            self.open.append((indent, own))
        chain = self._chain()
        if _DECORATOR.match(line):
            if changed:
                self.decorators.append(chain)
            return []
        touched = [chain] if changed else []
        if self.decorators:  # decorators belong to the declaration after them
            touched = [chain if own else waiting for waiting in self.decorators] + touched
            self.decorators = []
        return [symbol for symbol in touched if symbol]

    def flush(self) -> list[str]:
        waiting, self.decorators = self.decorators, []
        return [symbol for symbol in waiting if symbol]

    def _chain(self) -> str:
        names = [name for _, name in self.open]
        if self.context and (not self.open or self.open[0][0] > 0):
            names.insert(0, self.context)
        return ".".join(names)


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" \t"))
