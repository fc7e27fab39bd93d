"""Runs of path and name characters too long to be a path or a name, left out of scanning.

The patterns that find names in free text — a file path, a dotted name, a Maven coordinate —
try each position of a run of their characters and read to its end: a run of n such
characters costs them n² steps (a 20,000-character hex or base64 line took 0.9–3.5 s to
prepare, 100,000 ~25 times that). No path, qualified name or coordinate is that long, so
before those patterns read a text, each run longer than `LONGEST_RUN` is blanked (spaces:
the text keeps its length and lines); shorter runs cost at most `LONGEST_RUN` steps a
character. Compact JSON and base64 keep their names: quotes, commas, ``+`` and ``=`` end a
run.
"""

from __future__ import annotations

import functools
import re

__all__ = ["LONGEST_RUN", "without_long_runs"]

LONGEST_RUN = 512
# letters, digits and `_`, and the . - / : that join them into paths, names and coordinates
_RUN = re.compile(r"[\w.\-/:]+")


@functools.cache
def _long_word(longest: int) -> re.Pattern[str]:
    return re.compile(rf"(?<!\S)\S{{{longest + 1}}}")  # from a word's start only: linear


def without_long_runs(text: str, longest: int = LONGEST_RUN) -> str:
    """``text`` with each run of path and name characters longer than ``longest`` blanked;
    ``text`` itself when it has none."""
    # Most texts have no word that long, and whitespace ends a run: looking for such a word
    # first costs a third of the pass below.
    if len(text) <= longest or not _long_word(longest).search(text):
        return text
    parts: list[str] = []
    at = 0
    for run in _RUN.finditer(text):  # one pass: a run is read from its start, once
        start, end = run.span()
        if end - start > longest:
            parts += (text[at:start], " " * (end - start))
            at = end
    if not parts:
        return text
    parts.append(text[at:])
    return "".join(parts)
