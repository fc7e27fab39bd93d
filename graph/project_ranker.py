"""A project's own learned ranker: installed on the project by `eval train-ranker` (only when
it beat the shipped one on the project's held-out questions), read by recall's ``learned``
ranker in its place.

Kept as the weights file's JSON text on the Project node (``ranker``, ``ranker_version``,
``ranker_installed_at``; cypher/rankers.cypher). Recall reads it while the question embeds
(api/graphql/recall_service.py), from this process's cache when read within a minute, so
the ``learned`` preset has no sequential round trip of its own; ``hand`` never reads it.
"""

from __future__ import annotations

import json
from collections.abc import Iterable

from metisgraph.graph.project_cache import ProjectCache
from metisgraph.graph.ranker import LinearRanker, RankerFileError
from metisgraph.graph.store import GraphStore

__all__ = ["CACHE_S", "install_ranker", "project_rankers"]

CACHE_S = 60.0  # how long a process trusts what it read of a project's ranker

_READ: ProjectCache[LinearRanker | None] = ProjectCache()  # None: the project has none


async def install_ranker(store: GraphStore, project: str, ranker: LinearRanker | None) -> bool:
    """Keep ``ranker`` as the project's own (None: remove it); False when there is no such
    project."""
    text = None if ranker is None else json.dumps(ranker.as_json())
    version = None if ranker is None else ranker.version
    rows = await store.run("install_ranker", project=project, ranker=text, version=version)
    _READ.drop(store, project)
    return bool(rows)


async def project_rankers(
    store: GraphStore, projects: Iterable[str], cache_s: float = CACHE_S
) -> dict[str, LinearRanker]:
    """Each project's installed ranker (projects without one are left out)."""
    wanted = list(dict.fromkeys(projects))
    missing = _READ.stale(store, wanted, cache_s)
    if missing:
        for row in await store.run("project_rankers", projects=missing):
            _READ.put(store, row["project"], _parsed(row["project"], row.get("ranker")))
    return {p: r for p, r in _READ.kept(store, wanted).items() if r is not None}


def _parsed(project: str, text: object) -> LinearRanker | None:
    """The stored ranker; an unreadable one is ignored (recall falls back to the shipped)."""
    if not isinstance(text, str):
        return None
    try:
        return LinearRanker.from_json(json.loads(text), f"project {project!r} ranker")
    except (ValueError, RankerFileError):
        return None
