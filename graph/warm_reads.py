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
    RECALLABLE_REVIEW,
    QuestionVectors,
    RecallFilters,
    RecallRequest,
)
from metisgraph.graph.store import GraphStore

Row = dict[str, Any]
Shape = tuple[RecallRequest, QuestionVectors]

__all__ = ["NOT_REVIEWING", "WarmReads", "question_shapes", "warm_reads"]

log = logging.getLogger("metisgraph.warm")

_SAMPLE = 64  # stored episodes asked about, in turn
# Questions asked at once: one at a time left a core idle (the API waits on Neo4j, Neo4j on
# the API), and a fresh start warmed ~70-150 questions in its 20 s.
_LANES = 2
_TEXTS = 4  # kept for the caller's own warm-up (api/graphql/plan_service.warm_plans)


# What a question may hold that switches a channel on (graph/channel_registry.py: errors,
# symbols, tags/words, tools): each combination sends recall's channels as another query
# text, which Neo4j plans on its first use. Questions made of stored episodes hold none of
# them, so a pasted trace (errors, symbols, words, tools) found its combination unplanned:
# its first ask spent 150-350 ms more in the channels than its second (10k bench store).
# A list's size counts too, by group (graph/channels.py fills every name list to at least
# LIST_GROUP entries, so up to 100 names are one group): a long question's words (up to
# 200) are the one list that goes past it, so each shape with words is asked twice.
_SWITCHES = ("errors", "symbols", "words", "tools")
_NOTHING = "metisgraph-warm-up"  # matches no stored error, symbol, word or tool
_MANY_WORDS = 101  # the next group of a list's size


# More things switch a query's text. What a caller's document selects: a hit's
# neighbouring steps are read only when shown (`previous`/`next`), its conflicts only when
# selected — a GraphQL recall that selects neither, and every planContext, asks another
# expansion. A question of one line has no title vector: the dense channels' union has no
# title search. The warm-up asked only with both, so a fresh server's first short
# question planned the expansion and the dense union (~1.2 s on the 10k bench store, its
# first answer). A question is asked "full" (steps, conflicts, a title) or "bare" (none):
# the dense union's text changes with the title and the error vector only, the
# expansion's with the steps only, so the bare variant is needed for the plain question
# and the errors-only one (26 shapes; asking all 24 both ways took twice the time).
# And a caller who may not review the project never sees pending memories: every channel
# carries the review filter (api/graphql/context.py `recallable`) — the usual caller of a
# service with keys. Every shape is asked for both callers.
_BARE_WITH = frozenset({"errors"})
NOT_REVIEWING = tuple(s for s in RECALLABLE_REVIEW if s != "pending")  # what such a caller sees
_CALLERS = (RecallFilters(), RecallFilters(review=NOT_REVIEWING))


def question_shapes(
    row: Mapping[str, Any], k: int
) -> Iterator[tuple[RecallRequest, QuestionVectors]]:
    """One question (a stored episode's text and vectors) in every combination of the
    switches, each naming something no memory holds, with words also past the first size
    group, full, and bare where that changes a query (``_BARE_WITH``), for a caller who
    reviews and one who does not (``_CALLERS``): the channels' and
    the expansion's queries of each combination are planned, and the answers are those of
    the plain question."""
    for filters, mask in itertools.product(_CALLERS, range(1 << len(_SWITCHES))):
        on = {name for bit, name in enumerate(_SWITCHES) if mask >> bit & 1}
        thing = (_NOTHING,) if on else ()
        for words in (thing, (_NOTHING,) * _MANY_WORDS) if "words" in on else ((),):
            for full in (True, False) if on <= _BARE_WITH else (True,):
                req = RecallRequest(
                    projects=(row["project"],),
                    text=row["text"],
                    k=k,
                    error_keys=thing if "errors" in on else (),
                    symbols=thing if "symbols" in on else (),
                    words=words,
                    tools=thing if "tools" in on else (),
                    filters=filters,
                    steps=full,
                    conflicts=full,
                )
                yield req, _vectors(row, full, error="errors" in on)


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
        for req, vectors in shapes[lane::_LANES]:
            await recall(store, req, vectors)
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
            # Every shape of question first, whatever the budget (52 questions, a few
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
