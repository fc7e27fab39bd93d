"""Issue 23: a fresh server asks recall itself before it says ready, so its first callers
find recall's reads planned and compiled; reads only, and within the start-up's bound."""

from __future__ import annotations

import random
import time
from typing import Any

import pytest

from metisgraph.graph import digest_project, warm_reads
from metisgraph.graph.store import GraphStore

DIMENSIONS = 384


def _vector() -> list[float]:
    return [random.random() for _ in range(DIMENSIONS)]


async def _stored(store: Any, project: str, count: int, summary: str, vector: list[float]) -> None:
    """``count`` recallable episodes of ``project`` (summary + their number), each with its
    text vector, all ``vector``."""
    await store.run_text(
        "UNWIND range(1, $count) AS i "
        "CREATE (e:Episode {project: $project, id: 'w' + i, recallable: true, "
        "outcome: 'success', review_status: 'unreviewed', active_at: datetime(), "
        "summary: $summary + i, embedding: $vector}) "
        "CREATE (:EpisodeVector {project: $project, episode: e.id, of: 'text', "
        "embedding: $vector}) "
        "MERGE (:Project {name: $project})",
        {"project": project, "count": count, "summary": summary, "vector": vector},
    )


@pytest.mark.slow(12)
@pytest.mark.anyio
async def test_warm_reads_ask_recall_of_stored_episodes_and_write_nothing(
    store: Any, project: str
) -> None:
    await _stored(store, project, 40, "the worker ran out of memory ", _vector())
    done = await warm_reads(store, 0.0)
    assert done.questions == 0  # no budget, no question
    largest = await store.run_text(
        "MATCH (p:Project) RETURN p.name AS name "
        "ORDER BY COUNT { (:Episode {project: p.name}) } DESC LIMIT 1",
        read=True,
    )
    before = await digest_project(store, largest[0]["name"])
    done = await warm_reads(store, 1.5)
    assert done.questions >= 1 and done.project == largest[0]["name"]
    assert done.seconds < 1.5 + 60.0  # the question under way when the budget ran out ends
    assert await digest_project(store, largest[0]["name"]) == before


@pytest.mark.slow
def test_a_fresh_server_is_ready_after_its_warm_up_reads(app_settings: Any, embedder: Any) -> None:
    from starlette.testclient import TestClient

    from metisgraph.api.http.app import create_app

    settings = app_settings.model_copy(deep=True)
    settings.api.warm_up_reads_s = 1.0
    started = time.monotonic()
    with TestClient(create_app(settings, embedder=embedder), base_url="http://127.0.0.1") as c:
        while not (body := c.get("/readyz").json())["ready"]:
            assert time.monotonic() - started < 120, body
            time.sleep(0.1)
    assert 0 < body["startup_s"]["warm_reads_s"] < 10, body


@pytest.mark.anyio
async def test_a_command_opens_its_services_without_warm_up_reads(
    app_settings: Any, store: Any, project: str
) -> None:
    """Warm-up reads are for a server's later callers: a one-shot command (ingest, eval,
    lineage) has none, and asking recall for 20 s first only made every command slower."""
    from metisgraph.api.services import open_services

    await store.run_text(
        "CREATE (e:Episode {project: $project, id: 'c1', recallable: true, outcome: 'success', "
        "review_status: 'unreviewed', active_at: datetime(), summary: 'a command ran', "
        "embedding: $vector}) MERGE (:Project {name: $project})",
        {"project": project, "vector": _vector()},
    )
    settings = app_settings.model_copy(deep=True)
    settings.api.warm_up_reads_s = 30.0
    async with open_services(settings) as services:
        assert services.readiness.timings["warm_reads_s"] == 0.0
        assert services.readiness.schema


class _Recording(GraphStore):
    """A GraphStore that keeps the text of every query it runs (``seen``)."""

    def __init__(self, store: GraphStore) -> None:
        super().__init__(store.driver, store.database)
        self.seen: set[str] = set()

    async def run_text(
        self, text: str, params: dict[str, Any] | None = None, *, read: bool = False
    ) -> list[dict[str, Any]]:
        self.seen.add(text)
        return await super().run_text(text, params, read=read)


@pytest.mark.anyio
async def test_warm_up_plans_the_queries_of_a_pasted_trace_before_one_is_asked(
    store: Any, project: str
) -> None:
    """A question holding errors, symbols, words and tools (a pasted trace) sends recall's
    channels as another query text than a plain one: Neo4j plans it on its first use. The
    warm-up asks every such shape, so a trace's reads are all among those it ran."""
    from metisgraph.graph.recall import recall
    from metisgraph.graph.recall_request import QuestionVectors, RecallRequest

    vector = _vector()
    await _stored(store, project, 5, "KeyError in load_orders ", vector)
    warm = _Recording(store)
    done = await warm_reads(warm, 0.01)
    assert done.questions >= 1
    trace = RecallRequest(
        projects=(project,),
        text="Traceback: KeyError 'region' in load_orders.py, line 12, in build_totals",
        error_keys=("python:KeyError:<*>",),
        symbols=("build_totals", "load_orders"),
        words=("region",),
        tools=("python3",),
    )
    asked = _Recording(store)
    outcome = await recall(asked, trace, QuestionVectors(vector, error=vector))
    assert outcome.hits  # it was answered (the episodes above match its words)
    assert asked.seen and asked.seen <= warm.seen, asked.seen - warm.seen
