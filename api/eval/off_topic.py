"""Off-topic questions for `metisgraph eval retrieval --off-topic`: how often recall abstains
when nothing in the store answers, beside how often it abstains when something does.

A file of off-topic questions is JSON lines with a `text` (or an `error`), optionally an `id`;
a retrieval set's queries.jsonl reads as one, its labels ignored (another set's questions
are off-topic for this set's stores). Each question is asked once, in one of the set's
projects in turn (question i in project i mod n, the projects in name order), through the
same recall as the answerable questions.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from metisgraph.api.graphql.recall_service import answer
from metisgraph.api.services import Services
from metisgraph.graph import RecallFilters, abstention_gates
from metisgraph.ingest.question import Question

__all__ = ["OffTopic", "OffTopicTally", "ask_off_topic", "gates_used", "load_off_topic"]


class OffTopicError(ValueError):
    """An off-topic file that cannot be read (names the file, line and field)."""


@dataclass(frozen=True)
class OffTopic:
    id: str
    text: str
    error: str | None
    source: str  # the file it came from


def load_off_topic(path: Path) -> list[OffTopic]:
    """The questions of a file (or of DIR/queries.jsonl); every bad line is named."""
    file = path / "queries.jsonl" if path.is_dir() else path
    out: list[OffTopic] = []
    problems: list[str] = []
    try:
        lines = file.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise OffTopicError(f"{file}: cannot be read: {exc}") from None
    source = file.parent.name if file.name == "queries.jsonl" else file.stem
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            item = json.loads(line)
        except json.JSONDecodeError as exc:
            problems.append(f"{file}:{number}: invalid JSON: {exc}")
            continue
        text = item.get("text") if isinstance(item, dict) else None
        error = item.get("error") if isinstance(item, dict) else None
        if not isinstance(text, str | None) or not isinstance(error, str | None):
            problems.append(f"{file}:{number}: field 'text'/'error': expected a string")
            continue
        if not (text or "").strip() and not (error or "").strip():
            problems.append(f"{file}:{number}: field 'text': a question needs a text or an error")
            continue
        out.append(OffTopic(str(item.get("id", number)), text or "", error, source))
    if problems:
        raise OffTopicError("\n".join(problems[:20]))
    return out


@dataclass
class OffTopicTally:
    asked: dict[str, int] = field(default_factory=dict)  # by source file
    abstained: dict[str, int] = field(default_factory=dict)
    failures: list[dict[str, str]] = field(default_factory=list)

    def as_json(self) -> dict[str, Any]:
        n, a = sum(self.asked.values()), sum(self.abstained.values())
        return {
            "n": n,
            "abstained": a,
            "rate": round(a / n, 4) if n else None,
            "by_source": {s: self._source(s) for s in sorted(self.asked)},
            "failed": len(self.failures),
        }

    def _source(self, source: str) -> dict[str, Any]:
        n, a = self.asked[source], self.abstained.get(source, 0)
        return {"n": n, "abstained": a, "rate": round(a / n, 4)}


async def ask_off_topic(
    services: Services,
    questions: Sequence[OffTopic],
    projects: Sequence[str],
    *,
    k: int,
    preset: str,
    abstain_below: float | None,
    memory_types: tuple[str, ...],
) -> OffTopicTally:
    """Ask each question in one project of the set, in turn; count the abstentions."""
    tally = OffTopicTally()
    ordered = sorted(projects)
    for i, q in enumerate(questions):
        question = Question(
            project=ordered[i % len(ordered)],
            query=q.text or (q.error or "").strip().splitlines()[0],
            error=q.error,
            k=k,
            preset=preset,
            abstain_below=abstain_below,
            filters=RecallFilters(memory_types=memory_types),
        )
        tally.asked[q.source] = tally.asked.get(q.source, 0) + 1
        try:
            result = await answer(services, question)
        except Exception as exc:  # reported; counted as not abstained
            tally.failures.append({"id": q.id, "error": f"{type(exc).__name__}: {exc}"[:500]})
            continue
        tally.abstained[q.source] = tally.abstained.get(q.source, 0) + result.abstained
    return tally


async def gates_used(services: Services, projects: Iterable[str], namespace: str) -> dict[str, Any]:
    """Each project's abstention threshold as recall read it (without the namespace)."""
    gates = await abstention_gates(
        services.store,
        sorted(projects),
        services.embedder.aencode,
        in_index=services.vector_filters,
    )
    return {
        p.removeprefix(namespace): {
            "threshold": g.threshold,
            "code_threshold": g.code_threshold,
            "source": g.source,
        }
        for p, g in gates.items()
    }
