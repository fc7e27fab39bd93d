"""Episodes as task chains, and the errors met in them with the order they came in."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime

from metisgraph.graph.analytics.model import ErrorStat
from metisgraph.graph.analytics.pull import EpisodeFacts, Pulled

__all__ = ["TaskErrors", "error_stats", "task_chains", "task_errors"]

_LAST = 2**31
_EARLIEST = datetime.min.replace(tzinfo=UTC)


def _order(e: EpisodeFacts) -> tuple[int, datetime, str]:
    return (_LAST if e.step is None else e.step, e.at or _EARLIEST, e.id)


def task_chains(episodes: Iterable[EpisodeFacts]) -> dict[tuple[str, str], list[EpisodeFacts]]:
    """Each task's episodes (of those measured) in chain order."""
    chains: dict[tuple[str, str], list[EpisodeFacts]] = defaultdict(list)
    for e in episodes:
        if e.task:
            chains[(e.project, e.task)].append(e)
    return {k: sorted(v, key=_order) for k, v in chains.items()}


@dataclass(frozen=True)
class TaskErrors:
    """The errors of one task by the position of their first sighting (ties share one)."""

    project: str
    task: str
    first: dict[str, int]  # error key -> position of its first sighting


def task_errors(chains: dict[tuple[str, str], list[EpisodeFacts]]) -> list[TaskErrors]:
    out = []
    for (project, task), chain in sorted(chains.items()):
        first: dict[str, int] = {}
        for position, e in enumerate(chain):
            for key in e.errors:
                first.setdefault(key, position)
        if first:
            out.append(TaskErrors(project, task, first))
    return out


def error_stats(pulled: Pulled) -> dict[str, ErrorStat]:
    """Every error met (by key, across projects) with its sightings and tasks."""
    sightings: dict[str, int] = defaultdict(int)
    tasks: dict[str, set[tuple[str, str]]] = defaultdict(set)
    projects: dict[str, set[str]] = defaultdict(set)
    for e in pulled.episodes:
        for key in set(e.errors):
            sightings[key] += 1
            projects[key].add(e.project)
            if e.task:
                tasks[key].add((e.project, e.task))
    named = {key: facts for (_, key), facts in sorted(pulled.errors.items())}
    return {
        key: ErrorStat(
            key=key,
            kind=named[key].kind if key in named else None,
            signature=named[key].signature if key in named else None,
            template=named[key].template if key in named else None,
            projects=tuple(sorted(projects[key])),
            sightings=count,
            tasks=len(tasks[key]),
        )
        for key, count in sightings.items()
    }
