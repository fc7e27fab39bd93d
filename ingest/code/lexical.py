"""Where the string literals and comments are, for languages we scan without a full parser."""

from __future__ import annotations

import re

__all__ = [
    "PROGRAMMING_LANGUAGES",
    "comment_spans",
    "import_spans",
    "line_of",
    "string_spans",
    "without_comments",
]

# In these languages hosts, paths and secrets only count inside string literals: outside them a
# `/x/y` is a division or a regular expression and `password` is a variable.
# A diff is read the same way: its lines are mostly code.
PROGRAMMING_LANGUAGES = frozenset({"python", "javascript", "typescript", "java", "go", "diff"})

_PY_TOKENS = re.compile(
    r"""(?P<str>[rRbBuUfF]{0,2}(?:'''(?:\\.|[^\\])*?'''|\"\"\"(?:\\.|[^\\])*?\"\"\"|"""
    r"""'(?:\\.|[^'\\\n])*'|"(?:\\.|[^"\\\n])*"))|(?P<comment>\#[^\n]*)""",
    re.S,
)
_C_TOKENS = re.compile(
    r"""(?P<str>'(?:\\.|[^'\\\n])*'|"(?:\\.|[^"\\\n])*"|`(?:\\.|[^`\\])*`)"""
    r"""|(?P<comment>//[^\n]*|/\*.*?\*/)""",
    re.S,
)
_SHELL_TOKENS = re.compile(
    r"""(?P<str>'[^']*'|"(?:\\.|[^"\\])*")|(?P<comment>(?:(?<=\s)|^)\#[^\n]*)""",
    re.S | re.M,
)
_SQL_TOKENS = re.compile(
    r"""(?P<str>'(?:''|[^'])*')|(?P<comment>--[^\n]*|/\*.*?\*/)""",
    re.S,
)
_HASH_TOKENS = re.compile(
    r"""(?P<str>'[^'\n]*'|"(?:\\.|[^"\\\n])*")|(?P<comment>(?:(?<=\s)|^)\#[^\n]*)""",
    re.M,
)

_TOKENS = {
    "python": _PY_TOKENS,
    "javascript": _C_TOKENS,
    "typescript": _C_TOKENS,
    "java": _C_TOKENS,
    "go": _C_TOKENS,
    "diff": _C_TOKENS,
    "c": _C_TOKENS,
    "cpp": _C_TOKENS,
    "rust": _C_TOKENS,
    "bash": _SHELL_TOKENS,
    "sql": _SQL_TOKENS,
    "yaml": _HASH_TOKENS,
    "toml": _HASH_TOKENS,
    "ini": _HASH_TOKENS,
    "dotenv": _HASH_TOKENS,
    "dockerfile": _HASH_TOKENS,
    "make": _HASH_TOKENS,
}


# Import statements name modules, not places: `"github.com/pkg/errors"` is no host to lift.
_IMPORTS = {
    "python": re.compile(r"^[ \t]*(?:from\s+\S+\s+)?import\s[^\n]*", re.M),
    "go": re.compile(r"^import\s*(?:\([^)]*\)|[^\n]*)", re.M),
    "java": re.compile(r"^import\s[^\n]*", re.M),
    "javascript": re.compile(
        r"^[ \t]*import\s[^\n]*|\brequire\(\s*[\"'`][^\"'`]*[\"'`]\s*\)", re.M
    ),
    "typescript": re.compile(
        r"^[ \t]*import\s[^\n]*|\brequire\(\s*[\"'`][^\"'`]*[\"'`]\s*\)", re.M
    ),
}


def import_spans(code: str, language: str) -> list[tuple[int, int]]:
    """Character spans of import statements."""
    pattern = _IMPORTS.get(language)
    return [m.span() for m in pattern.finditer(code)] if pattern else []


def _spans(code: str, language: str, group: str) -> list[tuple[int, int]]:
    pattern = _TOKENS.get(language)
    if pattern is None:
        return []
    return [m.span(group) for m in pattern.finditer(code) if m.group(group) is not None]


def string_spans(code: str, language: str) -> list[tuple[int, int]]:
    """Character spans of string literals, quotes included; empty for unknown languages."""
    return _spans(code, language, "str")


def comment_spans(code: str, language: str) -> list[tuple[int, int]]:
    """Character spans of comments (a shebang line counts as one)."""
    return _spans(code, language, "comment")


def line_of(code: str, offset: int) -> int:
    """The 1-based line number of a character offset."""
    return code.count("\n", 0, offset) + 1


def without_comments(code: str, language: str) -> str:
    """`code` with comments blanked out; newlines are kept so line numbers do not move."""
    chars = list(code)
    for start, end in comment_spans(code, language):
        for i in range(start, end):
            if chars[i] != "\n":
                chars[i] = " "
    return "".join(chars)
