"""Exports and imports against the real Neo4j: formats networkx reads, export → import →
export gives the same graph, vectors come back usable, bad input is refused with a reason."""

from __future__ import annotations

import csv
import io
import json
from datetime import UTC, datetime
from typing import Any

import networkx as nx
import pytest
from story import Story, load_story, module_story

from metisgraph.graph.digest import digest_export, digest_project, graph_digest
from metisgraph.graph.exports import (
    ImportRefused,
    ProjectGraph,
    export_chunks,
    import_graph,
    read_node_link,
)

pytestmark = pytest.mark.anyio


@pytest.fixture(scope="module")
def story(neo4j_settings: Any, embedder: Any) -> Story:
    """One story for the tests that only read it (an import writes to projects of its own)."""
    return module_story(neo4j_settings, embedder, "ex")


@pytest.fixture
async def own_story(store: Any, embedder: Any, project: str) -> Story:
    """A story of the test's own, for a test that changes it."""
    return await load_story(store, embedder, project)


async def _text(store: Any, project: str, fmt: str, **kwargs: Any) -> str:
    return "".join([c async for c in export_chunks(store, project, fmt, **kwargs)])


async def _counts(store: Any, project: str) -> tuple[int, int]:
    graph = ProjectGraph(store, project)
    nodes = len([n async for n in graph.nodes()])
    edges = len([e async for e in graph.edges()])
    return nodes, edges


@pytest.mark.slow
async def test_json_export_is_node_link_networkx_reads(store: Any, story: Story) -> None:
    text = await _text(store, story.shop, "json", model="m", dimension=384)
    graph = nx.node_link_graph(json.loads(text), edges="edges")
    nodes, edges = await _counts(store, story.shop)
    assert (graph.number_of_nodes(), graph.number_of_edges()) == (nodes, edges)
    assert graph.is_directed() and graph.is_multigraph()
    kinds = {d["label"] for _, d in graph.nodes(data=True)}
    assert {"Project", "Task", "Episode", "Error", "Snippet", "Environment", "Package"} <= kinds
    fixes = [d for _, _, d in graph.edges(data=True) if d["type"] == "FIXES"]
    assert fixes and all("task" in d for d in fixes)
    # the evidence of each fix travels with it: the rule, why, confidence, on the step's link
    resolved = [d for _, _, d in graph.edges(data=True) if d["type"] == "RESOLVED"]
    assert resolved and all(d["why"] and d["rule"] and 0 < d["confidence"] <= 1 for d in resolved)
    assert {d["kind"] for d in resolved} == {"fixed"}
    episode = next(d for _, d in graph.nodes(data=True) if d["label"] == "Episode")
    assert episode["_types"]["created_at"] == "datetime" and len(episode["embedding"]) == 384
    assert graph.graph["project"] == story.shop and graph.graph["vectors"] is True
    assert "scope" in episode  # carried, so an import can give the new project its own


@pytest.mark.slow
async def test_export_import_export_gives_the_same_graph(store: Any, story: Story) -> None:
    text = await _text(store, story.shop, "json", model="all-MiniLM-L6-v2", dimension=384)
    before = await digest_project(store, story.shop)
    assert digest_export(io.StringIO(text)) == before

    copy = f"{story.shop}-copy"
    summary = await import_graph(
        store, io.StringIO(text), project=copy, model="all-MiniLM-L6-v2", dimension=384
    )
    assert summary.refused == [] and summary.nodes > 0 and summary.edges > 0
    assert await digest_project(store, copy) == before
    again = await _text(store, copy, "json", model="all-MiniLM-L6-v2", dimension=384)
    assert digest_export(io.StringIO(again)) == before
    # Importing the same export again changes nothing.
    await import_graph(store, io.StringIO(text), project=copy, dimension=384)
    assert await digest_project(store, copy) == before

    # The vectors came back: the copy's episodes are found by a vector search in the copy.
    vector = await store.run_text(
        "MATCH (e:Episode {project: $p, id: 'shop-report-may-s0'}) RETURN e.embedding AS v",
        {"p": copy},
        read=True,
    )
    rows = await store.run_text(  # in the one index recall searches (issue 23)
        "CYPHER 25 MATCH (v:EpisodeVector) SEARCH v IN (VECTOR INDEX episode_vectors FOR $v "
        "WHERE v.project = $p LIMIT 1) SCORE AS score RETURN v.episode AS id",
        {"p": copy, "v": vector[0]["v"]},
        read=True,
    )
    assert rows and rows[0]["id"] == "shop-report-may-s0"
    scope = await store.run_text(
        "MATCH (e:Episode {project: $p}) RETURN DISTINCT e.scope AS s", {"p": copy}, read=True
    )
    original = await store.run_text(
        "MATCH (e:Episode {project: $p}) RETURN DISTINCT e.scope AS s",
        {"p": story.shop},
        read=True,
    )
    assert len(scope) == 1 and scope != original
    # the copy's sightings and fixes name its errors (read newest first by them: situations)
    named = await store.run_text(
        "MATCH (:Episode {project: $p})-[h:HIT|RESOLVED]->(r:Error) "
        "RETURN count(h) AS links, count(CASE WHEN h.project = $p AND h.error = r.key "
        "AND h.at IS NOT NULL THEN 1 END) AS named",
        {"p": copy},
        read=True,
    )
    assert named[0]["links"] > 0 and named[0]["named"] == named[0]["links"]
    # A project's clock only moves forward (graph/decay.py: recall's warm tier counts on it):
    # an export older than the project's own clock leaves it.
    later = await store.run_text(
        "MATCH (p:Project {name: $p}) SET p.active_at = p.active_at + duration({days: 1}) "
        "RETURN p.active_at AS at",
        {"p": copy},
    )
    await import_graph(store, io.StringIO(text), project=copy, dimension=384)
    kept = await store.run_text(
        "MATCH (p:Project {name: $p}) RETURN p.active_at AS at", {"p": copy}, read=True
    )
    assert later[0]["at"] is not None and kept == later


async def test_the_digest_sees_a_change(store: Any, own_story: Story) -> None:
    story = own_story
    before = await digest_project(store, story.shop)
    await store.run_text(
        "MATCH (e:Episode {project: $p, id: 'shop-report-may-s0'}) SET e.outcome = 'success'",
        {"p": story.shop},
    )
    assert await digest_project(store, story.shop) != before
    assert graph_digest([("Error", "k", {"a": 1})], []) != graph_digest(
        [("Error", "k", {"a": 2})], []
    )
    assert graph_digest([("Project", "a", {})], []) == graph_digest([("Project", "b", {})], [])


async def test_graphml_and_csv_tables(store: Any, story: Story) -> None:
    nodes, edges = await _counts(store, story.shop)
    graphml = await _text(store, story.shop, "graphml")
    graph = nx.read_graphml(io.StringIO(graphml))
    assert (graph.number_of_nodes(), graph.number_of_edges()) == (nodes, edges)
    episode = next(d for _, d in graph.nodes(data=True) if d.get("label") == "Episode")
    assert isinstance(episode["step"], int) and "embedding" not in episode
    assert graph.graph["project"] == story.shop

    node_rows = list(
        csv.DictReader(io.StringIO(await _text(store, story.shop, "csv", table="nodes")))
    )
    edge_rows = list(
        csv.DictReader(io.StringIO(await _text(store, story.shop, "csv", table="edges")))
    )
    assert (len(node_rows), len(edge_rows)) == (nodes, edges)
    task = next(r for r in node_rows if r["label"] == "Task" and r["key"] == "shop-report-may")
    assert task["title"] == "Sales report fails again after the platform upgrade"
    assert json.loads(task["properties"])["status"] == "resolved"
    ids = {r["id"] for r in node_rows}
    assert all(r["source"] in ids and r["target"] in ids for r in edge_rows)
    with pytest.raises(ValueError, match="table"):
        await _text(store, story.shop, "csv")
    with pytest.raises(ValueError, match="format"):
        await _text(store, story.shop, "pdf")


async def test_export_since_keeps_what_the_recent_episodes_touch(store: Any, story: Story) -> None:
    since = datetime(2026, 5, 1, tzinfo=UTC)
    text = await _text(store, story.shop, "json", since=since, vectors=False)
    graph = nx.node_link_graph(json.loads(text), edges="edges")
    episodes = {d["key"] for _, d in graph.nodes(data=True) if d["label"] == "Episode"}
    assert episodes == {"shop-report-may-s0", "shop-report-may-s1"}
    tasks = {d["key"] for _, d in graph.nodes(data=True) if d["label"] == "Task"}
    assert tasks == {"shop-report-may"}
    packages = {d["key"] for _, d in graph.nodes(data=True) if d["label"] == "Package"}
    assert "legacy-stats" in packages
    assert all("embedding" not in d for _, d in graph.nodes(data=True))
    assert graph.graph["since"].startswith("2026-05-01")


async def test_import_refuses_what_it_cannot_use(store: Any, story: Story, project: str) -> None:
    text = await _text(store, story.shop, "json", model="all-MiniLM-L6-v2", dimension=384)
    with pytest.raises(ImportRefused, match="dimensions"):
        await import_graph(store, io.StringIO(text), project=f"{project}-x", dimension=768)
    with pytest.raises(ImportRefused, match="model"):
        await import_graph(store, io.StringIO(text), project=f"{project}-x", model="other")
    with pytest.raises(ImportRefused, match="project"):
        await import_graph(store, io.StringIO(text), project="no|pipes")
    nothing = await store.run_text(
        "MATCH (n {project: $p}) RETURN count(n) AS n", {"p": f"{project}-x"}, read=True
    )
    assert nothing[0]["n"] == 0

    # A bad node and an edge to nowhere are refused with their place; the rest is written.
    parts = list(read_node_link(io.StringIO(text)))
    doc = {"directed": True, "multigraph": True, "graph": parts[0][1]}
    doc["nodes"] = [p[1] for p in parts if p[0] == "node"] + [{"id": "x", "label": "Nope"}]
    doc["edges"] = [p[1] for p in parts if p[0] == "edge"]
    doc["edges"].append({"source": "x", "target": "y", "type": "HIT"})
    summary = await import_graph(store, io.StringIO(json.dumps(doc)), project=f"{project}-y")
    assert len(summary.refused) == 2
    assert summary.refused[0].startswith(f"node {len(doc['nodes'])}: label")
    assert "does not hold" in summary.refused[1]
    assert summary.nodes == len(doc["nodes"]) - 1


def test_node_link_reader_streams_networkx_own_output() -> None:
    graph = nx.MultiDiGraph()
    graph.add_node("a", label="Tool", key="a", n=1.5)
    graph.add_edge("a", "b", key="k", type="X")
    text = json.dumps(nx.node_link_data(graph, edges="edges"))
    parts = list(read_node_link(io.StringIO(text)))
    assert [p[0] for p in parts].count("node") == 2 and ("edge" in [p[0] for p in parts])
    with pytest.raises(ValueError, match="character"):
        list(read_node_link(io.StringIO('{"nodes": [{"id": 1}, ')))
