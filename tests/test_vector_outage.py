"""The vector-index outage of issue 12, against the real Neo4j: once a vector index holds
deletions, a filtered search (Cypher 25 SEARCH ... WHERE) whose filter matches no live vector
fails inside Neo4j (ArrayIndexOutOfBoundsException in Lucene's FixedBitSet.get), however
many other vectors it holds. Recall, snippet search and the error channel must answer
anyway, keeping the in-index filter wherever it works."""

from __future__ import annotations

import random
import uuid
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from neo4j import Driver, GraphDatabase
from neo4j.exceptions import Neo4jError
from typer.testing import CliRunner

from metisgraph.api import cli
from metisgraph.graph import QuestionVectors, RecallRequest
from metisgraph.graph.channels import gather_channels
from metisgraph.graph.counters import COUNTERS
from metisgraph.graph.indexes import vector_index_statements
from metisgraph.graph.settings import Neo4jSettings
from metisgraph.graph.snippet_search import SnippetSearch, search_snippets

DIMENSIONS = 384
RECORD_MANY = """
mutation($inputs: [EpisodeInput!]!) { recordEpisodes(inputs: $inputs) { written refused } }"""
FORGET = """
mutation($project: String!, $id: String!) { forget(project: $project, episodeId: $id) { deleted } }
"""
RECALL = """
query($project: String!, $query: String!) {
  recall(project: $project, query: $query, k: 3) {
    abstained warnings { channel reason }
    hits { episode { id } why { dropped channels { channel } } }
  }
}"""


def _vector() -> list[float]:
    return [random.random() for _ in range(DIMENSIONS)]


@pytest.fixture(scope="module")
def neo4j(neo4j_settings: Neo4jSettings) -> Iterator[Driver]:
    password = neo4j_settings.password.get_secret_value() if neo4j_settings.password else ""
    with GraphDatabase.driver(neo4j_settings.uri or "", auth=("neo4j", password)) as driver:
        yield driver


@pytest.fixture
def deleted_vectors(neo4j: Driver) -> Iterator[Callable[[str, str], None]]:
    """Leave deletions in a vector index: nodes written in two transactions, half of each
    deleted. (A segment whose nodes are all deleted is dropped whole: no deletions stay.)
    The nodes live in projects of their own and are removed afterwards."""
    made: list[tuple[str, str]] = []

    def leave(label: str, props: str) -> None:
        kept, gone = f"kept-{uuid.uuid4().hex[:8]}", f"gone-{uuid.uuid4().hex[:8]}"
        made.append((label, kept))
        for batch in range(2):
            neo4j.execute_query(
                "UNWIND range(1, 20) AS i "
                "WITH i, CASE WHEN i <= 10 THEN $kept ELSE $gone END AS p "
                f"CREATE (n:{label} {{{props}}})",
                kept=kept,
                gone=gone,
                batch=batch,
                dims=DIMENSIONS,
            )
        neo4j.execute_query(f"MATCH (n:{label} {{project: $gone}}) DETACH DELETE n", gone=gone)

    yield leave
    for label, kept in made:
        neo4j.execute_query(f"MATCH (n:{label} {{project: $kept}}) DETACH DELETE n", kept=kept)


async def _filtered_search_fails(store: Any, label: str, index: str, project: str) -> bool:
    """The reproduction itself: the in-index filtered search that Neo4j cannot answer."""
    text = (
        f"CYPHER 25 MATCH (n:{label}) SEARCH n IN (VECTOR INDEX {index} FOR $vector "
        "WHERE n.project = $project LIMIT 5) SCORE AS s RETURN count(*) AS c"
    )
    try:
        await store.run_text(text, {"vector": _vector(), "project": project}, read=True)
    except Neo4jError as error:
        assert "out of bounds" in (error.message or ""), error
        return True
    return False


EPISODE_VECTOR = (
    "project: p, episode: p + '-' + $batch + '-' + i, of: 'title', "
    "embedding: [x IN range(1, $dims) | rand()]"
)
ERROR = "project: p, key: p + '-' + $batch + '-' + i, embedding: [x IN range(1, $dims) | rand()]"
SNIPPET = (
    "project: p, id: p + '-' + $batch + '-' + i, recallable: true, "
    "language: 'python', kind: 'function', embedding: [x IN range(1, $dims) | rand()]"
)


@pytest.mark.anyio
async def test_recall_answers_when_the_filtered_vector_searches_cannot(
    store: Any, project: str, deleted_vectors: Any
) -> None:
    """Graph level: the reproduction in our own indexes, then every channel asked at once."""
    deleted_vectors("EpisodeVector", EPISODE_VECTOR)
    deleted_vectors("Error", ERROR)
    # The project's own episodes carry no title and hit no error.
    await store.run_text(
        "UNWIND range(1, 3) AS i CREATE (e:Episode {project: $project, id: 'own-' + i, "
        "recallable: true, outcome: 'success', review_status: 'unreviewed', "
        "embedding: [x IN range(1, $dims) | rand()]}) "
        "CREATE (:EpisodeVector {project: $project, episode: e.id, of: 'text', "
        "embedding: e.embedding})",
        {"project": project, "dims": DIMENSIONS},
    )
    # The project hits no error: the errors' filtered search fails. (Its episodes' vectors
    # share one index with every project's titles: that search finds its text vectors.)
    if not await _filtered_search_fails(store, "Error", "error_embedding", project):
        pytest.skip("this Neo4j answers the filtered search: the outage does not reproduce")
    request = RecallRequest(
        projects=(project,), text="anything at all", error_keys=("no-such-error",)
    )
    vectors = QuestionVectors(_vector(), title=_vector(), error=_vector())
    answers = await gather_channels(store, request, vectors)
    found = answers.candidates
    assert {c.key[1] for c in found["vector"]} == {"own-1", "own-2", "own-3"}
    assert found["title"] == [] and found["errors"] == []
    assert answers.failures == []  # no channel dropped: each answered, in the index or not


@pytest.mark.anyio
async def test_snippet_search_answers_when_its_filter_matches_nothing(
    store: Any, project: str, deleted_vectors: Any
) -> None:
    deleted_vectors("Snippet", SNIPPET)
    if not await _filtered_search_fails(store, "Snippet", "snippet_embedding", project):
        pytest.skip("this Neo4j answers the filtered search: the outage does not reproduce")
    found = await search_snippets(store, SnippetSearch(project=project, vector=_vector()))
    assert found == []


@pytest.mark.slow
def test_recall_in_an_untitled_project_after_titled_episodes_were_forgotten(
    gql: Any, project: str
) -> None:
    """Product level: what the evaluations' clean-up did to every recall of a store."""
    titled, kept = f"{project}-titled", f"{project}-kept"
    for batch in range(2):  # one write transaction each; half of each forgotten below
        inputs = [
            {"project": titled if n % 2 else kept, "id": f"t{batch}-{n}",
             "title": f"Headline {batch} {n}", "summary": f"A titled report {n} of batch {batch}"}
            for n in range(10)
        ]  # fmt: skip
        assert gql(RECORD_MANY, {"inputs": inputs})["data"]["recordEpisodes"]["written"] == 10
    for batch in range(2):
        for n in range(1, 10, 2):
            body = gql(FORGET, {"project": titled, "id": f"t{batch}-{n}"})
            assert body["data"]["forget"]["deleted"] == 1, body
    untitled = [
        {"project": project, "id": "oom", "summary": "The worker ran out of memory at night"},
        {"project": project, "id": "dns", "summary": "DNS lookups failed after the failover"},
    ]
    assert gql(RECORD_MANY, {"inputs": untitled})["data"]["recordEpisodes"]["written"] == 2
    body = gql(RECALL, {"project": project, "query": "the worker process exhausted its memory"})
    assert "errors" not in body, body
    hits = body["data"]["recall"]["hits"]
    assert hits and hits[0]["episode"]["id"] == "oom"


VECTORS_INDEX = "episode_vectors"  # the vector channels' one index (issue 23)


@pytest.fixture
def vectors_index_dropped(neo4j: Driver) -> Iterator[None]:
    """The vector channels' index gone, as between the two steps of a rebuild; built again
    afterwards."""
    statement = vector_index_statements(DIMENSIONS, vector_filters=True)[VECTORS_INDEX]
    neo4j.execute_query(f"DROP INDEX {VECTORS_INDEX} IF EXISTS")
    try:
        yield
    finally:
        neo4j.execute_query(statement.text, statement.params)
        neo4j.execute_query("CALL db.awaitIndexes(300)")


@pytest.mark.slow
@pytest.mark.own_server  # drops and rebuilds episode_vectors: every plan of the server is dropped
def test_a_channel_that_fails_is_dropped_named_and_counted(
    gql: Any, client: Any, project: str, vectors_index_dropped: None
) -> None:
    """The vector channels fail for real (their index is missing, so their way round fails
    too): the other channels answer, the answer names the dropped channels and why."""
    before = COUNTERS.value("recall_channels_dropped", channel="title")
    inputs = [
        {"project": project, "id": "oom", "title": "Worker out of memory",
         "summary": "The worker ran out of memory at night"},
        {"project": project, "id": "dns", "title": "DNS after failover",
         "summary": "DNS lookups failed after the failover"},
    ]  # fmt: skip
    assert gql(RECORD_MANY, {"inputs": inputs})["data"]["recordEpisodes"]["written"] == 2
    body = gql(RECALL, {"project": project, "query": "the worker process exhausted its memory"})
    assert "errors" not in body, body
    result = body["data"]["recall"]
    dropped = ["context", "title", "vector"]
    assert sorted(w["channel"] for w in result["warnings"]) == dropped
    assert result["warnings"][0]["reason"].startswith("Neo.ClientError")
    assert result["hits"][0]["episode"]["id"] == "oom"
    for hit in result["hits"]:
        assert hit["why"]["dropped"] == dropped
        assert not set(dropped) & {c["channel"] for c in hit["why"]["channels"]}
    assert COUNTERS.value("recall_channels_dropped", channel="title") == before + 1
    ready = client.get("/readyz").json()
    assert ready["vector_indexes"][VECTORS_INDEX] == {"healthy": False, "error": "missing"}
    assert ready["vector_indexes"]["error_embedding"]["healthy"] is True
    dropped = [c for c in ready["counters"] if c["name"] == "recall_channels_dropped"]
    assert {"name": "recall_channels_dropped", "labels": {"channel": "title"},
            "value": before + 1} in dropped  # fmt: skip


REPAIRED = "error_embedding"


@pytest.mark.own_server  # rebuilds error_embedding: every plan of the server is dropped
def test_schema_repair_rebuilds_an_index_whose_probe_fails(
    neo4j: Driver, neo4j_settings: Neo4jSettings, deleted_vectors: Any
) -> None:
    """Probe fails -> `metisgraph schema repair --index` rebuilds it, with progress -> the
    probe answers; the in-index filtered search works again."""
    deleted_vectors("Error", ERROR)
    probe = (
        f"CYPHER 25 MATCH (n:Error) SEARCH n IN (VECTOR INDEX {REPAIRED} FOR $vector "
        "WHERE n.project = '#metisgraph-probe' LIMIT 1) SCORE AS s RETURN count(*) AS n"
    )
    try:
        neo4j.execute_query(probe, vector=_vector())
        pytest.skip("this Neo4j answers the filtered search: the outage does not reproduce")
    except Neo4jError as error:
        assert "out of bounds" in (error.message or "")
    password = neo4j_settings.password.get_secret_value() if neo4j_settings.password else ""
    env = {"NEO4J_URI": neo4j_settings.uri or "", "NEO4J_PASSWORD": password, "COLUMNS": "300"}
    result = CliRunner(env=env).invoke(cli.app, ["schema", "repair", "--index", REPAIRED])
    assert result.exit_code == 0, result.output
    assert f"{REPAIRED}" in result.stdout and "fails" in result.stdout  # probed before
    assert f"rebuild {REPAIRED}: 100% populated" in result.stderr
    records, _, _ = neo4j.execute_query(probe, vector=_vector())
    assert records[0]["n"] == 0


PATTERN = (
    "project: p, id: p + '-' + $batch + '-' + i, support: 5, success_rate: 1.0, "
    "summary: 'a lesson', embedding: [x IN range(1, $dims) | rand()]"
)
RECALL_WITH_PATTERNS = """
query($project: String!, $query: String!) {
  recall(project: $project, query: $query, k: 3, filter: {memoryTypes: [EPISODE, PATTERN]}) {
    abstained warnings { channel reason }
    hits { episode { id } why { dropped } }
  }
}"""


@pytest.mark.slow
def test_recall_with_patterns_in_a_project_without_any_after_others_were_forgotten(
    gql: Any, project: str, neo4j: Driver, deleted_vectors: Any
) -> None:
    """Issue 23, product level: patterns are asked for (planContext always asks) in a project
    that has none, after other projects' patterns were deleted (maintain replaces them,
    forgetProject removes them). pattern_embedding's filtered search fails inside Neo4j;
    recall answers with no pattern and no dropped channel, as when the search finds none."""
    deleted_vectors("Pattern", PATTERN)
    untitled = [
        {"project": project, "id": "oom", "summary": "The worker ran out of memory at night"},
        {"project": project, "id": "dns", "summary": "DNS lookups failed after the failover"},
    ]
    assert gql(RECORD_MANY, {"inputs": untitled})["data"]["recordEpisodes"]["written"] == 2
    search = (
        "CYPHER 25 MATCH (n:Pattern) SEARCH n IN (VECTOR INDEX pattern_embedding FOR $vector "
        "WHERE n.project = $project LIMIT 5) SCORE AS s RETURN count(*) AS c"
    )
    try:
        neo4j.execute_query(search, vector=_vector(), project=project)
        pytest.skip("this Neo4j answers the filtered search: the outage does not reproduce")
    except Neo4jError as error:
        assert "out of bounds" in (error.message or ""), error
    before = COUNTERS.value("recall_channels_dropped", channel="patterns")
    body = gql(
        RECALL_WITH_PATTERNS, {"project": project, "query": "the worker process ran out of memory"}
    )
    assert "errors" not in body, body
    result = body["data"]["recall"]
    assert result["warnings"] == []
    assert result["hits"][0]["episode"]["id"] == "oom"
    assert all(hit["why"]["dropped"] == [] for hit in result["hits"])
    assert COUNTERS.value("recall_channels_dropped", channel="patterns") == before
