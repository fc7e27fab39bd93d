"""What one request may ask for: a bounded list of records, of tags and tools; and a long
question is prepared off the event loop, so the server answers others meanwhile."""

from __future__ import annotations

import threading
from typing import Any

import pytest

RECORD_MANY = """mutation($is: [EpisodeInput!]!) {
  recordEpisodes(inputs: $is) { written refused } }"""
EPISODES = "{ projects { name episodes } }"
RECALL = """query($p: String!, $c: RecallContext) {
  recall(project: $p, query: "deploy with the release tools", context: $c) { abstained } }"""
PLAN = """query($p: String!, $t: PlanTaskInput!) {
  planContext(project: $p, task: $t) { tokens } }"""


def _episodes(project: str, count: int) -> list[dict[str, Any]]:
    return [{"project": project, "summary": f"bounded call, step {n}"} for n in range(count)]


def _stored(gql: Any, project: str) -> int:
    found = [p for p in gql(EPISODES)["data"]["projects"] if p["name"] == project]
    return found[0]["episodes"] if found else 0


def _message(body: dict[str, Any]) -> str:
    assert body.get("errors"), body
    return " ".join(e["message"] for e in body["errors"])


def test_a_call_over_the_record_limit_is_refused_whole(
    gql: Any, project: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from metisgraph.api.graphql import record_types

    too_many = gql(RECORD_MANY, {"is": _episodes(project, record_types.MAX_RECORDS_PER_CALL + 1)})
    assert "inputs: at most 1,000 records a call, got 1,001" in _message(too_many)
    assert too_many["data"] is None and _stored(gql, project) == 0

    monkeypatch.setattr(record_types, "MAX_RECORDS_PER_CALL", 2)  # the limit itself passes
    assert gql(RECORD_MANY, {"is": _episodes(project, 2)})["data"]["recordEpisodes"] == {
        "written": 2,
        "refused": 0,
    }
    assert "got 3" in _message(gql(RECORD_MANY, {"is": _episodes(project, 3)}))
    assert _stored(gql, project) == 2


def test_tags_and_tools_of_a_question_are_bounded(gql: Any, project: str) -> None:
    from metisgraph.ingest.question.asked import (
        MAX_CONTEXT_NAME_CHARS,
        MAX_CONTEXT_TAGS,
        MAX_CONTEXT_TOOLS,
    )

    tags = [f"area:part-{n}" for n in range(MAX_CONTEXT_TAGS + 1)]
    assert "context.tags: at most 64 a question, got 65" in _message(
        gql(RECALL, {"p": project, "c": {"tags": tags}})
    )
    tools = ["git", "x" * (MAX_CONTEXT_NAME_CHARS + 1)]
    assert "context.tools[1]: at most 512 characters, got 513" in _message(
        gql(RECALL, {"p": project, "c": {"tools": tools}})
    )
    many = [f"tool-{n}" for n in range(MAX_CONTEXT_TOOLS + 1)]
    assert "task.tools: at most 256 a question, got 257" in _message(
        gql(PLAN, {"p": project, "t": {"goal": "release", "tools": many}})
    )
    within = {"tags": tags[:MAX_CONTEXT_TAGS], "tools": many[:MAX_CONTEXT_TOOLS]}
    assert "errors" not in gql(RECALL, {"p": project, "c": within})


def test_the_server_answers_while_a_question_is_prepared(
    client: Any, project: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The question's preparation (sanitizing, parsing) is held until /healthz has answered:
    on the event loop, /healthz could not answer and the hold would time out."""
    from metisgraph.api.graphql import recall_service

    prepare = recall_service.prepare_question
    preparing, answered = threading.Event(), threading.Event()
    released: list[bool] = []

    def held(question: Any) -> Any:
        preparing.set()
        released.append(answered.wait(timeout=10))
        return prepare(question)

    monkeypatch.setattr(recall_service, "prepare_question", held)
    long = "deploy failed:\n" + 'File "deploy.py", line 12, in release\n' * 4_000
    query = "query($p: String!, $q: String!) { recall(project: $p, query: $q) { abstained } }"
    recall: dict[str, Any] = {}

    def ask() -> None:
        body = {"query": query, "variables": {"p": project, "q": long}}
        recall["response"] = client.post("/graphql", json=body)

    thread = threading.Thread(target=ask)
    thread.start()
    assert preparing.wait(timeout=30)
    assert client.get("/healthz").status_code == 200
    answered.set()
    thread.join(timeout=60)
    assert released == [True], "the loop waited for the question's preparation"
    assert recall["response"].status_code == 200
    assert "errors" not in recall["response"].json()
