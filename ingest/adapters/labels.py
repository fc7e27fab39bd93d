"""Outcome labels that evaluation harnesses leave beside a run: did the tests pass?

Looked for near the trajectory file (its folder and a few above it), in the layouts
the SWE-bench harness and its clients write:

* per instance: ``eval/<id>.report.json`` or ``logs/<id>/report.json`` — either
  ``{"resolved": true, ...}`` or ``{"<id>": {"resolved": true, ...}}``;
* per run: ``results_summary.json`` (``instances[].resolved``), ``sb-cli-report.json``
  or any report with ``resolved_ids`` / ``unresolved_ids``, in the folder or its ``results/``.
"""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path

__all__ = ["find_resolved"]

LEVELS_UP = 3
_RUN_REPORTS = ("results_summary.json", "sb-cli-report.json", "report.json")


def find_resolved(trajectory: Path, instance_id: str) -> bool | None:
    """True/False when a label for ``instance_id`` lies near ``trajectory``; None when none does."""
    for folder in _folders_above(trajectory):
        for path in _instance_reports(folder, instance_id):
            verdict = _instance_verdict(path, instance_id)
            if verdict is not None:
                return verdict
    for folder in _folders_above(trajectory):
        for path in _run_reports(folder):
            verdict = _run_labels(str(path), path.stat().st_mtime_ns).get(instance_id)
            if verdict is not None:
                return verdict
    return None


def _folders_above(trajectory: Path) -> list[Path]:
    folder = trajectory.resolve().parent
    return [folder, *folder.parents][: LEVELS_UP + 1]


def _instance_reports(folder: Path, instance_id: str) -> list[Path]:
    candidates = [
        folder / "eval" / f"{instance_id}.report.json",
        folder / "logs" / instance_id / "report.json",
        folder / instance_id / "report.json",
        folder / f"{instance_id}.report.json",
    ]
    return [path for path in candidates if path.is_file()]


def _run_reports(folder: Path) -> list[Path]:
    candidates = [folder / name for name in _RUN_REPORTS]
    candidates += [folder / "results" / name for name in _RUN_REPORTS]
    return [path for path in candidates if path.is_file()]


def _instance_verdict(path: Path, instance_id: str) -> bool | None:
    report = _load(path)
    if isinstance(report, dict) and isinstance(report.get(instance_id), dict):
        report = report[instance_id]
    if isinstance(report, dict) and isinstance(report.get("resolved"), bool):
        return bool(report["resolved"])
    return None


@lru_cache(maxsize=64)
def _run_labels(path: str, mtime_ns: int) -> dict[str, bool]:
    # Keyed on mtime so a rewritten report is read again; a directory of 500 runs
    # sharing one summary reads it once.
    del mtime_ns
    report = _load(Path(path))
    labels: dict[str, bool] = {}
    if not isinstance(report, dict):
        return labels
    for item in _list(report.get("instances")):
        if isinstance(item, dict) and isinstance(item.get("resolved"), bool):
            labels[str(item.get("instance_id"))] = item["resolved"]
    for key, verdict in (("unresolved_ids", False), ("resolved_ids", True)):
        for instance in _list(report.get(key)):
            labels[str(instance)] = verdict
    return labels


def _list(value: object) -> list[object]:
    return value if isinstance(value, list) else []


def _load(path: Path) -> object:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        # A broken report is no label at all; the run itself is still read.
        return None
