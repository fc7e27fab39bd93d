"""Forgetting that is complete: an episode's text is nowhere in its project afterwards — not
in its neighbours' context, a pattern, an error's sample — and what was counted from it is
counted again. The real pipeline, model (patterns care about meaning) and Neo4j."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from metisgraph.graph import consolidate
from metisgraph.ingest.adapters import SourceRef, validate_record
from metisgraph.ingest.pipeline import Ingestor

pytestmark = pytest.mark.anyio
FIXTURE = Path(__file__).parent / "fixtures" / "consolidation" / "episodes.jsonl"
FORGET = """
mutation($project: String!, $episodeId: String, $taskId: String) {
  forget(project: $project, episodeId: $episodeId, taskId: $taskId) { deleted }
}"""
FORGET_PROJECT = """
mutation($project: String!) { forgetProject(project: $project, confirm: $project) { deleted } }"""
OUTCOME = """
mutation($p: String!, $id: String!) { recordOutcome(project: $p, memoryId: $id, success: true) {
  uses } }"""
SECRET = "marmalade-7731"


def _error(value: str) -> str:
    return (
        "Traceback (most recent call last):\n"
        '  File "loader.py", line 12, in load\n'
        f"ValueError: could not convert string to float: '{value}'"
    )


# A task of four steps: the second is the one forgotten. It and the third hit the same error
# (the value differs), the second first, so the error's sample came from it.
CHAIN = [
    {"id": "c0", "summary": "Opened the settings loader to read the config file",
     "outcome": "unknown"},
    {"id": "c1", "summary": f"Parsing failed on the value {SECRET} in the settings loader",
     "error": _error(SECRET), "outcome": "failure"},
    {"id": "c2", "summary": "Parsing failed again on another value in the settings loader",
     "error": _error("x-1"), "outcome": "failure"},
    {"id": "c3", "summary": "Quoted the values in the settings file; the loader works now",
     "outcome": "success"},
]  # fmt: skip


async def _ingest(store: Any, embedder: Any, project: str) -> None:
    items = []
    lines = FIXTURE.read_text().splitlines()
    records = [json.loads(line) for line in lines]
    records.append({"record_type": "task", "project": "PROJECT", "id": "chain", "goal": "load"})
    records += [
        {"record_type": "episode", "project": "PROJECT", "task_id": "chain", "step": n,
         "source": "executed", **step}
        for n, step in enumerate(CHAIN)
    ]  # fmt: skip
    for n, raw in enumerate(records):
        items.append(validate_record({**raw, "project": project}, SourceRef("fixture", n)))
    summary = await Ingestor(store, embedder).ingest(items)
    assert summary.refused == 0


async def _holding(store: Any, project: str, text: str) -> list[str]:
    """Every string property (or list of strings) of the project's nodes and relationships
    that holds `text`, as `Label.property`."""
    rows = await store.run_text(
        """CALL () {
             MATCH (n) WHERE n.project = $p OR n.name = $p RETURN n AS item, labels(n)[0] AS kind
             UNION
             MATCH (n)-[r]->() WHERE n.project = $p RETURN r AS item, type(r) AS kind
           }
           UNWIND keys(item) AS key
           WITH kind, key, item[key] AS value
           WHERE (value IS :: STRING AND value CONTAINS $text)
              OR (value IS :: LIST<ANY>
                  AND any(x IN value WHERE x IS :: STRING AND x CONTAINS $text))
           RETURN DISTINCT kind + '.' + key AS found""",
        {"p": project, "text": text},
        read=True,
    )
    return sorted(r["found"] for r in rows)


async def _one(store: Any, text: str, project: str) -> dict[str, Any]:
    rows = await store.run_text(text, {"p": project}, read=True)
    assert len(rows) == 1, rows
    return dict(rows[0])


@pytest.mark.slow
async def test_a_forgotten_episode_leaves_no_text_behind(
    store: Any, embedder: Any, gql: Any, project: str
) -> None:
    await _ingest(store, embedder, project)
    await consolidate(store, project)
    error_of = """MATCH (:Episode {project: $p, id: 'c2'})-[:HIT]->(r:Error)
                  RETURN r.key AS key, r.sample AS sample,
                         COUNT { (:Episode)-[:HIT]->(r) } AS hits"""
    before = await _one(store, error_of, project)
    assert before["hits"] == 2 and SECRET in before["sample"]  # shared, sampled from c1
    found = await _holding(store, project, SECRET)
    assert {"Episode.context_text", "Episode.summary", "Error.sample"} <= set(found)

    assert gql(FORGET, {"project": project, "episodeId": "c1"})["data"]["forget"]["deleted"] == 1
    assert await _holding(store, project, SECRET) == []
    after = await _one(store, error_of, project)
    assert after["key"] == before["key"] and after["hits"] == 1
    assert "'x-1'" in after["sample"]  # taken again from the episode that remains
    # The chain closes over the gap and the neighbours' context is computed without it.
    chain = await store.run_text(
        """MATCH (a:Episode {project: $p})-[:NEXT]->(b) RETURN a.id + '>' + b.id AS link
           ORDER BY link""",
        {"p": project},
        read=True,
    )
    assert [r["link"] for r in chain] == ["c0>c2", "c2>c3"]
    c0 = await _one(
        store, "MATCH (e:Episode {project: $p, id: 'c0'}) RETURN e.context_text AS text", project
    )
    assert c0["text"].splitlines() == [
        CHAIN[0]["summary"],
        CHAIN[2]["summary"],
        CHAIN[3]["summary"],
    ]


@pytest.mark.slow
async def test_patterns_count_their_support_again(
    store: Any, embedder: Any, gql: Any, project: str
) -> None:
    await _ingest(store, embedder, project)
    await consolidate(store, project)
    of_member = """MATCH (p:Pattern {project: $p})-[:SUMMARIZES]->(:Episode {id: $id})
                   RETURN p.id AS id, p.support AS support, p.episodes AS episodes,
                          p.embedding AS embedding, p.seed AS seed"""
    ssl = await store.run_text(of_member, {"p": project, "id": "ssl-2"}, read=True)
    oom = await store.run_text(of_member, {"p": project, "id": "oom-2"}, read=True)
    assert len(ssl) == 1 and ssl[0]["support"] >= 4 and ssl[0]["seed"] != "ssl-2"
    assert len(oom) == 1 and oom[0]["support"] == 3 and oom[0]["seed"] != "oom-2"
    words = (
        await _one(
            store, "MATCH (e:Episode {project: $p, id: 'ssl-2'}) RETURN e.summary AS s", project
        )
    )["s"]

    for episode in ("ssl-2", "oom-2"):
        body = gql(FORGET, {"project": project, "episodeId": episode})
        assert body["data"]["forget"]["deleted"] == 1, body
    # One member less: support and episodes counted again, the centroid read again.
    [kept] = await store.run_text(of_member, {"p": project, "id": "ssl-1"}, read=True)
    assert kept["id"] == ssl[0]["id"]
    assert (kept["support"], kept["episodes"]) == (ssl[0]["support"] - 1, ssl[0]["episodes"] - 1)
    assert kept["embedding"] != ssl[0]["embedding"]
    # Left with two tasks, below the three a pattern needs: dissolved.
    gone = await store.run_text(
        "MATCH (p:Pattern {project: $p, id: $id}) RETURN p.id AS id",
        {"p": project, "id": oom[0]["id"]},
        read=True,
    )
    assert gone == []
    assert await _holding(store, project, words) == []


async def test_forgetting_a_project_takes_its_outcome_reports(
    store: Any, gql: Any, project: str
) -> None:
    record = """mutation($input: EpisodeInput!) { recordEpisode(input: $input) { id } }"""
    body = gql(record, {"input": {"project": project, "id": "e1", "summary": "Raised the heap"}})
    assert "errors" not in body, body
    assert gql(OUTCOME, {"p": project, "id": "e1"})["data"]["recordOutcome"]["uses"] == 1
    reports = "MATCH (o:OutcomeReport {project: $p}) RETURN count(o) AS n"
    assert (await _one(store, reports, project))["n"] == 1
    assert gql(FORGET_PROJECT, {"project": project})["data"]["forgetProject"]["deleted"] >= 3
    assert (await _one(store, reports, project))["n"] == 0
