"""Evaluation harness reports (SWE-bench and its clients): verdicts on a run's instances.

Recognised by shape, like the trajectory formats:

* a run's summary: ``instances[{instance_id, resolved}]`` (mini-swe-agent's
  ``results_summary.json``) or ``resolved_ids`` / ``unresolved_ids`` (sb-cli, the harness's
  own run report);
* one instance's report: ``{"resolved": …, "tests_status": …}`` (the instance named by the
  file, ``<id>.report.json``, or its folder, ``logs/<id>/report.json``), or the same under
  ``{"<id>": {…}}``;
* lists of ids by status (harness_lists.py): SWE-agent's ``results.json`` (``resolved`` as a
  list, ``unresolved_ids``, ``completed_ids``, ``empty_patch_ids`` …) and the SWE-bench
  experiments' per-run ``results.json`` (``resolved``, ``applied``, ``no_generation``,
  ``no_apply`` …). A task two lists contradict, or no list judges, stays unknown: its
  refusal says why. A report published with a trailing comma is read, with one warning.

Every verdict keeps the report it was read from (``source``: the path from the run's folder).

Each verdict names its run: the folder that holds the run's ``trajs/``, ``eval/``,
``results/`` or ``logs/`` (``run_name``), which is also the run a trajectory read from the
same folder records. Verdicts are matched to tasks by run and instance, whichever is read
first.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from metisgraph.ingest.adapters.base import Parsed, Refused, SourceRef, refuse, validate_record
from metisgraph.ingest.adapters.harness_lists import judged_by_lists, names_lists
from metisgraph.ingest.adapters.jsonfile import load_json_leniently
from metisgraph.ingest.adapters.layout import run_folder, run_name
from metisgraph.ingest.adapters.run import derive_project

__all__ = ["is_harness_report", "read_harness_report"]

_SUFFIX = ".report.json"


def is_harness_report(value: object) -> bool:
    """Whether a decoded JSON document has the shape of a harness report."""
    if not isinstance(value, Mapping):
        return False
    if isinstance(value.get("instances"), list) and "total" in value:
        return True
    if names_lists(value):
        return True
    return _instance_report(value) is not None or (
        len(value) == 1 and _instance_report(next(iter(value.values()))) is not None
    )


def _instance_report(value: object) -> Mapping[str, Any] | None:
    if not isinstance(value, Mapping) or not isinstance(value.get("resolved"), bool):
        return None
    return value if "tests_status" in value or "patch_successfully_applied" in value else None


def read_harness_report(path: Path, project: str | None = None) -> Iterator[Parsed | Refused]:
    """One verdict record per instance the report judges."""
    loaded = load_json_leniently(path)
    if isinstance(loaded, Refused):
        yield loaded
        return
    value = loaded.value
    ref = loaded.ref
    run = run_name(path)
    source = _source(path)
    found = list(_verdicts(value, path))
    undecided = list(judged_by_lists(value, ref)[1]) if isinstance(value, Mapping) else []
    if not found and not undecided:
        yield refuse(ref, None, "", "a harness report that judges no instance")
        return
    for pointer, instance, resolved, tests, harness in found:
        raw = {
            "record_type": "verdict",
            "project": derive_project(project, instance, None, run),
            "run": run,
            "instance": instance,
            "resolved": resolved,
            "tests": tests,
            "harness": harness,
            "source": source,
        }
        yield validate_record(raw, ref.at(pointer))
    yield from undecided


Verdict = tuple[str, str, bool, dict[str, dict[str, list[str]]], str]


def _verdicts(value: Any, path: Path) -> Iterator[Verdict]:
    if not isinstance(value, Mapping):
        return
    for n, item in enumerate(value.get("instances") or []):
        if isinstance(item, Mapping) and isinstance(item.get("resolved"), bool):
            yield f"instances[{n}]", str(item.get("instance_id")), item["resolved"], {}, "summary"
    judged, _ = judged_by_lists(value, SourceRef(str(path)))
    for pointer, listed, resolved, harness in judged:
        yield pointer, listed, resolved, {}, harness
    report = _instance_report(value)
    if report is not None:
        instance = path.name.removesuffix(_SUFFIX) if path.name.endswith(_SUFFIX) else None
        yield "", instance or path.parent.name, report["resolved"], _tests(report), "instance"
    elif len(value) == 1:
        instance, inner = next(iter(value.items()))
        report = _instance_report(inner)
        if report is not None:
            yield instance, str(instance), report["resolved"], _tests(report), "instance"


def _source(path: Path) -> str:
    """The report's path from its run's folder (``agent-a/results.json``): where the verdict
    came from, without the machine's own folders above it."""
    resolved = path.resolve()
    folder = run_folder(path)
    try:
        return str(resolved.relative_to(folder.parent))
    except ValueError:
        return path.name


def _tests(report: Mapping[str, Any]) -> dict[str, dict[str, list[str]]]:
    status = report.get("tests_status")
    if not isinstance(status, Mapping):
        return {}
    out: dict[str, dict[str, list[str]]] = {}
    for group, results in status.items():
        if isinstance(results, Mapping):
            out[str(group)] = {
                str(k): [str(t) for t in v] for k, v in results.items() if isinstance(v, list)
            }
    return out
