"""A tool an episode used: a program, a runtime, an editor or a library."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

__all__ = ["ToolUse", "dedupe"]


@dataclass(frozen=True)
class ToolUse:
    """A program or library an episode used: ``cli``, ``runtime``, ``editor`` or ``library``."""

    name: str
    kind: str


def dedupe(uses: Iterable[ToolUse]) -> list[ToolUse]:
    seen: dict[str, ToolUse] = {}
    for use in uses:
        seen.setdefault(use.name, use)
    return list(seen.values())
