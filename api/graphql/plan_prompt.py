"""The planning prompt: the task, the numbered memories and the rules, fitted to a budget.

Memories come ranked, best first. Each is given a share of what the budget leaves after the
task and the rules (what is left, divided among the next ``SHARES`` memories at most); a
memory longer than its share is shortened (``Memory.shortened``: its lines cut, each cut
marked) until it fits, so a long memory is never dropped for its length alone. The lowest
go first when the budget runs out, and the prompt says how many were left out and why — it
never says that no memory applies when some were left out. The service calls no model: any
model can be given the prompt.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

__all__ = ["SHARES", "BudgetTooSmall", "Fitted", "Memory", "PlanTask", "fit", "render"]

SHARES = 5  # the memory budget is shared among the next five memories at most
_FIRST_CHARS = 160
# How a memory is shortened, step by step: (physical lines per line, characters per line,
# lines kept, characters of the heading before its id, characters of the why).
_SHORTER = (
    (8, 600, 12, 300, 300),
    (4, 240, 8, 200, 160),
    (2, 160, 5, 160, 100),
    (1, 120, 3, 120, 60),
    (1, 80, 2, 80, 40),
)

OUTPUT = {
    "action": "what to do next: a command, an edit or an API call",
    "parameters": {"name": "value"},
    "reasoning": "why this step, naming the memories it relies on",
    "cites": ["M1"],
}
RULES = (
    "Plan the one next step toward the goal from the current state.",
    "Follow a success where its situation matches yours; do not repeat a failure unless its "
    "conditions do not hold here, and say why.",
    "Every step cites the memories it relies on by label in `cites` (for example "
    '["M1", "M3"]); a step that relies on none has `cites` [] and says so in `reasoning`.',
    "Reuse a snippet through its template, filling its parameters; never use code a warning "
    "says does not fit this environment.",
)


@dataclass(frozen=True)
class PlanTask:
    """What the agent is doing: the goal, and what it knows now."""

    goal: str
    description: str | None = None
    state: str | None = None
    error: str | None = None
    environment: str | None = None  # rendered, e.g. "linux x86_64, python 3.11, pandas 2.1"
    tools: tuple[str, ...] = ()


def _cut(text: str, chars: int) -> str:
    return text if len(text) <= chars else text[:chars].rstrip() + " …"


def _cut_block(line: str, lines: int, chars: int) -> str:
    """A memory's line (it may hold several physical lines) cut to ``lines`` of ``chars``."""
    physical = line.split("\n")
    kept = [_cut(p, chars) for p in physical[:lines]]
    if len(physical) > lines:
        kept.append(f"… ({len(physical) - lines} more lines cut)")
    return "\n".join(kept)


def _cut_heading(heading: str, chars: int) -> str:
    """The heading's text cut to ``chars``, its closing "(outcome …; id …)" kept whole."""
    text, sep, tail = heading.rpartition(" (")
    if not sep or not tail.endswith(")"):
        return _cut(heading, chars)
    return f"{_cut(text, chars)} ({tail}"


@dataclass(frozen=True)
class Memory:
    """One memory as the prompt shows it (without its label) and why it was chosen."""

    kind: str  # success | failure | experience | fix | workaround | pattern | snippet | warning
    # | conflict
    id: str  # the episode, pattern or snippet it rests on (a conflict: the first of the pair)
    heading: str
    lines: tuple[str, ...]
    why: str
    score: float
    related: tuple[str, ...] = ()  # ids of the other memories it speaks of
    source: Any = field(default=None, compare=False)  # the recalled row, for typed results

    def shortened(self, step: int) -> Memory:
        """This memory cut to the ``step``-th shorter form (0: as it is): fewer and shorter
        lines, a shorter heading (its closing "(…; id …)" always kept) and why; each cut
        marked in the text."""
        if step <= 0:
            return self
        lines_each, chars, kept, heading, why = _SHORTER[min(step, len(_SHORTER)) - 1]
        # The first line is what the step did (or the fix to follow): it keeps at least
        # _FIRST_CHARS, enough for a command line, however short the others are cut.
        lines = [
            _cut_block(line, lines_each, max(chars, _FIRST_CHARS) if n == 0 else chars)
            for n, line in enumerate(self.lines[:kept])
        ]
        if len(self.lines) > kept:
            lines.append(f"… ({len(self.lines) - kept} more lines cut to fit the budget)")
        return replace(
            self, heading=_cut_heading(self.heading, heading), lines=tuple(lines),
            why=_cut(self.why, why),
        )  # fmt: skip

    def block(self, label: str) -> str:
        body = "".join("\n   " + line.replace("\n", "\n     ") for line in self.lines)
        return f"{label} [{self.kind}] {self.heading}{body}\n   why chosen: {self.why}"


@dataclass(frozen=True)
class Fitted:
    prompt: str
    memories: list[Memory]
    tokens: int
    left_out: int
    memory_tokens: tuple[int, ...] = ()  # each memory's block as the prompt shows it


class BudgetTooSmall(ValueError):
    """Even without memories, the prompt does not fit the budget."""

    def __init__(self, needed: int, budget: int) -> None:
        super().__init__(
            f"budget: the prompt without any memory takes {needed} tokens, more than the "
            f"budget of {budget}; give a larger budget or a shorter goal, state or error"
        )
        self.needed = needed


def _section(title: str, text: str | None) -> list[str]:
    return [f"## {title}", text.strip(), ""] if text and text.strip() else []


def _head(task: PlanTask) -> str:
    return "\n".join([
        "You are planning the next step of a software task. Numbered memories from earlier "
        "work follow; use them where they apply.",
        "",
        *_section("Goal", task.goal),
        *_section("Description", task.description),
        *_section("Current state", task.state),
        *_section("Last error", task.error),
        *_section("Environment", task.environment),
        *_section("Tools", ", ".join(task.tools) if task.tools else None),
        "## Memories",
    ])  # fmt: skip


_NONE = "(no memory applies: plan from the task alone)"
_TAIL = "\n".join([
    "", "## Rules", *(f"{n}. {r}" for n, r in enumerate(RULES, start=1)), "",
    "## Answer", "Reply with one JSON object and nothing else:", json.dumps(OUTPUT),
])  # fmt: skip


def _left_out(n: int, budget: int, shown: int) -> str:
    if shown:
        return (f"({n} lower-ranked memories left out: with the {shown} above, they do not fit "
                f"the token budget of {budget}; a larger budget shows them)")  # fmt: skip
    return (
        f"({n} memories were recalled but none fits the token budget of {budget} beside "
        "the task: this does not mean none applies; a larger budget shows them)"
    )


def render(task: PlanTask, memories: Sequence[Memory], left_out: int = 0, budget: int = 0) -> str:
    """The whole prompt with these memories, labelled M1… in order."""
    middle = [m.block(f"M{n}") for n, m in enumerate(memories, start=1)]
    if not middle and not left_out:
        middle = [_NONE]
    if left_out:
        middle.append(_left_out(left_out, budget, len(memories)))
    return "\n".join([_head(task), *middle, _TAIL])


def fit(
    task: PlanTask,
    memories: Sequence[Memory],
    budget: int,
    count: Callable[[str], int],
    *,
    additive: bool = False,
) -> Fitted:
    """The prompt with as many of the top memories as the budget holds (never over it), each
    shortened to its share when longer.

    The prompt is its pieces joined by newlines, each piece counted once. ``additive``: no
    token of ``count`` spans a newline (the WordPiece pre-tokenizer splits on whitespace),
    so the prompt's count is the sum of its pieces' and the whole is never counted (that
    count cost a third of the fitting); otherwise the whole prompt is counted once more at
    the end, the exact guard of the budget.
    """
    total = len(memories)
    fixed = count(_head(task)) + count(_TAIL)
    bare = fixed + (count(_left_out(total, budget, 0)) if total else count(_NONE))
    if bare > budget:
        raise BudgetTooSmall(count(render(task, [], total, budget)), budget)
    # Room for the memories, the note on those left out kept aside (its longer form).
    notes = (_left_out(total, budget, shown) for shown in (0, total))
    room = budget - fixed - (max(count(note) for note in notes) if total else 0)
    shown: list[Memory] = []
    each: list[int] = []
    for label, memory in enumerate(memories, start=1):
        left = room - sum(each)
        share = left // min(total - label + 1, SHARES)
        placed = _shortest_within(memory, f"M{label}", share, left, count)
        if placed is None:
            break
        shown.append(placed[0])
        each.append(placed[1])

    def tokens_with(n: int) -> int:
        if additive:
            return _tokens(fixed, each, n, total, budget, count)
        return count(render(task, shown[:n], total - n, budget))

    n = len(shown)
    tokens = tokens_with(n)
    while tokens > budget:  # never expected when counts add up, but the budget is a promise
        if n == 0:
            raise BudgetTooSmall(tokens, budget)
        n -= 1
        tokens = tokens_with(n)
    prompt = render(task, shown[:n], total - n, budget)
    return Fitted(prompt, shown[:n], tokens, total - n, tuple(each[:n]))


def _tokens(
    fixed: int, each: Sequence[int], n: int, total: int, budget: int, count: Callable[[str], int]
) -> int:
    """The tokens of the prompt ``render`` makes with the first ``n`` memories: the head and
    the tail, those memories' blocks, and the note on those left out (or that none applies)."""
    if n < total:
        return fixed + sum(each[:n]) + count(_left_out(total - n, budget, n))
    return fixed + sum(each[:n]) + (0 if n else count(_NONE))


def _shortest_within(
    memory: Memory, label: str, share: int, left: int, count: Callable[[str], int]
) -> tuple[Memory, int] | None:
    """The memory in its first form within its share, or else in the shortest form that still
    fits what is left of the budget; None when not even that fits.

    Counting is the cost: a shorter form is counted only when its length, at the tokens per
    character of the whole memory, would fit the share (the shortest is always counted)."""
    text = memory.block(label)
    tokens = count(text)
    if tokens <= share:
        return memory, tokens
    per_char = tokens / max(len(text), 1)
    form = memory
    for step in range(1, len(_SHORTER) + 1):
        form = memory.shortened(step)
        text = form.block(label)
        if step < len(_SHORTER) and len(text) * per_char > share:
            continue  # estimated over its share: the next form, uncounted
        tokens = count(text)
        if tokens <= share:
            return form, tokens
    return (form, tokens) if tokens <= left else None
