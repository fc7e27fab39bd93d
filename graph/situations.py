"""Memories of the same situation: opposite outcomes contradict, a newer fix supersedes.

Written at ingest for the episodes of each batch (in its transaction), and by maintenance
for the episodes whose situations are not written for what they are now: relating stamps an
episode ``situated`` with its content hash, outcome and recallability, and what changes its
situation otherwise (a RESOLVED link, code across the bridge) clears the stamp. The rules
are in cypher/situations.cypher.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from metisgraph.graph.store import GraphStore

__all__ = ["PER_ERROR", "relate_situations", "situation_step"]

Row = dict[str, Any]
# Others compared per error an episode hit: the most recent ones of other tasks. An error
# thousands of episodes share (an assertion failure) would otherwise make every write
# compare them all; they are read newest first by an index on the sightings, so choosing
# them costs a seek and these rows, not the error's sightings.
PER_ERROR = 50
_PAGE = 200


def situation_step(keys: Sequence[Row]) -> list[tuple[str, Row]]:
    """The write step that relates these episodes ({project, id}) to their situations."""
    if not keys:
        return []
    return [("relate_situations", {"keys": list(keys), "per_error": PER_ERROR})]


async def relate_situations(
    store: GraphStore, project: str, ids: Sequence[str] | None = None
) -> int:
    """Write CONTRADICTS and SUPERSEDES for these episodes of the project (None: every
    episode that hit an error and ended one way or the other), a page at a time.
    Returns how many pairs were compared; running it again changes nothing."""
    compared = 0
    async for page in _pages(store, project, ids):
        keys = [{"project": project, "id": i} for i in page]
        for step, params in situation_step(keys):
            rows = await store.run(step, **params)
            compared += sum(int(r["compared"]) for r in rows)
    return compared


async def _pages(store: GraphStore, project: str, ids: Sequence[str] | None) -> Any:
    if ids is not None:
        for start in range(0, len(ids), _PAGE):
            yield list(ids[start : start + _PAGE])
        return
    after = ""
    while rows := await store.run("situation_episodes", project=project, after=after, limit=_PAGE):
        yield [r["id"] for r in rows]
        after = rows[-1]["id"]
