"""What every detector of hard-coded values shares: the source it reads and the lifts it finds."""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass, field

from metisgraph.ingest.code.lexical import PROGRAMMING_LANGUAGES, string_spans

__all__ = ["Lift", "Source", "context_hint", "is_placeholder", "snake_name"]


@dataclass(frozen=True)
class Lift:
    """A span of the source holding a value to lift into a named parameter."""

    start: int
    end: int
    kind: str
    value: str
    hint: str | None = None


@dataclass(frozen=True)
class Source:
    """Code in a language, with its string literals located once."""

    code: str
    language: str
    strings: tuple[tuple[int, int], ...] = field(default=())
    _starts: tuple[int, ...] = field(default=(), repr=False)

    @classmethod
    def of(cls, code: str, language: str) -> Source:
        spans = tuple(string_spans(code, language))
        return cls(code, language, spans, tuple(start for start, _ in spans))

    @property
    def literal_only(self) -> bool:
        """Programming languages keep values in string literals; anything else is a name."""
        return self.language in PROGRAMMING_LANGUAGES

    def string_at(self, start: int, end: int) -> tuple[int, int] | None:
        """The string literal that contains [start, end), if any."""
        index = bisect.bisect_right(self._starts, start) - 1
        if index < 0:
            return None
        s_start, s_end = self.strings[index]
        return (s_start, s_end) if start >= s_start and end <= s_end else None

    def allows(self, start: int, end: int) -> bool:
        """Whether a value found at [start, end) is a literal value in this language."""
        return not self.literal_only or self.string_at(start, end) is not None


_PLACEHOLDER = re.compile(
    r"^(?:\{\{.*\}\}|\$.*|%\(.*|<[^<>]*>|\{[^{}]*\}|!\w.*|\*+|None|null|nil|true|false|"
    r"undefined|os\.environ.*|process\.env.*|getenv.*)$",
    re.I,
)


def is_placeholder(value: str) -> bool:
    """Values that already stand for something else: `${X}`, `{{x}}`, `<password>`, `None`."""
    stripped = value.strip()
    return not stripped or bool(_PLACEHOLDER.match(stripped)) or "${" in stripped


def snake_name(word: str) -> str | None:
    """A parameter name from a variable, key or flag: `DB-Host` → `db_host`."""
    word = re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", word.strip("-_ .\"'`"))
    name = re.sub(r"[^a-z0-9]+", "_", word.lower()).strip("_")
    if not name or not re.match(r"[a-z_]", name):
        return None
    return name


_ASSIGNED = re.compile(
    r"""(?:["'`](?P<quoted>[\w.-]+)["'`]\s*[:=]"""
    r"""|(?P<name>[A-Za-z_][\w.]*)\s*(?::\s*[\w\[\]., |]+?\s*)?(?:=|:=|=>|:(?=\s)))"""
    r"""\s*(?:[\w.]+\(\s*)?(?:[rRbBuUfF]{0,2}["'`])?$"""
)
_FLAG = re.compile(r"""--(?P<name>[A-Za-z][\w-]*)(?:=|\s+)["']?$""")


def context_hint(code: str, start: int) -> str | None:
    """The variable, key or flag a value is assigned to, read from the text before it."""
    line_start = code.rfind("\n", 0, start) + 1
    before = code[max(line_start, start - 120) : start]
    for pattern in (_FLAG, _ASSIGNED):
        match = pattern.search(before)
        if match:
            name = match.groupdict().get("quoted") or match["name"]
            return snake_name(name.rsplit(".", 1)[-1])
    return None
