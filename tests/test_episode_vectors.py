"""Issue 23: an episode's vectors (its text, its title, it with its neighbouring steps) are
EpisodeVector nodes in one index, kept with the episode through every write and forget, and
built for a store written before them (migration 5): recall searches them once."""

from __future__ import annotations

from typing import Any

import pytest
from neo4j import Driver, GraphDatabase

from metisgraph.graph.migrations import cypher_step
from metisgraph.graph.settings import Neo4jSettings

RECORD_MANY = """
mutation($inputs: [EpisodeInput!]!) { recordEpisodes(inputs: $inputs) { written refused } }"""
FORGET = """
mutation($project: String!, $id: String!) { forget(project: $project, episodeId: $id) { deleted } }
"""
FORGET_PROJECT = """
mutation($project: String!) { forgetProject(project: $project, confirm: $project) { deleted } }"""
# `same`: the vector belongs to a stored episode, its text vector equals the episode's own
# `embedding`, and the episode keeps no second copy of its title or context vector.
VECTORS = """
MATCH (v:EpisodeVector {project: $project})
OPTIONAL MATCH (e:Episode {project: v.project, id: v.episode})
RETURN v.episode AS episode, v.of AS of,
       e IS NOT NULL AND e.title_embedding IS NULL AND e.context_embedding IS NULL
       AND (v.of <> 'text' OR v.embedding = e.embedding) AS same
ORDER BY episode, of"""


@pytest.fixture(scope="module")
def neo4j(neo4j_settings: Neo4jSettings) -> Any:
    password = neo4j_settings.password.get_secret_value() if neo4j_settings.password else ""
    with GraphDatabase.driver(neo4j_settings.uri or "", auth=("neo4j", password)) as driver:
        yield driver


def _vectors(neo4j: Driver, project: str) -> list[tuple[str, str, bool]]:
    records, _, _ = neo4j.execute_query(VECTORS, project=project)
    return [(r["episode"], r["of"], r["same"]) for r in records]


@pytest.mark.slow
def test_an_episodes_vectors_follow_it_through_writes_and_forgetting(
    gql: Any, neo4j: Driver, project: str
) -> None:
    steps = [
        {"project": project, "id": "s1", "taskId": "t", "step": 1, "title": "Worker leaks",
         "summary": "The worker's memory grows after days"},
        {"project": project, "id": "s2", "taskId": "t", "step": 2,
         "summary": "A heap dump shows the cache holding every invoice"},
        {"project": project, "id": "alone", "summary": "DNS lookups failed after failover"},
    ]  # fmt: skip
    assert gql(RECORD_MANY, {"inputs": steps})["data"]["recordEpisodes"]["written"] == 3
    assert _vectors(neo4j, project) == [
        ("alone", "text", True),
        ("s1", "context", True),
        ("s1", "text", True),
        ("s1", "title", True),
        ("s2", "context", True),
        ("s2", "text", True),
    ]
    retitled = [{**steps[0], "title": None, "summary": "The worker's memory grows for weeks"}]
    assert gql(RECORD_MANY, {"inputs": retitled})["data"]["recordEpisodes"]["written"] == 1
    assert ("s1", "title", True) not in _vectors(neo4j, project)
    assert ("s1", "text", True) in _vectors(neo4j, project)  # the new text's vector
    assert gql(FORGET, {"project": project, "id": "s2"})["data"]["forget"]["deleted"] >= 1
    # s2 forgotten; s1 is left alone in its task: its neighbourhood (context) goes too
    assert _vectors(neo4j, project) == [("alone", "text", True), ("s1", "text", True)]
    assert gql(FORGET_PROJECT, {"project": project})["data"]["forgetProject"]["deleted"] > 0
    assert _vectors(neo4j, project) == []


@pytest.mark.anyio
async def test_migration_5_gives_a_store_written_before_it_its_episode_vectors(
    store: Any, project: str
) -> None:
    await store.run_text(
        "UNWIND range(1, 3) AS i CREATE (:Episode {project: $project, id: 'old' + i, "
        "embedding: [x IN range(1, 384) | rand()], "
        "title_embedding: CASE WHEN i = 1 THEN [x IN range(1, 384) | rand()] END, "
        "context_embedding: CASE WHEN i = 2 THEN [x IN range(1, 384) | rand()] END})",
        {"project": project},
    )
    before = await store.run_text(OLD_VECTORS, {"project": project}, read=True)
    steps = cypher_step("migrate_episode_vectors"), cypher_step("forget_episode_vector_copies")
    for _ in range(2):  # a second run (one cut short, say) changes nothing
        for step in steps:  # migrations 5 and 8, in order
            await step(store)
        rows = await store.run_text(VECTORS, {"project": project}, read=True)
        assert [(r["episode"], r["of"], r["same"]) for r in rows] == [
            ("old1", "text", True),
            ("old1", "title", True),
            ("old2", "context", True),
            ("old2", "text", True),
            ("old3", "text", True),
        ]
        # Each vector kept exactly once, on its EpisodeVector node.
        kept = await store.run_text(KEPT, {"project": project}, read=True)
        assert {(r["episode"], r["of"]): r["vector"] for r in kept} == {
            (r["episode"], of): r[of] for r in before for of in OF if r[of] is not None
        }


OF = ("text", "title", "context")
OLD_VECTORS = """
MATCH (e:Episode {project: $project})
RETURN e.id AS episode, e.embedding AS text, e.title_embedding AS title,
       e.context_embedding AS context"""
KEPT = """
MATCH (v:EpisodeVector {project: $project}) RETURN v.episode AS episode, v.of AS of,
       v.embedding AS vector"""


@pytest.mark.anyio
async def test_no_vector_index_over_episodes_but_the_one_recall_searches(store: Any) -> None:
    """Issue 23: the episode's own, title and context indexes are gone (nothing searched
    them); its every vector is in episode_vectors."""
    rows = await store.run_text(
        "SHOW VECTOR INDEXES YIELD name, labelsOrTypes RETURN name, labelsOrTypes AS labels",
        {},
        read=True,
    )
    over = {r["name"]: r["labels"] for r in rows}
    assert [n for n, labels in over.items() if "Episode" in labels] == []
    assert over["episode_vectors"] == ["EpisodeVector"]
