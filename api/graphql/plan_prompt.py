"""The planning prompt: the task, the numbered memories and the rules, fitted to a budget.

Memories come ranked, best first. The prompt keeps the longest run of them from the top
whose rendering fits the budget: a memory is in whole or left out, and the lowest go first.
The service calls no model: any model can be given the prompt.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

__all__ = ["BudgetTooSmall", "Fitted", "Memory", "PlanTask", "fit", "render"]

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


@dataclass(frozen=True)
class Memory:
    """One memory as the prompt shows it (without its label) and why it was chosen."""

    kind: str  # success | failure | experience | pattern | snippet | warning | conflict
    id: str  # the episode, pattern or snippet it rests on (a conflict: the first of the pair)
    heading: str
    lines: tuple[str, ...]
    why: str
    score: float
    related: tuple[str, ...] = ()  # ids of the other memories it speaks of
    source: Any = field(default=None, compare=False)  # the recalled row, for typed results

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


def _left_out(n: int) -> str:
    return f"({n} lower-ranked memories left out to fit the token budget)"


def render(task: PlanTask, memories: Sequence[Memory], left_out: int = 0) -> str:
    """The whole prompt with these memories, labelled M1… in order."""
    middle = [m.block(f"M{n}") for n, m in enumerate(memories, start=1)] or [_NONE]
    if left_out:
        middle.append(_left_out(left_out))
    return "\n".join([_head(task), *middle, _TAIL])


def fit(
    task: PlanTask, memories: Sequence[Memory], budget: int, count: Callable[[str], int]
) -> Fitted:
    """The prompt with as many of the top memories as the budget holds (never over it).

    The prompt is its pieces joined by newlines, and no token spans a newline (the WordPiece
    pre-tokenizer splits on whitespace), so its count is the sum of theirs: each piece is
    counted once, and the whole prompt once more at the end, the exact guard of the budget.
    """
    total = len(memories)
    fixed = count(_head(task)) + count(_TAIL)

    def spent(n: int, blocks: int) -> int:
        return (fixed + blocks + (count(_NONE) if n == 0 else 0)
                + (count(_left_out(total - n)) if n < total else 0))  # fmt: skip

    if spent(0, 0) > budget:
        raise BudgetTooSmall(count(render(task, [], total)), budget)
    each: list[int] = []
    for label, memory in enumerate(memories, start=1):
        tokens = count(memory.block(f"M{label}"))
        if spent(label, sum(each) + tokens) > budget:
            break
        each.append(tokens)
    n = len(each)
    prompt = render(task, memories[:n], total - n)
    tokens = count(prompt)
    while tokens > budget:  # never expected (the pieces add up), but the budget is a promise
        if n == 0:
            raise BudgetTooSmall(tokens, budget)
        n -= 1
        prompt = render(task, memories[:n], total - n)
        tokens = count(prompt)
    return Fitted(prompt, list(memories[:n]), tokens, total - n, tuple(each[:n]))
