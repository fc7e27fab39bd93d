"""The walking skeleton end to end: record through GraphQL, recall by meaning."""

from __future__ import annotations

import json
import logging
import re
from typing import Any

import pytest

RECORD = """
mutation($input: EpisodeInput!) {
  recordEpisode(input: $input) { id status errors { field message } }
}"""
RECALL = """
query($project: String!, $query: String!, $k: Int!) {
  recall(project: $project, query: $query, k: $k) {
    abstained reason
    hits {
      score why { relevance channels { channel score rank } }
      episode { id project summary outcome tags }
    }
  }
}"""

EPISODES = [
    (
        "leak",
        "The worker's resident memory climbed for days; valgrind showed buffers allocated in "
        "parse_data never freed on the error path",
        "success",
    ),
    (
        "dns",
        "Requests to the billing API failed because the resolver cache held a stale address "
        "after the failover",
        "failure",
    ),
    (
        "tz",
        "A report test failed around midnight because it compared the local date with UTC",
        "success",
    ),
    (
        "disk",
        "The build agent ran out of disk space; old Docker layers filled the volume",
        "success",
    ),
]


def _record(gql: Any, project: str, ident: str, summary: str, outcome: str) -> dict[str, Any]:
    body = gql(
        RECORD,
        {
            "input": {
                "project": project,
                "id": ident,
                "summary": summary,
                "outcome": outcome,
                "tags": ["area:ops"],
            }
        },
    )
    assert "errors" not in body, body
    result: dict[str, Any] = body["data"]["recordEpisode"]
    return result


def test_health_and_readiness(client: Any) -> None:
    assert client.get("/healthz").json() == {"status": "ok"}
    ready = client.get("/readyz")
    assert ready.status_code == 200
    body = ready.json()
    assert body["ready"] and body["neo4j"] and body["schema"] and body["model"]
    assert body["neo4j_version"]


@pytest.mark.slow
def test_recall_finds_a_paraphrase_by_meaning(gql: Any, project: str) -> None:
    for ident, summary, outcome in EPISODES:
        assert _record(gql, project, ident, summary, outcome)["status"] == "written"
    # Shares no content word with the leak episode: only meaning connects them.
    body = gql(
        RECALL,
        {"project": project, "query": "our service needs more RAM the longer it stays up", "k": 3},
    )
    assert "errors" not in body, body
    hits = body["data"]["recall"]["hits"]
    assert hits[0]["episode"]["id"] == "leak"
    assert hits[0]["episode"]["outcome"] == "success"
    assert "vector" in {c["channel"] for c in hits[0]["why"]["channels"]}
    assert all(h["episode"]["project"] == project for h in hits)


def test_recording_the_same_episode_twice_changes_nothing(gql: Any, project: str) -> None:
    first = _record(gql, project, "same", "Restarted the cache to clear stale entries", "success")
    second = _record(gql, project, "same", "Restarted the cache to clear stale entries", "success")
    assert (first["status"], second["status"]) == ("written", "unchanged")


def test_generated_ids_are_stable_for_the_same_content(gql: Any, project: str) -> None:
    query = """mutation($input: EpisodeInput!) { recordEpisode(input: $input) { id status } }"""
    episode = {"project": project, "summary": "Pinned numpy below 2 to keep the old ABI"}
    one = gql(query, {"input": episode})["data"]["recordEpisode"]
    two = gql(query, {"input": episode})["data"]["recordEpisode"]
    assert one["id"] == two["id"] and one["id"].startswith("ep-")


def test_projects_do_not_see_each_other(gql: Any, project: str) -> None:
    _record(gql, project, "mine", "Rotated the TLS certificate before it expired", "success")
    other = project + "-other"
    body = gql(RECALL, {"project": other, "query": "TLS certificate rotation", "k": 5})
    result = body["data"]["recall"]
    assert result["hits"] == [] and result["abstained"]


def test_a_bad_episode_is_refused_naming_the_field(gql: Any, project: str) -> None:
    body = gql(RECORD, {"input": {"project": project, "summary": "   "}})
    result = body["data"]["recordEpisode"]
    assert result["status"] == "refused"
    assert [e["field"] for e in result["errors"]] == ["summary"]


def test_bad_tags_and_confidence_are_refused(gql: Any, project: str) -> None:
    body = gql(
        RECORD,
        {"input": {"project": project, "summary": "ok", "tags": ["no-colon"], "confidence": 1.5}},
    )
    fields = {e["field"] for e in body["data"]["recordEpisode"]["errors"]}
    assert fields == {"tags[0]", "confidence"} or fields == {"tags.0", "confidence"}


def test_recall_rejects_nonsense_arguments(gql: Any, project: str) -> None:
    body = gql(RECALL, {"project": project, "query": "anything", "k": 0})
    assert "k must be between" in body["errors"][0]["message"]


def _client_with(app_settings: Any, embedder: Any, **api: Any) -> Any:
    """The real app with some API settings changed, started (close it with ``with``)."""
    from starlette.testclient import TestClient

    from metisgraph.api.http.app import create_app

    settings = app_settings.model_copy(deep=True)
    for name, value in api.items():
        setattr(settings.api, name, value)
    app = create_app(settings, embedder=embedder, wait_ready=True)
    return TestClient(app, base_url="http://127.0.0.1")  # a Host the app answers to


@pytest.fixture(scope="module")
def token_client(app_settings: Any, embedder: Any) -> Any:
    from pydantic import SecretStr

    tokens = SecretStr("alpha-token-0123456789=team-a;root-token-0123456789=*")
    with _client_with(app_settings, embedder, api_tokens=tokens) as client:
        yield client


def test_tokens_limit_callers_to_their_projects(token_client: Any) -> None:
    query = {"query": '{ recall(project: "team-b", query: "x", k: 1) { abstained } }'}
    assert token_client.post("/graphql", json=query).status_code == 401
    denied = token_client.post(
        "/graphql", json=query, headers={"Authorization": "Bearer alpha-token-0123456789"}
    )
    assert "not allowed to read project(s): team-b" in denied.json()["errors"][0]["message"]
    allowed = token_client.post(
        "/graphql", json=query, headers={"Authorization": "Bearer root-token-0123456789"}
    )
    assert allowed.json()["data"]["recall"]["abstained"] is True


def test_tokens_guard_every_operation(token_client: Any) -> None:
    headers = {"Authorization": "Bearer alpha-token-0123456789"}
    operations = [
        'mutation { recordEpisode(input: {project: "team-b", summary: "x"}) { status } }',
        'mutation { recordTask(input: {project: "team-b", goal: "x"}) { status } }',
        'mutation { reviewMemory(project: "team-b", memoryId: "x", status: "approved") { id } }',
        'mutation { forget(project: "team-b", episodeId: "x") { deleted } }',
        'mutation { forgetProject(project: "team-b", confirm: "team-b") { deleted } }',
        'mutation { recordOutcome(project: "team-b", memoryId: "x", success: true) { uses } }',
        '{ searchSnippets(project: "team-b", calls: ["read_sql"]) { score } }',
        'mutation { verifySnippet(project: "team-b", snippetId: "x") { status } }',
        '{ recall(project: "team-a", query: "x", context: {projects: ["team-b"]}) { abstained } }',
        '{ planContext(project: "team-b", task: {goal: "x"}) { prompt } }',
        '{ planContext(project: "team-a", task: {goal: "x", projects: ["team-b"]}) { prompt } }',
    ]
    for operation in operations:
        body = token_client.post("/graphql", json={"query": operation}, headers=headers).json()
        message = body["errors"][0]["message"]  # names the scope the operation needs
        assert re.search(r"not allowed to (read|write|review|admin) project\(s\): team-b", message)


@pytest.mark.slow
@pytest.mark.anyio
async def test_the_demo_memory_answers_a_paraphrase(
    store: Any, embedder: Any, project: str
) -> None:
    """What `make run` promises: the demo episode that matches a paraphrase comes first."""
    import json
    from pathlib import Path

    from metisgraph.graph import QuestionVectors, RecallRequest, recall
    from metisgraph.ingest.adapters import SourceRef, validate_record
    from metisgraph.ingest.demo import demo_file
    from metisgraph.ingest.pipeline import Ingestor

    lines = Path(str(demo_file())).read_text().splitlines()
    items = [validate_record({**json.loads(line), "project": project}, SourceRef("demo", n))
             for n, line in enumerate(lines, start=1)]  # fmt: skip
    summary = await Ingestor(store, embedder).ingest(items)
    assert summary.refused == 0
    question = "the service uses more and more RAM the longer it runs"
    vectors = QuestionVectors(embedder.encode([question])[0].tolist())
    outcome = await recall(store, RecallRequest(projects=(project,), text=question, k=3), vectors)
    assert outcome.hits[0].episode["task_id"] == "leak-my-service"


def test_request_values_never_reach_the_logs(
    gql: Any, project: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    secret = "hunter2-never-logged"
    bad_variable = gql(RECALL, {"project": project, "query": "leak", "k": f"password={secret}"})
    assert secret in bad_variable["errors"][0]["message"]  # the caller is told what was wrong
    user_error = gql(RECALL, {"project": project, "query": f"password {secret}", "k": 0})
    assert "k must be between" in user_error["errors"][0]["message"]
    gql(RECORD, {"input": {"project": project, "summary": " ", "observation": secret}})
    assert caplog.records, "nothing was logged at all: the check below would prove nothing"
    assert secret not in caplog.text


DEEP = """query($project: String!) {
  recall(project: $project, query: "leak") { hits { snippets { snippet { id } } } }
}"""


def test_limits_hold_for_documents_seen_before() -> None:
    import anyio

    from metisgraph.api.graphql.schema import build_schema
    from metisgraph.api.settings import ApiSettings

    schema = build_schema(ApiSettings(max_query_depth=3, max_aliases=3, max_query_tokens=60))
    aliases = "{ " + " ".join(f"a{n}: __typename" for n in range(5)) + " }"
    long = "{ " + "__typename " * 80 + "}"

    async def errors(document: str) -> str:
        result = await schema.execute(document, variable_values={"project": "p"})
        return str(result.errors)

    for _ in range(2):  # the second time, parse and validation come from the caches
        assert "exceeds maximum operation depth" in anyio.run(errors, DEEP)
        assert "aliases" in anyio.run(errors, aliases).lower()
        assert "token" in anyio.run(errors, long).lower()
        assert anyio.run(errors, "{ __typename }") == "None"


TAGGED_RECALL = """
query($project: String!, $tags: [String!]) {
  recall(project: $project, query: "deploy credentials", context: {tags: $tags}, k: 3) {
    hits { episode { id tags } why { channels { channel score } } }
  }
}"""
REVIEW = """
mutation($project: String!, $id: String!, $note: String) {
  reviewMemory(project: $project, memoryId: $id, status: "pending", note: $note) { status }
}"""


@pytest.mark.slow
@pytest.mark.anyio
async def test_secrets_in_tags_tools_and_review_notes_are_never_stored(
    gql: Any, store: Any, project: str
) -> None:
    token = "ghp_" + "Zq8" * 12
    password = "Tr0ub4dor-and-3"
    body = gql(
        RECORD,
        {"input": {"project": project, "id": "deploy", "outcome": "success",
                   "summary": "Rotated the deploy credentials of the release job",
                   "tags": [f"token:{token}", "area:release"], "tools": [f"vault-{token}"]}},
    )  # fmt: skip
    assert body["data"]["recordEpisode"]["status"] == "written", body
    note = f"checked with password={password}"
    reviewed = gql(REVIEW, {"project": project, "id": "deploy", "note": note})
    assert reviewed["data"]["reviewMemory"]["status"] == "pending", reviewed
    rows = await store.run_text(
        """MATCH (n) WHERE n.project = $p OPTIONAL MATCH (n)-[r]-()
           RETURN collect(DISTINCT properties(n)) AS nodes, collect(properties(r)) AS rels""",
        {"p": project},
        read=True,
    )
    stored = str(rows)
    assert "REDACTED" in stored and "area:release" in stored
    assert token not in stored and password not in stored
    # The question's tags are redacted the same way, so a tag still matches itself.
    found = gql(TAGGED_RECALL, {"project": project, "tags": [f"token:{token}"]})
    hit = found["data"]["recall"]["hits"][0]
    assert hit["episode"]["id"] == "deploy"
    assert "tags" in {c["channel"] for c in hit["why"]["channels"]}


RECORD_MANY = """
mutation($inputs: [EpisodeInput!]!) {
  recordEpisodes(inputs: $inputs) { written refused results { id status errors { field } } }
}"""


def test_a_batch_goes_on_past_a_bad_record_and_names_it(gql: Any, project: str) -> None:
    inputs = [
        {"project": project, "id": "a", "summary": "Restarted the cache after the deploy"},
        {"project": project, "id": "b", "summary": "  "},
        {"project": project, "id": "c", "summary": "Pinned the client library to 2.1"},
    ]
    result = gql(RECORD_MANY, {"inputs": inputs})["data"]["recordEpisodes"]
    assert (result["written"], result["refused"]) == (2, 1)
    assert [(r["id"], r["status"]) for r in result["results"]] == [
        ("a", "written"), ("b", "refused"), ("c", "written")
    ]  # fmt: skip
    assert result["results"][1]["errors"] == [{"field": "summary"}]


@pytest.fixture(scope="module")
def small_body_client(app_settings: Any, embedder: Any) -> Any:
    with _client_with(app_settings, embedder, max_body_bytes=4096) as client:
        yield client


def test_a_body_over_the_limit_is_refused_before_it_is_read(
    small_body_client: Any, project: str
) -> None:
    small = {"query": RECORD, "variables": {"input": {"project": project, "summary": "ok"}}}
    assert small_body_client.post("/graphql", json=small).status_code == 200
    big = {"query": RECORD, "variables": {"input": {"project": project, "summary": "x" * 5000}}}
    declared = small_body_client.post("/graphql", json=big)
    assert declared.status_code == 413
    assert "4,096 bytes" in declared.json()["errors"][0]["message"]
    # Streamed without a Content-Length: counted as it arrives.
    payload = json.dumps(big).encode()
    chunks = (payload[i : i + 1000] for i in range(0, len(payload), 1000))
    streamed = small_body_client.post(
        "/graphql", content=chunks, headers={"content-type": "application/json"}
    )
    assert streamed.status_code == 413


RECORD_NOTES = """
mutation($input: EpisodeInput!) {
  recordEpisode(input: $input) { id status notes errors { field message } }
}"""


@pytest.mark.slow
@pytest.mark.anyio
async def test_a_long_log_keeps_its_head_and_tail_and_says_so(
    gql: Any, store: Any, project: str
) -> None:
    from metisgraph.ingest.prepare.episode import MAX_TEXT_CHARS

    secret = "AKIA" + "Q7RT" * 4
    head = f"$ make deploy AWS_ACCESS_KEY_ID={secret}\n"
    middle = "".join(f"step {i}: copied shard {i} of the archive\n" for i in range(20_000))
    tail = (
        "Traceback (most recent call last):\n"
        '  File "/srv/app/deploy/upload.py", line 88, in push_shard\n'
        "    raise UploadQuotaError(shard)\n"
        "deploy.upload.UploadQuotaError: shard quota exceeded\n"
    )
    observation = head + middle + tail
    assert len(observation) > MAX_TEXT_CHARS["observation"]
    episode = {
        "project": project,
        "id": "long-log",
        "outcome": "failure",
        "summary": "The archive upload stopped at the shard quota",
        "observation": observation,
    }
    body = gql(RECORD_NOTES, {"input": episode})
    result = body["data"]["recordEpisode"]
    assert result["status"] == "written", body
    assert result["notes"] and result["notes"][0].startswith(f"observation: {len(observation):,}")
    rows = await store.run_text(
        """MATCH (e:Episode {project: $p, id: 'long-log'})
           OPTIONAL MATCH (e)-[:HIT]->(x:Error)
           RETURN e.observation AS observation, e.cut AS cut,
                  collect(x.kind + ': ' + x.template) AS errors""",
        {"p": project},
        read=True,
    )
    stored = rows[0]["observation"]
    assert len(stored) < MAX_TEXT_CHARS["observation"] + 100
    assert "characters cut" in stored and "make deploy" in stored
    assert secret not in stored and "REDACTED" in stored
    assert json.loads(rows[0]["cut"]) == {"observation": len(observation)}
    # The error at the end of the log is still found.
    assert any("UploadQuotaError" in t for t in rows[0]["errors"]), rows
    again = gql(RECORD_NOTES, {"input": episode})
    assert again["data"]["recordEpisode"]["status"] == "unchanged"
