"""What a detector reports: one error seen in a block of text, before it is normalised."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

__all__ = ["Frame", "Sighting", "scan"]


@dataclass(frozen=True)
class Frame:
    """One stack frame, already normalised (``pkg.Class.method``, ``module.func``)."""

    name: str
    symbol: str  # the class or module the frame belongs to
    own: bool  # the project's own code, not a runtime or a well-known library


@dataclass
class Sighting:
    """One error found in text: its family, kind, message and where it was seen.

    ``frames`` run innermost first, root-cause section first; ``chain`` lists the
    kinds from the outermost wrapper to the root cause; ``start``/``end`` are
    line indexes (end exclusive) into the text the detector read.
    """

    category: str
    kind: str
    message: str
    start: int
    end: int
    frames: list[Frame] = field(default_factory=list)
    chain: list[str] = field(default_factory=list)
    symbols: list[str] = field(default_factory=list)


def scan(
    lines: list[str], candidates: Iterable[int], parse: Callable[[list[str], int], Sighting | None]
) -> list[Sighting]:
    """Try ``parse`` at each candidate line, in order, never inside what was already found."""
    found: list[Sighting] = []
    resume = 0
    for i in candidates:
        if i < resume:
            continue
        sighting = parse(lines, i)
        if sighting is not None:
            found.append(sighting)
            resume = max(sighting.end, i + 1)
    return found
