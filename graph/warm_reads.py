"""Recall's reads replayed at start-up, so a fresh server answers its first questions warm.

A restarted Neo4j plans each query anew and its JIT compiles the read path only after
thousands of queries: the first minutes of questions were slow (issue 23). Before the
service says it is ready it asks recall itself, for a bounded time, with questions made of
stored episodes (their own vector as the question's vector, their summary as its words):
every channel's query, the one vector search, the expansion — the reads a question makes,
planned and compiled before the first caller's. Reads only; nothing is written.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass

from metisgraph.graph.recall import recall
from metisgraph.graph.recall_request import QuestionVectors, RecallRequest
from metisgraph.graph.store import GraphStore

__all__ = ["WarmReads", "warm_reads"]

log = logging.getLogger("metisgraph.warm")

_SAMPLE = 64  # stored episodes asked about, in turn


@dataclass
class WarmReads:
    questions: int = 0
    seconds: float = 0.0
    project: str | None = None


async def warm_reads(store: GraphStore, budget_s: float, *, k: int = 5) -> WarmReads:
    """Ask recall questions made of stored episodes until ``budget_s`` has passed — at least
    one (nothing when the store holds no episode with a vector, or the budget is 0). A
    failing read ends the warm-up early; it never fails the start."""
    done = WarmReads()
    if budget_s <= 0:
        return done
    started = time.monotonic()
    try:
        rows = await store.run("warm_up_episodes", limit=_SAMPLE)
        # At least one question when there are episodes: finding them may take the whole
        # budget on a store of many projects, and a warm-up that asks nothing warms nothing.
        while rows and (not done.questions or time.monotonic() - started < budget_s):
            for row in rows:
                if done.questions and time.monotonic() - started >= budget_s:
                    break
                req = RecallRequest(projects=(row["project"],), text=row["text"], k=k)
                vectors = QuestionVectors(row["vector"], title=row["title"])
                await recall(store, req, vectors)
                done.questions += 1
            done.project = rows[0]["project"]
    except Exception as error:  # a warm-up read failing must not stop start-up
        log.warning("warm-up reads stopped: %s", type(error).__name__)
    done.seconds = time.monotonic() - started
    return done
