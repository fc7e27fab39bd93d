"""What a process read of each project, kept a while: one map a store.

Recall reads a few things of each project asked that change rarely and cost a statement:
its abstention gate (graph/abstention.py), its own ranker (graph/project_ranker.py), its
clock for the warm tier (graph/decay.py). Each is kept here per store (a store dropped takes
its reads with it) and per project, with the instant it was read; a reader says how old a
read it accepts.
"""

from __future__ import annotations

import time
import weakref
from collections.abc import Iterable
from typing import Generic, TypeVar

from metisgraph.graph.store import GraphStore

__all__ = ["ProjectCache"]

V = TypeVar("V")


class ProjectCache(Generic[V]):
    """Values read of projects, per store, each with when it was read; at most ``limit``
    projects a store (all forgotten past that: a caller naming projects at random cannot
    grow it without bound)."""

    def __init__(self, limit: int = 10_000) -> None:
        self.limit = limit
        self._stores: weakref.WeakKeyDictionary[GraphStore, dict[str, tuple[float, V]]] = (
            weakref.WeakKeyDictionary()
        )

    def _of(self, store: GraphStore) -> dict[str, tuple[float, V]]:
        found = self._stores.get(store)
        if found is None:
            found = self._stores[store] = {}
        return found

    def stale(self, store: GraphStore, projects: Iterable[str], within: float) -> list[str]:
        """The projects (each once, in order) not read in the last ``within`` seconds."""
        kept, now = self._of(store), time.monotonic()
        return [p for p in dict.fromkeys(projects) if p not in kept or now - kept[p][0] >= within]

    def fresh(self, store: GraphStore, project: str, within: float) -> V | None:
        """The project's value if read in the last ``within`` seconds, else None."""
        found = self._of(store).get(project)
        return found[1] if found and time.monotonic() - found[0] < within else None

    def put(self, store: GraphStore, project: str, value: V) -> None:
        kept = self._of(store)
        if project not in kept and len(kept) >= self.limit:
            kept.clear()
        kept[project] = (time.monotonic(), value)

    def kept(self, store: GraphStore, projects: Iterable[str]) -> dict[str, V]:
        """The values kept of those projects, however old."""
        kept = self._of(store)
        return {p: kept[p][1] for p in dict.fromkeys(projects) if p in kept}

    def drop(self, store: GraphStore, project: str) -> None:
        self._of(store).pop(project, None)
