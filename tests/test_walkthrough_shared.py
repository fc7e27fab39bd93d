"""The walk-through on ../shared/trajectories: two projects split by agent (mini-swe-agent in
one; SWE-agent and OpenHands in the other); an error's lineage across both with its fix;
analytics; an export opened with networkx and counted. Vectors from a fake embedder: nothing
here depends on meaning."""

from __future__ import annotations

import io
import json
import uuid
from collections import Counter
from pathlib import Path
from typing import Any

import networkx as nx
import pytest
from embedders import HashEmbedder

from metisgraph.graph.analytics import analytics
from metisgraph.graph.exports import ProjectGraph, export_chunks
from metisgraph.graph.lineage import LineageRequest, error_members, lineage
from metisgraph.ingest.adapters import read_path
from metisgraph.ingest.pipeline import Ingestor

pytestmark = [pytest.mark.anyio, pytest.mark.shared, pytest.mark.slow]


@pytest.fixture
async def walk(store: Any, shared_dir: Path) -> tuple[str, str]:
    root = shared_dir / "trajectories"
    name = f"walk{uuid.uuid4().hex[:8]}"
    mini, others = f"{name}-mini", f"{name}-others"
    ingestor = Ingestor(store, HashEmbedder())
    for folder, project in (
        ("mini-swe-agent-v1_gemini-3-pro_verified", mini),
        ("swe-agent_traj", others),
        ("openhands_output_jsonl", others),
    ):
        summary = await ingestor.ingest(read_path(root / folder, project=project))
        assert summary.written > 0, folder
    return mini, others


async def test_walkthrough_on_real_trajectories(store: Any, walk: tuple[str, str]) -> None:
    mini, others = walk
    both = [mini, others]

    # The errors with a fix that code made (FIXES), most sighted first.
    fixed = await store.run_text(
        "MATCH (s:Snippet)-[:FIXES]->(r:Error) WHERE r.project IN $projects "
        "RETURN DISTINCT r.project AS project, r.key AS key, r.kind AS kind, "
        "COUNT { (r)<-[:HIT]-() } AS sightings ORDER BY sightings DESC, project, key",
        {"projects": both},
        read=True,
    )
    assert {r["project"] for r in fixed} == set(both), "each agent group has fixed errors"

    # One error's lineage asked across both projects: every sighting, in time order, its fix.
    top = fixed[0]
    members = await error_members(store, both, [top["key"]])
    found = await lineage(store, LineageRequest(members=members))
    assert found.sighting_count == sum(e.sightings for e in found.errors) >= top["sightings"]
    times = [s.episode.created_at for s in found.sightings]
    assert times == sorted(times)
    # a fix is claimed on evidence (the step may have failed on another error after it)
    fix = next(f for f in found.fixes if "FIXES" in f.via)
    assert fix.snippets and fix.kind == "fixed" and fix.why and fix.confidence
    assert {p.project for p in found.projects} == {m.project for m in members}

    # Analytics on both projects: the tasks' error clusters, root causes, hubs, fix paths.
    measured = await analytics(store, both)
    episodes = await store.run_text(
        "MATCH (e:Episode) WHERE e.project IN $p RETURN count(e) AS n", {"p": both}, read=True
    )
    assert measured.episodes == episodes[0]["n"] and not measured.truncated
    assert measured.fix_paths and measured.hubs
    assert all(p.steps >= 1 and p.path[0].kind == "Error" for p in measured.fix_paths)

    # An export opened with networkx and counted, against the store's own counts.
    for project in both:
        text = "".join([c async for c in export_chunks(store, project, "json", vectors=False)])
        graph = nx.node_link_graph(json.loads(text), edges="edges")
        reader = ProjectGraph(store, project)
        nodes = Counter([n.ref.kind async for n in reader.nodes()])
        edges = Counter([e.type async for e in reader.edges()])
        assert Counter(d["label"] for _, d in graph.nodes(data=True)) == nodes
        assert Counter(d["type"] for _, _, d in graph.edges(data=True)) == edges
        assert nodes["Episode"] > 0 and edges["HIT"] > 0
        graphml = "".join([c async for c in export_chunks(store, project, "graphml")])
        assert nx.read_graphml(io.StringIO(graphml)).number_of_edges() == sum(edges.values())
