"""Labelled lineage: which step fixed, worked round or left each error of a set of agent runs.

A label names its run by file (and JSONL line), its steps by their place in the file
(``messages[12]``, ``trajectory[3]``, ``history[40]``) and its error by the line as printed:
nothing of the product's keys. ``bench/labels/README.md`` documents the format and how the
shared runs were labelled. ``steps_of`` finds, for the runs a label file names, the record
each step becomes when ingested (its task, episode id and action), so that the product's
claims (`eval lineage`) and prompts (`eval plan`) can be compared with the labels.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from metisgraph.ingest import EpisodeRecord
from metisgraph.ingest.adapters import Parsed, Refused, read_path

__all__ = [
    "VERDICTS",
    "LabelSetError",
    "LineageLabel",
    "RunRef",
    "StepRecord",
    "StepRef",
    "in_namespace",
    "load_labels",
    "read_runs",
    "steps_of",
]

VERDICTS = ("fixed", "workaround", "unresolved")


class LabelSetError(ValueError):
    """The label file is not in the documented format (names the file, line and field)."""


@dataclass(frozen=True, order=True)
class RunRef:
    """A run: its file relative to the runs folder, and its line when the file holds many."""

    file: str
    item: int | None = None

    def __str__(self) -> str:
        return self.file if self.item is None else f"{self.file}:{self.item}"


@dataclass(frozen=True, order=True)
class StepRef:
    """A step of a run, as the run's file addresses it."""

    run: RunRef
    pointer: str

    def __str__(self) -> str:
        return f"{self.run}@{self.pointer}"


@dataclass(frozen=True)
class LineageLabel:
    """One distinct error of one run, and what dealt with it (read by a person)."""

    line: int  # in the label file, from 1
    source: str
    run: RunRef
    repository: str | None
    task_resolved: bool | None
    error: str
    seen: tuple[str, ...]
    verdict: str
    step: str | None
    also: tuple[str, ...]
    reason: str

    @property
    def accepted(self) -> frozenset[str]:
        """The steps that count as the labelled fixer (or workaround)."""
        return frozenset([self.step, *self.also]) if self.step else frozenset()

    @property
    def name(self) -> str:
        return f"{self.run}@{self.seen[0]}"


class _BadField(ValueError):
    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}")
        self.field, self.message = field, message


def load_labels(path: Path) -> list[LineageLabel]:
    """Every label of the file; every bad line is named (line and field) before any is used."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except UnicodeDecodeError as exc:
        raise LabelSetError(f"{path}: not UTF-8: {exc}") from None
    labels: list[LineageLabel] = []
    problems: list[str] = []
    for number, text in enumerate(lines, start=1):
        if not text.strip():
            continue
        try:
            labels.append(_label(json.loads(text), number))
        except json.JSONDecodeError as exc:
            problems.append(f"{path}:{number}: invalid JSON: {exc}")
        except _BadField as exc:
            problems.append(f"{path}:{number}: field {exc.field!r}: {exc.message}")
    if problems:
        more = [f"... and {len(problems) - 20} more"] if len(problems) > 20 else []
        raise LabelSetError("\n".join(problems[:20] + more))
    if not labels:
        raise LabelSetError(f"{path}: no labels")
    return labels


def _text(item: dict[str, object], name: str, *, required: bool = True) -> str | None:
    value = item.get(name)
    if value is None and not required:
        return None
    if not isinstance(value, str) or not value.strip():
        raise _BadField(name, f"expected a non-empty string, got {value!r}"[:120])
    return value


def _pointers(item: dict[str, object], name: str) -> tuple[str, ...]:
    value = item.get(name, [])
    if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
        raise _BadField(name, f"expected a list of steps, got {value!r}"[:120])
    return tuple(value)


def _label(item: object, number: int) -> LineageLabel:
    if not isinstance(item, dict):
        raise _BadField("", "expected an object")
    run = RunRef(_text(item, "run") or "", _item(item))
    verdict = _text(item, "verdict") or ""
    if verdict not in VERDICTS:
        raise _BadField("verdict", f"expected one of {', '.join(VERDICTS)}, got {verdict!r}")
    step = _text(item, "step", required=False)
    if (step is None) != (verdict == "unresolved"):
        raise _BadField("step", "a fixed or worked-round error names its step; unresolved none")
    seen = _pointers(item, "seen")
    if not seen:
        raise _BadField("seen", "expected at least the step that printed the error")
    resolved = item.get("task_resolved")
    if resolved is not None and not isinstance(resolved, bool):
        raise _BadField("task_resolved", f"expected true, false or null, got {resolved!r}")
    return LineageLabel(
        line=number,
        source=_text(item, "source") or "",
        run=run,
        repository=_text(item, "repository", required=False),
        task_resolved=resolved,
        error=_text(item, "error") or "",
        seen=seen,
        verdict=verdict,
        step=step,
        also=_pointers(item, "also"),
        reason=_text(item, "reason") or "",
    )


def _item(item: dict[str, object]) -> int | None:
    value = item.get("item")
    if value is not None and (not isinstance(value, int) or isinstance(value, bool) or value < 1):
        raise _BadField("item", f"expected a line number from 1, or null, got {value!r}")
    return value


@dataclass(frozen=True)
class StepRecord:
    """What a step of a run becomes when ingested."""

    project: str
    task_id: str
    episode_id: str
    action_type: str | None
    command: str | None


def read_runs(runs: Path, wanted: Iterable[RunRef]) -> Iterator[tuple[RunRef, Parsed | Refused]]:
    """The records of the run files named (each file read once, in order), each with its run."""
    for file in sorted({r.file for r in wanted}):
        path = runs / file
        if not path.is_file():
            raise LabelSetError(f"{path}: a labelled run is not there")
        for item in read_path(path):
            yield RunRef(file, item.ref.line if file.endswith(".jsonl") else None), item


def steps_of(records: Iterable[tuple[RunRef, Parsed | Refused]]) -> dict[StepRef, StepRecord]:
    """Each step of the runs read, by its place in its file."""
    steps: dict[StepRef, StepRecord] = {}
    for run, item in records:
        record = item.record if isinstance(item, Parsed) else None
        pointer = item.ref.pointer
        if not isinstance(record, EpisodeRecord) or pointer is None or record.task_id is None:
            continue
        action = record.action
        steps[StepRef(run, pointer)] = StepRecord(
            project=record.project,
            task_id=record.task_id,
            episode_id=str(record.id),
            action_type=action.type if action else None,
            command=action.command if action else None,
        )
    return steps


def in_namespace(
    items: Iterable[tuple[RunRef, Parsed | Refused]], namespace: str, created: set[str]
) -> Iterator[tuple[RunRef, Parsed | Refused]]:
    """The records with their project under ``namespace`` (each project made is added to
    ``created``, for the caller to remove afterwards)."""
    for run, item in items:
        if isinstance(item, Parsed) and isinstance(getattr(item.record, "project", None), str):
            project = namespace + item.record.project
            created.add(project)
            item = Parsed(item.record.model_copy(update={"project": project}), item.ref)
        yield run, item
