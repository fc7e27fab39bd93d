"""The pass engine of redaction and abstraction: rewriting passes that look only where
they can match, so a text is read a few times, not once per rule.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Generic, TypeVar

__all__ = ["PassChain", "PassGroup", "TextPass", "case_variants", "chars", "word_anchor"]

State = TypeVar("State")


@dataclass(frozen=True)
class TextPass(Generic[State]):
    """One rewriting pass over a text: where to look cheaply, what to match, what to write.

    Python's regex engine scans fast only for patterns that start with a literal or a
    character class. A pattern that needs context first (a word boundary, a name of
    any length before ``password``) is given an ``anchor``: a fast pattern whose hits
    are the candidates. A candidate is widened to the left over ``widen`` characters
    (at most ``reach``) and the precise ``pattern`` is matched there; lookbehinds in it still
    see the text before. ``rewrite`` returns the replacement, or None to keep the match.
    ``triggers`` are substrings without which the pass cannot match; it is skipped then.
    """

    pattern: re.Pattern[str]
    rewrite: Callable[[re.Match[str], State], str | None]
    triggers: tuple[str, ...] = ()
    fold_case: bool = False
    anchor: re.Pattern[str] | None = None
    widen: frozenset[str] = frozenset()
    back: int = 0  # or step this many characters back from each anchor hit
    reach: int = 64  # how far a candidate may be widened
    needs_digit: bool = False  # cannot match a text without a digit (half of all texts)
    gate: re.Pattern[str] | None = field(init=False, default=None)

    def __post_init__(self) -> None:
        # One compiled alternation is much cheaper per call than a loop of substring tests.
        if self.triggers:
            gate = re.compile("|".join(map(re.escape, self.triggers)))
            object.__setattr__(self, "gate", gate)

    def worth_running(self, text: str, folded: str) -> bool:
        return self.gate is None or self.gate.search(folded if self.fold_case else text) is not None

    def apply(self, text: str, state: State) -> str:
        if self.anchor is None:
            return self.pattern.sub(lambda m: _kept(self.rewrite(m, state), m), text)
        pieces: list[str] = []
        done, tried = 0, -1
        for hit in self.anchor.finditer(text):
            start = max(hit.start() - self.back, 0) if self.back else hit.start()
            start = self._widened(text, start, done)
            if start < done or start == tried:
                continue
            tried = start
            match = self.pattern.match(text, start)
            new = None if match is None else self.rewrite(match, state)
            if match is not None and new is not None:
                pieces += (text[done : match.start()], new)
                done = match.end()
        return "".join([*pieces, text[done:]]) if pieces else text

    def _widened(self, text: str, start: int, floor: int) -> int:
        if not self.widen:
            return start
        limit = max(floor, start - self.reach)
        while start > limit and text[start - 1] in self.widen:
            start -= 1
        return start


def _kept(new: str | None, match: re.Match[str]) -> str:
    return match.group(0) if new is None else new


@dataclass(frozen=True)
class PassGroup(Generic[State]):
    """Passes that share one fast necessary condition, tested once for all of them."""

    gate: re.Pattern[str]
    passes: tuple[TextPass[State], ...]
    needs_digit: bool = False


class PassChain(Generic[State]):
    """Passes and groups of passes applied in order, each skipped when it cannot match."""

    def __init__(self, steps: Sequence[TextPass[State] | PassGroup[State]]) -> None:
        self.steps = tuple(steps)

    def run(self, text: str, state: State) -> str:
        folded = text.lower()
        has_digit = _DIGIT.search(text) is not None
        for step in self.steps:
            if step.needs_digit and not has_digit:
                continue
            if isinstance(step, PassGroup):
                if step.gate.search(text):
                    for text_pass in step.passes:
                        text = _run_one(text_pass, text, folded, state)
            else:
                text = _run_one(step, text, folded, state)
        return text


_DIGIT = re.compile(r"\d")


def _run_one(text_pass: TextPass[State], text: str, folded: str, state: State) -> str:
    gate = text_pass.gate
    if gate is None or gate.search(folded if text_pass.fold_case else text):
        return text_pass.apply(text, state)
    return text


def word_anchor(*words: str, cases: bool = False) -> str:
    """A fast pattern for whole words: literals first, the word-boundary test only on a hit."""
    variants = (v for w in words for v in ((w, w.capitalize(), w.upper()) if cases else (w,)))
    alternatives = (f"{re.escape(v)}(?<![\\w-]{re.escape(v)})" for v in dict.fromkeys(variants))
    return "(?:" + "|".join(alternatives) + ")"


def chars(spec: str) -> frozenset[str]:
    """The set of characters matched by a simple class body like ``A-Za-z0-9_.-``."""
    return frozenset(c for c in map(chr, range(128)) if re.fullmatch(f"[{spec}]", c))


def case_variants(*words: str) -> str:
    """An alternation of each word as written in lower, Capitalised and UPPER case."""
    return "|".join(v for w in words for v in dict.fromkeys((w, w.capitalize(), w.upper())))
