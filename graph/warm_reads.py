"""Recall's reads replayed at start-up, so a fresh server answers its first questions warm.

A restarted Neo4j plans each query anew and its JIT compiles the read path only after
thousands of queries: the first minutes of questions were slow (issue 23). Before the
service says it is ready it asks recall itself, for a bounded time, with questions made of
stored episodes (their own vector as the question's vector, their summary as its words):
every channel's query, the one vector search, the expansion — the reads a question makes,
planned and compiled before the first caller's. Reads only; nothing is written.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from metisgraph.graph.recall import recall
from metisgraph.graph.recall_request import (
    NOT_REVIEWING,
    EnvironmentQuery,
    QuestionVectors,
    RecallFilters,
    RecallRequest,
)
from metisgraph.graph.store import GraphStore

Row = dict[str, Any]
Shape = tuple[RecallRequest, QuestionVectors]

__all__ = ["WarmReads", "question_shapes", "warm_reads"]

log = logging.getLogger("metisgraph.warm")

_SAMPLE = 64  # stored episodes asked about, in turn
# Questions asked at once: one at a time left a core idle (the API waits on Neo4j, Neo4j on
# the API), and a fresh start warmed ~70-150 questions in its 20 s.
_LANES = 2
_TEXTS = 4  # kept for the caller's own warm-up (api/graphql/plan_service.warm_plans)


# What switches the text of the query a question sends, each combination planned by Neo4j
# on its first use (~0.2-0.5 s; the first ask of a pasted trace spent 150-350 ms more in the
# channels than its second, 10k bench store):
#  * the channels that need no vector (one union): the environment channel, asked only
#    when the caller states one; the words past the first size group of a list (channels.py
#    fills every name list to LIST_GROUP entries, so up to 100 names are one group; a long
#    question's words go past it). The other name channels (symbols, tags, tools) are asked
#    whatever the question names (channel_registry.py `nothing`): no switch.
#  * the vector channels (the other union): a title vector (a question of more than one
#    line) and an error vector (a question with an error) each add a search.
#  * both: the review filter of a caller who may not review the project (pending memories
#    left out; api/graphql/context.py `recallable`) — the usual caller of a service with
#    keys.
#  * the shortlist's read after the fusion (recall_shortlist): a hit's neighbouring steps,
#    read only when the document shows them (`previous`/`next`; a GraphQL recall that
#    selects neither, and every planContext), and how alike the hits are, only when the
#    caller looks for conflicts (a document that selects none; planContext does): four texts;
#    and an idle server's early expansion (`Early`), with its steps or without: asked here.
# Eight questions hold every text of each: for both callers, with an error (and an
# environment) or without, "full" (a title) or "bare" (none, and past the first size group
# of words); without an error, steps and conflicts both or neither, with one, one of them.
# Before the name channels were always asked, 52 shapes took ~22 s of a fresh JVM's
# planning; the warm-up had asked 24 and missed the bare ones, so a fresh server's first
# short question planned its expansion and union (~1.2 s).
_NOTHING = "metisgraph-warm-up"  # matches no stored error, symbol, word or tool
_MANY_WORDS = 101  # the next group of a list's size
_ENVIRONMENT = EnvironmentQuery(os="linux", runtime="python", runtime_version="3.11")
_CALLERS = (RecallFilters(), RecallFilters(review=NOT_REVIEWING))


def question_shapes(row: Mapping[str, Any], k: int) -> Iterator[Shape]:
    """One question (a stored episode's text and vectors) in each shape that sends another
    query text (see above), naming only things no memory holds: the channels' and the
    expansion's queries of each are planned, and the answers are those of the plain
    question."""
    for filters, error, full in itertools.product(_CALLERS, (False, True), (True, False)):
        req = RecallRequest(
            projects=(row["project"],),
            text=row["text"],
            k=k,
            error_keys=(_NOTHING,) if error else (),
            words=() if full else (_NOTHING,) * _MANY_WORDS,
            environment=_ENVIRONMENT if error else None,
            filters=filters,
            steps=full,
            conflicts=full != error,
        )
        yield req, _vectors(row, full, error=error)


def _vectors(row: Mapping[str, Any], full: bool, *, error: bool = False) -> QuestionVectors:
    """The stored episode's vectors as a question's: with a title (its own, else its text
    vector: a question of several lines has one) when ``full``, else without."""
    title = (row["title"] or row["vector"]) if full else None
    return QuestionVectors(row["vector"], title=title, error=row["vector"] if error else None)


@dataclass
class WarmReads:
    questions: int = 0
    seconds: float = 0.0
    project: str | None = None
    texts: tuple[str, ...] = ()  # the first stored episodes' texts it asked about


async def warm_reads(store: GraphStore, budget_s: float, *, k: int = 5) -> WarmReads:
    """Ask recall questions made of stored episodes until ``budget_s`` has passed — first
    one in every shape (``question_shapes``), then the sample in turn, ``_LANES`` at a
    time (nothing when the store holds no episode with a vector, or the budget is 0). A
    failing read ends the warm-up early; it never fails the start."""
    done = WarmReads()
    if budget_s <= 0:
        return done
    started = time.monotonic()

    async def lane(rows: list[Row], shapes: list[Shape], lane: int) -> None:
        for req, vectors in shapes[lane::_LANES]:  # the early expansion's text too
            await recall(store, req, vectors, speculate=True)
            done.questions += 1
        for n in itertools.count():
            if time.monotonic() - started >= budget_s:
                return
            row = rows[(lane + n * _LANES) % len(rows)]
            full = n % 2 == 0  # both variants and both callers, as they ask
            req = RecallRequest(
                projects=(row["project"],),
                text=row["text"],
                k=k,
                filters=_CALLERS[n // 2 % 2],
                steps=full,
                conflicts=full,
            )
            await recall(store, req, _vectors(row, full))
            done.questions += 1

    try:
        rows = await store.run("warm_up_episodes", limit=_SAMPLE)
        if rows:
            done.project = rows[0]["project"]
            done.texts = tuple(row["text"] for row in rows[:_TEXTS] if row["text"])
            # Every shape of question first, whatever the budget (8 questions, a few
            # seconds): each is a query of its own for Neo4j to plan. Finding the episodes
            # may take the whole budget on a store of many projects, and a warm-up that
            # asks nothing warms nothing.
            shapes = list(question_shapes(rows[0], k))
            # The project's abstention gate, read before a caller's first question (its
            # measuring, when stale, is a write: left to that caller).
            await store.run("abstention_gates", projects=[done.project])
            async with asyncio.TaskGroup() as lanes:
                for i in range(_LANES):
                    lanes.create_task(lane(rows, shapes, i))
    except Exception as error:  # a warm-up read failing must not stop start-up
        first = error.exceptions[0] if isinstance(error, ExceptionGroup) else error
        log.warning("warm-up reads stopped: %s", type(first).__name__)
    done.seconds = time.monotonic() - started
    return done
