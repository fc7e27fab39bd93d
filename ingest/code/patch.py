"""Unified diffs: the files a patch touches, its hunks, and the symbols those hunks change."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from metisgraph.ingest.code.model import PatchFile

__all__ = ["added_lines", "declared_symbol", "parse_patch"]

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

    Declarations are read from the lines above in the same hunk (by indentation), then from
    the hunk header, which names the scope the hunk starts in.
    """
    touched: list[str] = []
    for index, (marker, line) in enumerate(hunk.lines):
        if marker == " " or not line.strip() or _COMMENT_ONLY.match(line):
            continue  # a comment changes no behaviour; a doc comment belongs to what follows
        chain = _enclosing(hunk.lines[: _decorated(hunk.lines, index, marker) + 1], marker)
        if not chain and hunk.context:
            chain = [hunk.context]
        elif hunk.context and _indent(_first_line_of(hunk.lines, chain[0], marker)) > 0:
            chain.insert(0, hunk.context)
        if chain:
            touched.append(".".join(chain))
    return touched


def _decorated(lines: list[tuple[str, str]], index: int, side: str) -> int:
    """A decorator or annotation line belongs to the declaration right after it."""
    if not _DECORATOR.match(lines[index][1]):
        return index
    for later in range(index + 1, len(lines)):
        marker, text = lines[later]
        if marker in {" ", side} and not _DECORATOR.match(text):
            return later if declared_symbol(text) else index
    return index


def _enclosing(lines: list[tuple[str, str]], side: str) -> list[str]:
    """Names of the declarations that enclose the last line, outermost first."""
    visible = [text for marker, text in lines if marker in {" ", side}]
    if not visible:
        return []
    current = visible[-1]
    chain: list[str] = []
    own = declared_symbol(current)
    if own:
        chain.append(own)
    # A closing bracket sits at the indentation of the declaration it closes.
    limit = _indent(current) + (1 if _CLOSING_ONLY.match(current) else 0)
    for text in reversed(visible[:-1]):
        if not text.strip() or _indent(text) >= limit:
            continue
        name = declared_symbol(text)
        if name:
            chain.insert(0, name)
            limit = _indent(text)
        if limit == 0:
            break
    return chain


def _first_line_of(lines: list[tuple[str, str]], name: str, side: str) -> str:
    for marker, text in lines:
        if marker in {" ", side} and declared_symbol(text) == name:
            return text
    return ""


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" \t"))


def added_lines(diff: str) -> list[tuple[int, str]]:
    """The lines a diff adds, each with its line number in the diff text."""
    return [
        (number, line[1:])
        for number, line in enumerate(diff.splitlines(), start=1)
        if line.startswith("+") and not line.startswith("+++ ")
    ]
