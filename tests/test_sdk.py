"""metisgraph-client on the real service over HTTP (real Neo4j, real model): typed results,
idempotent writes, clear errors, retries, and the plan → execute → observe → memorize loop
with a scripted stand-in model and through the OpenAI-compatible adapter."""

from __future__ import annotations

import dataclasses
import json
import re
import subprocess
import sys
import time
import tomllib
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from metisgraph_client import (
    AsyncClient,
    AuthError,
    Client,
    NotReady,
    Observation,
    OpenAIChatModel,
    QueryError,
    RateLimited,
    Step,
    TransportError,
    Unavailable,
    run_task,
)
from metisgraph_client import _operations as ops

ROOT = Path(__file__).resolve().parents[1]
GOAL = "import the orders csv export into a pandas dataframe"
PLAIN = "python load.py orders.csv"
LATIN1 = "python load.py --encoding latin-1 orders.csv"
TRACE = (
    "Traceback (most recent call last):\n"
    '  File "/srv/etl/load.py", line 12, in load_orders\n'
    "UnicodeDecodeError: 'utf-8' codec can't decode byte 0xe9 in position 1042"
)
_BLOCK = re.compile(r"^(M\d+) \[(\w+)\][^\n]*\n((?:   [^\n]*\n?)*)", re.MULTILINE)


def scripted_model(prompt: str) -> str:
    """A stand-in model that acts only on what its prompt holds: it follows a success (or an
    error's fix) whose command it knows, avoids the commands of failures, and cites what it
    relied on."""
    memories = prompt.split("## Memories", 1)[1].split("## Rules", 1)[0]
    did = {label: ("success" if kind == "fix" else kind,
                   re.search(r"fixed by: `(.*?)`" if kind == "fix" else r"did: (.*)", body))
           for label, kind, body in _BLOCK.findall(memories)}  # fmt: skip
    done = {label: (kind, m.group(1).strip()) for label, (kind, m) in did.items() if m}
    for label, (kind, command) in done.items():
        if kind == "success" and command in (PLAIN, LATIN1):
            return _reply(command, f"M{label[1:]} worked before", [label])
    failed = [(label, command) for label, (kind, command) in done.items() if kind == "failure"]
    for command in (PLAIN, LATIN1):
        if command not in {c for _, c in failed}:
            cites = [label for label, c in failed]
            return _reply(command, "import the orders csv with pandas", cites)
    return _reply("give up", "nothing left to try", [])


def _reply(action: str, reasoning: str, cites: list[str]) -> str:
    return json.dumps({"action": action, "parameters": {}, "reasoning":
                       f"Import the orders csv export into pandas: {reasoning}",
                       "cites": cites})  # fmt: skip


def executor(step: Step) -> Observation:
    """The world of the task: the plain read fails on a latin-1 byte, the latin-1 read works."""
    if step.action == LATIN1:
        return Observation("12000 rows loaded", success=True, done=True)
    if step.action == PLAIN:
        return Observation("load.py crashed", success=False, error=TRACE)
    return Observation("unknown command", success=False, done=True)


@pytest.mark.slow
def test_the_loop_learns_from_its_first_run(api_url: str, project: str) -> None:
    with Client(api_url) as client:
        first = run_task(client, project, GOAL, model=scripted_model, executor=executor)
        second = run_task(client, project, GOAL, model=scripted_model, executor=executor)
        assert first.resolved and [s.step.action for s in first.steps] == [PLAIN, LATIN1]
        # The second step cited the first step's failure (to avoid it).
        assert first.steps[1].cited == [first.steps[0].episode_id]
        assert second.resolved and [s.step.action for s in second.steps] == [LATIN1]
        assert second.steps[0].cited == [first.steps[1].episode_id]
        # Outcome feedback went to every cited memory, and reads back from the graph.
        (feedback,) = second.feedback
        assert feedback.memory_id == first.steps[1].episode_id and feedback.successes >= 1
        hits = client.recall(project, GOAL, k=5).hits
        learned = next(h.episode for h in hits if h.episode.id == first.steps[1].episode_id)
        assert learned.uses == 1 and learned.successes == 1
        # The failed first step comes with what fixed its error (lineage's evidence), typed.
        failed = next(h for h in hits if h.episode.id == first.steps[0].episode_id)
        assert [f.action for f in failed.fixed_by][:1] == [LATIN1], failed.fixed_by
        assert failed.fixed_by[0].episode == first.steps[1].episode_id
        assert failed.fixed_by[0].kind == "fixed" and failed.fixed_by[0].runs >= 1
        assert failed.applies is not None and failed.applies.status == "unknown"  # no env


@pytest.mark.slow
def test_results_are_typed_and_writes_repeat_safely(api_url: str, project: str) -> None:
    with Client(api_url) as client:
        task = client.record_task(project, GOAL)
        assert task.status == "written" and task.id and task.id.startswith("task-")
        fields = {"id": "ep-fixed-1", "taskId": task.id, "outcome": "success",
                  "action": {"command": LATIN1}}  # fmt: skip
        assert client.record_episode(project, "read the csv as latin-1", **fields).status == (
            "written"
        )
        again = client.record_episode(project, "read the csv as latin-1", **fields)
        assert (again.id, again.status) == ("ep-fixed-1", "unchanged")
        plan = client.plan_context(project, GOAL, budget=1500)
        assert plan.memories[0].id == "ep-fixed-1" and plan.memories[0].label == "M1"
        assert plan.tokens <= 1500 and plan.memories[0].text in plan.prompt
        with pytest.raises(QueryError, match="budget: the prompt without any memory"):
            client.plan_context(project, GOAL, budget=10)
        with pytest.raises(QueryError, match="memoryId: no episode, snippet or pattern"):
            client.record_outcome(project, "ep-nope", True)


@pytest.mark.anyio
async def test_the_async_client_answers_alike(api_url: str, project: str) -> None:
    async with AsyncClient(api_url) as client:
        await client.record_episode(project, "read the orders csv as latin-1", outcome="success")
        plan = await client.plan_context(project, GOAL)
        assert plan.memories and plan.memories[0].kind == "success"


def _flaky(failures: int, status: int = 503) -> tuple[httpx.MockTransport, list[str]]:
    """A transport that fails `failures` times, then answers; it logs what it was sent."""
    sent: list[str] = []

    def handle(request: httpx.Request) -> httpx.Response:
        sent.append(json.loads(request.content)["variables"].get("input", {}).get("id", "-"))
        if len(sent) <= failures:
            return httpx.Response(status)
        return httpx.Response(200, json={"data": {"result": {"id": sent[-1],
                                                             "status": "written"}}})  # fmt: skip

    return httpx.MockTransport(handle), sent


def test_retries_send_the_same_idempotency_key() -> None:
    transport, sent = _flaky(2)
    with Client("http://service", transport=transport, backoff=0.0) as client:
        done = client.record_episode("p", "x")
    assert len(sent) == 3 and len(set(sent)) == 1 and done.id == sent[0]
    transport, sent = _flaky(5)
    with Client("http://service", transport=transport, backoff=0.0, retries=2) as client,\
            pytest.raises(TransportError):  # fmt: skip
        client.record_episode("p", "x")
    assert len(sent) == 3


class _DroppedAnswer(httpx.BaseTransport):
    """The real exchange, but the first answer is lost on the way back (the service did the
    work; the client sees a read error): what a retry after a dropped connection meets."""

    def __init__(self) -> None:
        self._inner = httpx.HTTPTransport()
        self.sent: list[dict[str, Any]] = []

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        self.sent.append(json.loads(request.content)["variables"])
        response = self._inner.handle_request(request)
        response.read()
        if len(self.sent) == 1:
            raise httpx.ReadError("connection reset before the answer", request=request)
        return response

    def close(self) -> None:
        self._inner.close()


@pytest.mark.slow
def test_an_outcome_resent_after_a_dropped_answer_counts_once(api_url: str, project: str) -> None:
    with Client(api_url) as client:
        client.record_episode(project, "read the csv as latin-1", id="ep-reused",
                              outcome="success")  # fmt: skip
    transport = _DroppedAnswer()
    with Client(api_url, transport=transport, backoff=0.0) as client:
        stats = client.record_outcome(project, "ep-reused", True, "it worked")
    assert len(transport.sent) == 2 and transport.sent[0] == transport.sent[1]
    assert transport.sent[0]["key"].startswith("outcome-")
    assert stats.duplicate and (stats.uses, stats.successes) == (1, 1)
    with Client(api_url) as client:  # read back from the graph
        hits = client.recall(project, "read the csv as latin-1").hits
        again = client.record_outcome(project, "ep-reused", True, key=transport.sent[0]["key"])
        other = client.record_outcome(project, "ep-reused", False)
    episode = next(h.episode for h in hits if h.episode.id == "ep-reused")
    assert (episode.uses, episode.successes) == (1, 1)
    assert again.duplicate and (again.uses, again.successes) == (1, 1)
    assert not other.duplicate and (other.uses, other.successes, other.failures) == (2, 1, 1)


@pytest.fixture
def key(neo4j_settings: Any) -> Callable[..., str]:
    """``key(project, scopes, per_second=…, per_minute=…, records_per_day=…)``: the token of
    a key stored in the test Neo4j, as ``metisgraph keys create`` makes it."""
    from metisgraph.api.auth import Limits
    from metisgraph.api.keys import create_key
    from metisgraph.graph.store import GraphStore, driver_from_settings

    def make(project: str, scopes: list[str], **limits: Any) -> str:
        async def run() -> str:
            driver = driver_from_settings(neo4j_settings)
            try:
                store = GraphStore(driver, neo4j_settings.database)
                made = await create_key(store, [project], scopes, limits=Limits(**limits),
                                        actor="test")  # fmt: skip
                return made.token
            finally:
                await driver.close()

        return anyio.run(run)

    return make


class _Seen(httpx.HTTPTransport):
    """The real transport, noting each answer's status and Retry-After."""

    def __init__(self) -> None:
        super().__init__()
        self.answers: list[tuple[int, str | None]] = []

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        response = super().handle_request(request)
        self.answers.append((response.status_code, response.headers.get("retry-after")))
        return response


@pytest.mark.slow
def test_a_rate_refusal_is_waited_out_even_for_an_outcome(
    api_url: str, project: str, key: Callable[..., str]
) -> None:
    """A 429 means the service ran nothing: after its Retry-After the call is sent again,
    a reuse report too, and the report is counted once."""
    with Client(api_url) as anonymous:
        done = anonymous.record_episode(project, "read the orders csv as latin-1")
    token = key(project, ["write"], per_second=0.5)  # one request every 2 s
    seen = _Seen()
    with Client(api_url, token=token, transport=seen) as client:
        first = client._http.post(api_url + "/graphql", json={"query": "{ __typename }"})
        started = time.monotonic()
        stats = client.record_outcome(project, done.id, True)
        slept = time.monotonic() - started
    assert first.status_code == 200
    assert [status for status, _ in seen.answers] == [200, 429, 200], seen.answers
    assert slept >= float(seen.answers[1][1] or "inf")  # the stated wait, not less
    assert (stats.uses, stats.successes) == (1, 1)


def _to_midnight() -> float:
    """Seconds left in the UTC day."""
    now = datetime.now(UTC)
    midnight = datetime.combine(now.date() + timedelta(days=1), datetime.min.time(), UTC)
    return (midnight - now).total_seconds()


@pytest.mark.slow
def test_a_wait_past_max_wait_is_a_typed_error_at_once(
    api_url: str, project: str, key: Callable[..., str]
) -> None:
    """A stated wait longer than the client's max_wait is not slept: RateLimited carries it
    (a rate of one a minute; a records-a-day quota from the async client)."""
    seen = _Seen()
    with Client(api_url, token=key(project, ["read"], per_minute=1), transport=seen,
                max_wait=5) as client:  # fmt: skip
        client.recall(project, GOAL)
        with pytest.raises(RateLimited, match="request rate") as refused:
            client.recall(project, GOAL)
    assert [status for status, _ in seen.answers] == [200, 429]
    assert refused.value.retry_after is not None and refused.value.retry_after > 5

    token = key(project, ["write"], records_per_day=1)

    async def quota() -> RateLimited:
        async with AsyncClient(api_url, token=token, max_wait=5) as client:
            await client.record_episode(project, "the first record of the day fits")
            with pytest.raises(RateLimited, match="quota of 1 records a day") as over:
                await client.record_episode(project, "the second does not")
            return over.value

    # The quota's day ends at midnight UTC, its wait with it: a run in the day's last seconds
    # (the wait within max_wait, or the day over before the answer) waits for the next day.
    if _to_midnight() < 30:
        time.sleep(_to_midnight() + 1)
    before = _to_midnight()
    over = anyio.run(quota)
    assert over.retry_after is not None
    assert _to_midnight() <= over.retry_after <= before + 2  # the rest of the day


def _answers(*answers: httpx.Response) -> tuple[httpx.MockTransport, list[str]]:
    """A transport that gives these answers in turn (the last one from then on)."""
    sent: list[str] = []

    def handle(request: httpx.Request) -> httpx.Response:
        sent.append(json.loads(request.content)["query"])
        return answers[min(len(sent), len(answers)) - 1]

    return httpx.MockTransport(handle), sent


def _refused(status: int, message: str, code: str | None, wait: str = "0") -> httpx.Response:
    error: dict[str, Any] = {"message": message}
    if code:
        error["extensions"] = {"code": code}
    return httpx.Response(status, json={"errors": [error]}, headers={"Retry-After": wait})


def test_which_503_repeats_a_request_that_is_not_repeatable() -> None:
    """The service's own answers, as api/http/limits.py and api/graphql/errors.py write them:
    BUSY ran nothing (any request is sent again); UNAVAILABLE may have run it (a request that is not
    safe to repeat is not sent again; one that is, after the stated wait)."""
    stats = {"memoryId": "ep-1", "kind": "episode", "uses": 1, "successes": 1,
             "failures": 0, "successRate": 1.0}  # fmt: skip
    done = httpx.Response(200, json={"data": {"result": stats}})
    unsafe = dataclasses.replace(ops.record_outcome("p", "ep-1", True), repeatable=False)
    transport, sent = _answers(_refused(503, "busy: 2 requests served at once", "BUSY"), done)
    with Client("http://service", transport=transport, backoff=0.0) as client:
        assert client.execute(unsafe).uses == 1
    assert len(sent) == 2

    def away(wait: str) -> httpx.Response:
        return _refused(503, "the graph store (Neo4j) is unavailable; retry in 5 s",
                        "UNAVAILABLE", wait=wait)  # fmt: skip

    transport, sent = _answers(away("5"), done)
    with Client("http://service", transport=transport) as client,\
            pytest.raises(Unavailable, match="Neo4j") as refused:  # fmt: skip
        client.execute(unsafe)
    assert len(sent) == 1
    assert (refused.value.code, refused.value.retry_after) == ("UNAVAILABLE", 5.0)

    transport, sent = _answers(away("0"), done)  # record_outcome carries its key: repeatable
    with Client("http://service", transport=transport) as client:
        assert client.record_outcome("p", "ep-1", True).uses == 1
    assert len(sent) == 2

    starting = _refused(503, "metisgraph is starting, try again shortly", None)
    transport, sent = _answers(starting)
    with Client("http://service", transport=transport, retries=2) as client,\
            pytest.raises(NotReady):  # fmt: skip
        client.recall("p", "q")
    assert len(sent) == 3


def test_a_scope_the_key_lacks_is_an_auth_error() -> None:
    """The service names the scope refused ("not allowed to write project(s): p")."""
    from metisgraph.api.auth import Caller, Forbidden
    from metisgraph.api.scopes import Scope

    reader = Caller.granted("key:r", ["a"], [Scope.read])
    for project, scope in (("b", Scope.read), ("a", Scope.write)):
        with pytest.raises(Forbidden) as refused:
            reader.require(project, scope)
        said = {"data": None, "errors": [{"message": str(refused.value)}]}
        transport = httpx.MockTransport(lambda _, said=said: httpx.Response(200, json=said))
        with Client("http://service", transport=transport) as client, pytest.raises(AuthError):
            client.recall(project, "q")


def _stub_model(calls: list[dict[str, Any]]) -> Starlette:
    """A loopback OpenAI-compatible endpoint that answers with the scripted model."""

    async def completions(request: Request) -> JSONResponse:
        body = await request.json()
        calls.append({"body": body, "auth": request.headers.get("authorization")})
        reply = scripted_model(body["messages"][-1]["content"])
        return JSONResponse({"choices": [{"message": {"role": "assistant", "content": reply}}]})

    return Starlette(routes=[Route("/v1/chat/completions", completions, methods=["POST"])])


@pytest.mark.slow
def test_the_openai_adapter_drives_the_loop(api_url: str, project: str, serve: Any) -> None:
    calls: list[dict[str, Any]] = []
    with serve(_stub_model(calls)) as stub, Client(api_url) as client:
        model = OpenAIChatModel(f"{stub}/v1", model="stand-in", api_key="sk-test-1")
        report = run_task(client, project, GOAL, model=model, executor=executor)
        model.close()
    assert report.resolved and len(report.steps) == len(calls) == 2
    assert calls[0]["body"]["model"] == "stand-in" and calls[0]["auth"] == "Bearer sk-test-1"
    assert "## Goal\n" + GOAL in calls[0]["body"]["messages"][0]["content"]


@pytest.mark.slow
def test_the_client_installs_without_the_server() -> None:
    declared = tomllib.loads((ROOT / "sdk" / "pyproject.toml").read_text())["project"]
    assert sorted(d.split(">")[0] for d in declared["dependencies"]) == ["httpx", "pydantic"]
    probe = ("import sys, metisgraph_client; heavy = {'torch', 'neo4j', 'metisgraph', "
             "'sentence_transformers', 'strawberry'} & {m.split('.')[0] for m in sys.modules};"
             "print(sorted(heavy))")  # fmt: skip
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                         check=True)  # fmt: skip
    assert out.stdout.strip() == "[]"


def test_the_public_face_is_what_it_claims() -> None:
    import metisgraph_client

    public = {n for n in vars(metisgraph_client) if not n.startswith("_")}
    assert set(metisgraph_client.__all__) == public
    assert all(getattr(metisgraph_client, n) is not None for n in metisgraph_client.__all__)
