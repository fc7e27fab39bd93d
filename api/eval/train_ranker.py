"""`metisgraph eval train-ranker`: a project's own ranker, from its labelled questions and
from recorded use, installed only when it beats the shipped one on questions it never saw.

The questions are asked as recall asks them (hand order, the shortlist's features kept);
they are split into folds, and each fold is ranked by a ranker trained on the other folds
alone (leave-some-out). Those held-out rankings are judged beside the hand-set fusion's and
the shipped ranker's on the same shortlists. The ranker trained on every question is
installed on the project (graph/project_ranker.py) when its held-out MRR@10 is higher than
the shipped ranker's and its R@5 no lower; recall's ``learned`` ranker then reads it.

Recorded use is a feedback log, one JSON object a line: ``project``, ``question`` (what was
asked, or what the step that used the memory was doing), ``error`` (optional), ``memory``
(the id of the memory used), ``episode`` (optional: the step that used it, itself in the
store — left out of its question's answers) and ``signal`` — ``cited`` (cited by a step of
a plan that succeeded), ``outcome`` (a recordOutcome report), ``applied`` (an APPLIED_IN
link), ``approved`` (a review approval) — with ``success`` (default true). A use that
succeeded (an approval always) makes the memory a right answer of its question; a failed
one is counted and left out. A bad line is named (line and field) and kept out; the others
go on.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from metisgraph.api.eval.ranker_data import FeatureSet, feature_set
from metisgraph.api.eval.ranker_fit import Method, fit, set_figures
from metisgraph.api.eval.retrieval import AskOptions, EvalQuery, ask_all
from metisgraph.api.services import Services
from metisgraph.graph import PRESETS, LinearRanker, install_ranker, shipped_ranker

__all__ = [
    "SIGNALS",
    "Feedback",
    "TrainingReport",
    "held_out_scores",
    "read_feedback",
    "subset",
    "train_project_ranker",
]

SIGNALS = ("cited", "outcome", "applied", "approved")


@dataclass
class Feedback:
    """The log's questions (the memories used with success as their right answers), the
    uses that failed, and the refused lines with their reasons."""

    questions: list[EvalQuery] = field(default_factory=list)
    failed_uses: int = 0
    refused: list[str] = field(default_factory=list)


def read_feedback(path: Path) -> Feedback:
    """The feedback log's uses grouped by question (project, question, error)."""
    out = Feedback()
    grouped: dict[tuple[str, str, str | None], set[str]] = {}
    steps: dict[tuple[str, str, str | None], set[str]] = {}
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            use = _use(json.loads(line))
        except json.JSONDecodeError as exc:
            out.refused.append(f"{path}:{number}: invalid JSON: {exc}")
            continue
        except _BadUse as exc:
            out.refused.append(f"{path}:{number}: field {exc.args[0]!r}: {exc.args[1]}")
            continue
        project, question, error, memory, worked, episode = use
        if episode:
            steps.setdefault((project, question, error), set()).add(episode)
        if not worked:
            out.failed_uses += 1
            continue
        grouped.setdefault((project, question, error), set()).add(memory)
    for index, (key, memories) in enumerate(grouped.items(), start=1):
        own = frozenset(steps.get(key, ())) - memories
        asked = EvalQuery(f"feedback-{index}", *key, frozenset(memories), own)
        out.questions.append(asked)
    return out


class _BadUse(ValueError):
    pass


def _use(item: object) -> tuple[str, str, str | None, str, bool, str | None]:
    if not isinstance(item, dict):
        raise _BadUse("line", "not a JSON object")

    def text(name: str, required: bool = True) -> str | None:
        value = item.get(name)
        if value is None and not required:
            return None
        if not isinstance(value, str) or not value.strip():
            raise _BadUse(name, "a non-empty string is required")
        return value

    signal = text("signal")
    if signal not in SIGNALS:
        raise _BadUse("signal", f"{signal!r}: one of {', '.join(SIGNALS)}")
    success = item.get("success", True)
    if not isinstance(success, bool):
        raise _BadUse("success", "true or false")
    worked = success or signal == "approved"
    return (str(text("project")), str(text("question")), text("error", required=False),
            str(text("memory")), worked, text("episode", required=False))  # fmt: skip


@dataclass
class TrainingReport:
    project: str
    questions: int  # asked (labelled + from the log)
    labelled: int
    from_feedback: int
    folds: int
    hand: dict[str, float]
    shipped: dict[str, float]  # the shipped ranker on the same shortlists
    held_out: dict[str, float]  # each fold ranked by a ranker trained without it
    better: bool
    installed: bool
    ranker: LinearRanker | None = None
    failures: list[dict[str, str]] = field(default_factory=list)

    def as_json(self) -> dict[str, Any]:
        def rounded(figures: dict[str, float]) -> dict[str, float]:
            return {k: round(v, 4) for k, v in figures.items()}

        return {
            "project": self.project,
            "questions": self.questions,
            "labelled": self.labelled,
            "from_feedback": self.from_feedback,
            "folds": self.folds,
            "hand": rounded(self.hand),
            "shipped": rounded(self.shipped),
            "held_out": rounded(self.held_out),
            "better": self.better,
            "installed": self.installed,
            "version": self.ranker.version if self.ranker else None,
            "failed": len(self.failures),
        }


def subset(data: FeatureSet, questions: Sequence[int]) -> FeatureSet:
    """The set restricted to some of its questions (their indices), renumbered."""
    new = {old: i for i, old in enumerate(questions)}
    rows = np.flatnonzero(np.isin(data.query, list(questions)))
    return replace(
        data,
        matrix=data.matrix[rows],
        query=np.asarray([new[int(q)] for q in data.query[rows]], dtype=np.int64),
        label=data.label[rows],
        hand=data.hand[rows],
        ids=[data.ids[r] for r in rows],
        questions=[data.questions[q] for q in questions],
    )


def held_out_scores(
    data: FeatureSet, folds: int, method: Method, l2: float, names: Sequence[str]
) -> npt.NDArray[np.float64]:
    """Each row's score by a ranker trained on the other folds' questions only (questions
    dealt to the folds in turn); a fold with nothing to learn from keeps the hand order."""
    scores = data.hand.copy()
    n = len(data.questions)
    for fold in range(min(folds, n)):
        test = [q for q in range(n) if q % folds == fold]
        train = subset(data, [q for q in range(n) if q % folds != fold])
        if not train.label.any():
            continue
        model = fit([train], method, l2, names=names)
        rows = np.flatnonzero(np.isin(data.query, test))
        scores[rows] = model.score(data.matrix[rows], data.names)
    return scores


async def train_project_ranker(
    services: Services,
    project: str,
    labelled: Sequence[EvalQuery],
    feedback: Sequence[EvalQuery] = (),
    *,
    folds: int = 5,
    method: Method = "pointwise",
    l2: float = 30.0,
    names: Sequence[str] | None = None,
    install: bool = True,
) -> TrainingReport:
    """Ask the questions in ``project``, judge a ranker trained on them leave-some-out, and
    install the one trained on all of them when it beats the shipped ranker."""
    questions = [replace(q, id=f"{i}:{q.id}") for i, q in enumerate([*labelled, *feedback])]
    settings = replace(PRESETS["hand"], features=True)
    tally = await ask_all(
        services,
        [replace(q, project=project) for q in questions],
        "",
        AskOptions(k=10, preset="hand", settings=settings),
    )
    data = feature_set(project, questions, tally.features)
    shipped = shipped_ranker()
    wanted = list(names or [n for n in data.names if n in shipped.features or n.startswith("ppr.")])
    hand = set_figures(data, data.hand)
    plain = set_figures(data, shipped.score(data.matrix, data.names))
    held = set_figures(data, held_out_scores(data, folds, method, l2, wanted))
    better = held["mrr"] > plain["mrr"] and held["r5"] >= plain["r5"]
    ranker = None
    if data.label.any():
        ranker = fit([data], method, l2, version=f"{project}:{len(questions)}q", names=wanted)
    installed = bool(install and better and ranker is not None)
    if installed:
        installed = await install_ranker(services.store, project, ranker)
    return TrainingReport(
        project=project,
        questions=len(questions),
        labelled=len(labelled),
        from_feedback=len(feedback),
        folds=min(folds, len(questions)),
        hand=hand,
        shipped=plain,
        held_out=held,
        better=better,
        installed=installed,
        ranker=ranker,
        failures=tally.failures,
    )
