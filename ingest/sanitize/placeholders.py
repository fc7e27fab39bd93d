"""Placeholders (``<HOST>``, ``<NUM>`` …) and what every abstraction rule shares: the details
it collects, a replacement by kind, the word before a match.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field

__all__ = [
    "PLACEHOLDER",
    "PLACEHOLDER_KINDS",
    "WORDLIKE",
    "WORDLIKE_PLACEHOLDER",
    "Abstracted",
    "Details",
    "Replace",
    "placeholder",
    "put",
    "word_before",
    "wordlike",
]

PLACEHOLDER_KINDS = (
    "ADDR", "EMAIL", "HOME", "HOST", "IP", "MAC", "NUM", "PID", "PORT", "SHA", "TIMESTAMP",
    "TMP", "UUID",
)  # fmt: skip


@dataclass(frozen=True)
class Abstracted:
    """A text with instance details replaced, and the original values by placeholder kind."""

    text: str
    details: dict[str, list[str]]
    redactions: dict[str, int] = field(default_factory=dict)


def placeholder(kind: str) -> str:
    """The typed placeholder for one kind of instance detail, e.g. ``<HOST>``."""
    return f"<{kind}>"


# While the passes run, a placeholder is written as a word (``ꙮHOSTꙮ``; the letter is an
# archaic Cyrillic one nobody types). The detail it replaced was a word too (a host, a
# number, a digest), so the text around it keeps its word boundaries: a later pass sees
# "000000::0" and "<NUM>::0" alike, and abstracting abstracted text changes nothing.
WORDLIKE = "\ua66e"
PLACEHOLDER = re.compile("<(" + "|".join(PLACEHOLDER_KINDS) + ")>")
WORDLIKE_PLACEHOLDER = re.compile(WORDLIKE + "(" + "|".join(PLACEHOLDER_KINDS) + ")" + WORDLIKE)


def wordlike(kind: str) -> str:
    return f"{WORDLIKE}{kind}{WORDLIKE}"


class Details:
    """Collects replaced originals per kind, in order of first appearance, without repeats."""

    def __init__(self) -> None:
        self.seen: dict[str, dict[str, None]] = {}

    def put(self, kind: str, original: str) -> str:
        self.seen.setdefault(kind, {})[original] = None
        return wordlike(kind)

    def as_dict(self) -> dict[str, list[str]]:
        return {kind: list(values) for kind, values in self.seen.items()}


Replace = Callable[[re.Match[str], Details], str | None]


def put(kind: str, group: str = "") -> Replace:
    """Replace the whole match, or just one group of it, by the placeholder for ``kind``."""

    def replace(match: re.Match[str], details: Details) -> str:
        if not group:
            return details.put(kind, match.group(0))
        whole, base = match.group(0), match.start()
        start, end = match.span(group)
        return whole[: start - base] + details.put(kind, match.group(group)) + whole[end - base :]

    return replace


_LAST_WORD = re.compile(r"\w*$")


def word_before(match: re.Match[str]) -> str:
    """The word just before a match, skipping the separators between."""
    head = match.string[max(0, match.start() - 24) : match.start()].rstrip(" \t:=#([-")
    last = _LAST_WORD.search(head)
    return last.group(0).lower() if last else ""
