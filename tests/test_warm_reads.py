"""Issue 23: a fresh server asks recall itself before it says ready, so its first callers
find recall's reads planned and compiled; reads only, and within the start-up's bound."""

from __future__ import annotations

import itertools
import random
import time
from dataclasses import replace
from typing import Any

import pytest

from metisgraph.graph import NOT_REVIEWING, RecallFilters, digest_project, warm_reads
from metisgraph.graph.store import GraphStore

# A fresh start's warm-up plans every shape of question, planContext's and the errors
# pages' reads: tens of seconds of a test server's planning (`make test-long`).
pytestmark = pytest.mark.long

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


async def _largest_project(store: Any) -> str:
    """The project the warm-up asks about: the one with the most episodes."""
    rows = await store.run_text(
        "MATCH (p:Project) RETURN p.name AS name "
        "ORDER BY COUNT { (:Episode {project: p.name}) } DESC LIMIT 1",
        read=True,
    )
    return str(rows[0]["name"])


@pytest.mark.slow(12)
@pytest.mark.anyio
async def test_warm_reads_ask_recall_of_stored_episodes_and_write_nothing(
    store: Any, project: str
) -> None:
    await _stored(store, project, 40, "the worker ran out of memory ", _vector())
    done = await warm_reads(store, 0.0)
    assert done.questions == 0  # no budget, no question
    largest = await _largest_project(store)
    before = await digest_project(store, largest)
    done = await warm_reads(store, 1.5)
    assert done.questions >= 1 and done.project == largest
    assert done.seconds < 1.5 + 60.0  # the question under way when the budget ran out ends
    assert await digest_project(store, largest) == before


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


@pytest.mark.slow(25)
@pytest.mark.anyio
async def test_a_fresh_server_asks_plan_context_before_ready_and_a_plan_meets_its_reads(
    app_settings: Any, embedder: Any, store: Any, project: str
) -> None:
    """planContext's own reads (the snippet search's, the question's preparation with an
    error and an environment) are asked at start-up after recall's, reads only: a plan
    asked after it sends no statement the warm-up did not. (A fixed abstention threshold:
    a project's gate is read once a process, and a warm-up keeps none.)"""
    from metisgraph.api.graphql.plan_service import PlanRequest, plan_context, warm_plans
    from metisgraph.api.services import prepare_services
    from metisgraph.graph import MEMORY_TYPES
    from metisgraph.ingest import EnvironmentInput

    await _stored(store, project, 8, "the nightly export timed out ", _vector())
    largest = await _largest_project(store)
    before = await digest_project(store, largest)
    settings = app_settings.model_copy(deep=True)
    settings.api.warm_up_reads_s = 4.0
    services = prepare_services(settings, embedder)
    services.warm_plans = warm_plans  # as the HTTP app sets it
    services.store = recording = _Recording(services.store)
    try:
        await services.warm_up()
        assert services.readiness.timings["warm_plans_s"] > 0, services.readiness.timings
        assert await digest_project(store, largest) == before
        warm = set(recording.seen)
        trace = 'Traceback (most recent call last):\n  File "export.py", line 9\nTimeoutError'
        environment = EnvironmentInput(os="linux", runtime="python", runtime_version="3.12")
        everything = RecallFilters(memory_types=MEMORY_TYPES)  # planContext's default
        for error, stated, filters in (
            (None, None, everything),
            (trace, environment, replace(everything, review=NOT_REVIEWING)),
        ):
            recording.seen.clear()
            req = PlanRequest(
                project=project,
                goal="make the nightly export finish in time",
                description="it runs past six" if error else None,
                error=error,
                environment=stated,
                require_verified=stated is not None,
                filters=filters,
                abstain_below=0.0,
            )
            planned = await plan_context(services, req)
            assert planned.recall.hits or planned.considered is not None
            assert recording.seen and recording.seen <= warm, recording.seen - warm
    finally:
        await services.close()


def _group(size: int) -> int:
    """The group Neo4j counts a list parameter's size in for its plan cache (1, 2-10,
    11-100, 101-1,000, ...): probed on the server (docs/benchmarks.md, issue 23)."""
    return 0 if size <= 1 else len(str(size - 1))


class _Recording(GraphStore):
    """A GraphStore that keeps the text of every query it runs (``seen``) and, beside it,
    the size group of each of its list parameters (``planned``): what Neo4j plans anew."""

    def __init__(self, store: GraphStore) -> None:
        super().__init__(store.driver, store.database)
        self.seen: set[str] = set()
        self.planned: set[tuple[str, tuple[tuple[str, int], ...]]] = set()

    async def run_text(
        self, text: str, params: dict[str, Any] | None = None, *, read: bool = False
    ) -> list[dict[str, Any]]:
        self.seen.add(text)
        sizes = tuple(
            sorted((k, _group(len(v))) for k, v in (params or {}).items() if isinstance(v, list))
        )
        self.planned.add((text, sizes))
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


@pytest.mark.anyio
async def test_a_short_question_that_selects_no_steps_meets_plans_the_warm_up_made(
    store: Any, project: str
) -> None:
    """A GraphQL recall that selects neither `previous`/`next` nor `conflicts` (or one of them),
    and every planContext, asks the shortlist's read without them; a question of one line has
    no title vector; a caller who may not review the project asks with the review filter: each
    is another query text. The warm-up asks them all (whether or not the store's episodes have
    title vectors), so a fresh server's first short question is not the one that plans them."""
    from metisgraph.graph.recall import recall
    from metisgraph.graph.recall_request import QuestionVectors, RecallRequest

    vector = _vector()
    await _stored(store, project, 5, "the nightly export timed out ", vector)  # no titles
    warm = _Recording(store)
    await warm_reads(warm, 0.01)
    callers = (RecallFilters(), RecallFilters(review=NOT_REVIEWING))  # may review, or not
    # a title: a question of several lines; an error vector: a question with an error
    for steps, conflicts, title, error, filters in itertools.product(
        (False, True), (False, True), (None, vector), (None, vector), callers
    ):
        asked = _Recording(store)
        question = RecallRequest(
            projects=(project,),
            text="the nightly export timed out again",
            error_keys=("python:TimeoutError:<*>",) if error else (),
            filters=filters,
            steps=steps,
            conflicts=conflicts,
        )
        outcome = await recall(asked, question, QuestionVectors(vector, title=title, error=error))
        assert outcome.hits
        assert asked.seen and asked.seen <= warm.seen, (steps, conflicts, title, error, filters)


@pytest.mark.anyio
async def test_a_long_trace_meets_plans_the_warm_up_made_whatever_its_lists_sizes(
    store: Any, project: str
) -> None:
    """Neo4j plans a query again for each new size group of a list parameter (~0.3-0.5 s
    for recall's channels): a pasted trace's 3 symbols, 150 words, 2 error keys and 12
    tools are sent in groups the warm-up planned, and answered as without the filling."""
    from metisgraph.graph.recall import recall
    from metisgraph.graph.recall_request import QuestionVectors, RecallRequest

    vector = _vector()
    await _stored(store, project, 5, "KeyError in load_orders ", vector)
    warm = _Recording(store)
    await warm_reads(warm, 0.01)
    words = ("region", *(f"word{i}" for i in range(149)))
    trace = RecallRequest(
        projects=(project,),
        text="Traceback: KeyError 'region' in load_orders.py, line 12, in build_totals",
        error_keys=("python:KeyError:<*>", "python:ValueError:<*>"),
        symbols=("build_totals", "load_orders", "main"),
        words=words,
        tools=tuple(f"tool{i}" for i in range(12)),
    )
    asked = _Recording(store)
    outcome = await recall(asked, trace, QuestionVectors(vector, error=vector))
    assert outcome.hits
    # the channels' unions (the expansion's lists follow the hits found, not the question)
    channel_reads = {p for p in asked.planned if "AS channel" in p[0]}
    assert len(channel_reads) >= 2  # the lexical union and the dense one
    assert channel_reads <= warm.planned, channel_reads - warm.planned


@pytest.mark.anyio
async def test_the_filled_name_lists_find_what_the_names_alone_find(
    store: Any, project: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The filling matches nothing and counts for nothing: the graph channels' candidates
    and scores are those of the question's own names."""
    from metisgraph.graph import channels
    from metisgraph.graph.recall_request import RecallRequest

    await _stored(store, project, 3, "KeyError in load_orders ", _vector())
    await store.run_text(
        "MATCH (e:Episode {project: $project}) "
        "SET e.symbols = ['load_orders'], e.symbol_weights = [1.0] "
        "MERGE (s:Symbol {project: $project, name: 'load_orders'}) MERGE (e)-[:MENTIONS]->(s) "
        "MERGE (g:Tag {project: $project, name: 'region', value: 'region'}) "
        "MERGE (e)-[:TAGGED]->(g) "
        "MERGE (t:Tool {project: $project, name: 'python3'}) MERGE (e)-[:USED_TOOL]->(t)",
        {"project": project},
    )
    req = RecallRequest(
        projects=(project,),
        text="KeyError in load_orders",
        symbols=("load_orders", "build_totals"),
        words=("region",),
        tools=("python3",),
    )
    filled = await channels.lexical_channels(store, req)
    monkeypatch.setattr(channels, "LIST_GROUP", 0)
    alone = await channels.lexical_channels(store, req)
    for name in ("symbols", "tags", "tools"):
        assert filled.candidates[name], name  # each channel found the episodes
        assert filled.candidates[name] == alone.candidates[name], name


class _Typed(GraphStore):
    """A GraphStore that keeps each query's text with its parameters' types (a list's by
    its size group): what Neo4j's plan cache tells apart, so what it plans anew."""

    def __init__(self, store: GraphStore) -> None:
        super().__init__(store.driver, store.database)
        self.planned: set[tuple[str, tuple[tuple[str, str], ...]]] = set()

    async def run_text(
        self, text: str, params: dict[str, Any] | None = None, *, read: bool = False
    ) -> list[dict[str, Any]]:
        kinds = tuple(
            sorted(
                (k, f"list/{_group(len(v))}" if isinstance(v, list) else type(v).__name__)
                for k, v in (params or {}).items()
            )
        )
        self.planned.add((text, kinds))
        return await super().run_text(text, params, read=read)


@pytest.mark.anyio
async def test_a_fresh_server_asks_the_errors_pages_and_the_pages_after_them_before_ready(
    app_settings: Any, embedder: Any, store: Any, project: str
) -> None:
    """A next page of the errors list sends its cursor as a map where a first page sends
    null: Neo4j plans the statement again for it, on a caller's first use (300–400 ms at
    100k). After the warm-up, a caller's first and next pages, in every order, send
    nothing the warm-up did not plan."""
    from metisgraph.api.services import prepare_services
    from metisgraph.graph.explore import ErrorOrder, error_page

    await _stored(store, project, 3, "the nightly export timed out ", _vector())
    await store.run_text(
        """UNWIND range(1, 3) AS n
           CREATE (:Error {project: $p, key: 'warm-' + n, kind: 'E', template: 't',
                           sightings: n, last_sighting: datetime()})""",
        {"p": project},
    )
    settings = app_settings.model_copy(deep=True)
    settings.api.warm_up_reads_s = 2.0
    services = prepare_services(settings, embedder)
    services.store = typed = _Typed(services.store)
    try:
        await services.warm_up()
        assert services.readiness.timings["warm_pages_s"] > 0, services.readiness.timings
        warm = set(typed.planned)
        typed.planned.clear()
        for order in ErrorOrder:
            first = await error_page(typed, [project], order, first=2)
            assert first.rows and first.end_cursor is not None
            await error_page(typed, [project], order, first=2, after=first.end_cursor)
        assert typed.planned and typed.planned <= warm, typed.planned - warm
    finally:
        await services.close()
