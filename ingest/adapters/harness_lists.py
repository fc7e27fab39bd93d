"""Harness reports that list instance ids by status, recognised by their keys, not their name.

Two families are published: the harness's run report and its clients' (sb-cli; SWE-agent's
``results.json`` beside ``trajs/``: ``resolved`` or ``resolved_ids``, ``unresolved_ids``,
``completed_ids``, ``empty_patch_ids``, ``error_ids`` …), and the SWE-bench experiments'
per-run ``results.json`` (``resolved``, ``applied``, ``generated``, ``with_logs``,
``no_generation``, ``no_apply``, ``install_fail``, ``test_errored`` …). A list says one of
four things about the ids it names:

* resolved — the harness resolved it;
* unresolved — it did not (or the agent's patch was empty, not generated, did not apply);
* evaluated — its tests ran, so not being resolved means unresolved (in a report that has
  no unresolved list of its own);
* not judged — the harness failed on it (an error, a timeout, an install that failed).

A task in a resolved list and a list that says otherwise is contradictory, and a task only
in not-judged or neutral lists (``submitted_ids``, ``generated``) is judged by none: both
stay unknown, each with a refusal that names the lists (a warning, not a verdict).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from metisgraph.ingest.adapters.base import Refused, SourceRef, refuse

__all__ = ["judged_by_lists", "names_lists"]

RESOLVED = ("resolved", "resolved_ids")
UNRESOLVED = ("unresolved", "unresolved_ids", "empty_patch_ids", "no_generation", "no_apply")
EVALUATED = ("completed_ids", "applied", "with_logs")
NOT_JUDGED = (
    "error_ids",
    "incomplete_ids",
    "install_fail",
    "reset_failed",
    "test_errored",
    "test_timeout",
)
NEUTRAL = ("submitted_ids", "generated")
_ALL = RESOLVED + UNRESOLVED + EVALUATED + NOT_JUDGED + NEUTRAL

Judged = tuple[str, str, bool, str]  # pointer, instance, resolved, harness


def _ids(value: object) -> list[str] | None:
    if not isinstance(value, list) or not all(isinstance(v, str | int) for v in value):
        return None
    return [str(v) for v in value]


def names_lists(value: Mapping[str, Any]) -> bool:
    """Whether a document lists ids by status: a resolved or unresolved list of ids, beside
    only lists of ids under the names above (and counts)."""
    verdict_lists = [k for k in RESOLVED + UNRESOLVED if _ids(value.get(k)) is not None]
    return bool(verdict_lists) and not isinstance(value.get("resolved"), bool)


def judged_by_lists(value: Mapping[str, Any], ref: SourceRef) -> tuple[list[Judged], list[Refused]]:
    """The verdicts the lists give, and a refusal for each task they leave unknown."""
    if not names_lists(value):
        return [], []
    harness = "run-report" if any(k.endswith("_ids") for k in value) else "status-lists"
    seen: dict[str, list[tuple[str, str]]] = {}  # instance -> [(list, pointer)]
    for key in _ALL:
        for n, instance in enumerate(_ids(value.get(key)) or []):
            seen.setdefault(instance, []).append((key, f"{key}[{n}]"))
    # Where the report lists the unresolved itself, a task it evaluated but left out of both
    # lists is not judged; where it lists only what was resolved (the experiments' reports),
    # evaluated and not resolved is unresolved.
    says_unresolved = any(_ids(value.get(k)) is not None for k in ("unresolved", "unresolved_ids"))
    judged: list[Judged] = []
    unknown: list[Refused] = []
    for instance, places in seen.items():
        lists = {key for key, _ in places}
        pointer = places[0][1]
        resolved = lists & set(RESOLVED)
        against = lists & set(UNRESOLVED + NOT_JUDGED)
        if resolved and against:
            reason = (
                f"instance {instance!r} is in {', '.join(sorted(resolved))} and in "
                f"{', '.join(sorted(against))}: contradictory, left unknown"
            )
            unknown.append(refuse(ref.at(pointer), {"instance": instance}, "resolved", reason))
        elif resolved:
            judged.append((pointer, instance, True, harness))
        elif lists & set(UNRESOLVED) or (
            lists & set(EVALUATED) and not lists & set(NOT_JUDGED) and not says_unresolved
        ):
            judged.append((pointer, instance, False, harness))
        else:
            reason = (
                f"instance {instance!r} is only in {', '.join(sorted(lists))}: no list of the "
                "report judges it, left unknown"
            )
            unknown.append(refuse(ref.at(pointer), {"instance": instance}, "resolved", reason))
    return judged, unknown
