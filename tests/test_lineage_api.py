"""Lineage, browsing, analytics and exports over HTTP, with bearer tokens: a token for one
project reads that project only; another tenant's ids are "not found", like unknown ones."""

from __future__ import annotations

import io
import json
import uuid
from collections.abc import Iterator
from typing import Any

import networkx as nx
import pytest
from story import STORY, Story, ingest_story, numpy_error_key

from metisgraph.graph import NodeRef

SHOP = {"Authorization": "Bearer shop-token-0123456789"}
BOTH = {"Authorization": "Bearer both-token-0123456789"}

LINEAGE = """
query($projects: [String!]!, $error: ErrorRef!, $limit: Int! = 100, $after: String) {
  lineage(projects: $projects, error: $error, limit: $limit, after: $after) {
    errors { id project key kind sightings }
    sightingCount
    firstSighting { id project episodeId at }
    lastSighting { episodeId }
    sightings { episode { id episodeId project createdAt outcome taskId }
                task { goal status } environment { runtimeVersion } tools }
    pageInfo { endCursor hasNextPage }
    triedAndFailed { episode { episodeId } errors }
    fixes { episode { episodeId } via kind why confidence snippets { id name kind } }
    recurrences { episode { episodeId } fix { episodeId } sameProject
                  difference { known packages { name fixed failing change } } }
    recurrenceCount
    related { kind preceded followed together }
    projects { project sightings fixes }
    warnings
  }
}"""


@pytest.fixture(scope="module")
def story(neo4j_settings: Any, embedder: Any) -> Story:
    name = f"lapi{uuid.uuid4().hex[:8]}"
    story = Story(shop=f"{name}-shop", billing=f"{name}-billing")
    ingest_story(neo4j_settings, embedder, story)
    return story


@pytest.fixture(scope="module")
def api(app_settings: Any, embedder: Any, story: Story) -> Iterator[Any]:
    from pydantic import SecretStr
    from starlette.testclient import TestClient

    from metisgraph.api.http.app import create_app

    settings = app_settings.model_copy(deep=True)
    settings.api.api_tokens = SecretStr(
        f"shop-token-0123456789={story.shop};both-token-0123456789={story.shop},{story.billing}"
    )
    app = create_app(settings, embedder=embedder, wait_ready=True)
    with TestClient(app, base_url="http://127.0.0.1") as client:
        yield client


def _ask(api: Any, query: str, headers: dict[str, str], **variables: Any) -> dict[str, Any]:
    response = api.post("/graphql", json={"query": query, "variables": variables}, headers=headers)
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    return body


def _np_text() -> str:
    for line in STORY.read_text().splitlines():
        error = json.loads(line).get("error") or ""
        if "billing" not in error and "no attribute 'float'" in error:
            return error
    raise AssertionError


def test_lineage_across_both_projects_by_each_kind_of_name(api: Any, story: Story) -> None:
    both = [story.shop, story.billing]
    body = _ask(api, LINEAGE, BOTH, projects=both, error={"text": _np_text()})
    assert "errors" not in body, body
    lineage = body["data"]["lineage"]
    assert lineage["sightingCount"] == 4
    assert [s["episode"]["episodeId"] for s in lineage["sightings"]] == [
        "shop-report-march-s2",
        "billing-totals-s0",
        "billing-totals-s1",
        "shop-report-may-s0",
    ]
    assert lineage["firstSighting"]["episodeId"] == "shop-report-march-s2"
    assert lineage["lastSighting"]["episodeId"] == "shop-report-may-s0"
    patch = next(f for f in lineage["fixes"] if f["episode"]["episodeId"].endswith("march-s4"))
    # the step's code: the patch, and the shell line that applied it
    kinds = {s["kind"] for s in patch["snippets"]}
    assert "patch" in kinds and patch["via"] == ["FIXES", "RESOLVED"]
    assert patch["kind"] == "fixed" and patch["why"][0].startswith("frame: edits shop/report.py")
    assert 0 < patch["confidence"] <= 1
    may = next(r for r in lineage["recurrences"] if r["episode"]["episodeId"].endswith("may-s0"))
    changes = {p["name"]: (p["fixed"], p["failing"]) for p in may["difference"]["packages"]}
    assert changes["numpy"] == ("1.24.2", "1.26.4") and changes["legacy-stats"] == (None, "0.3.1")
    assert {p["project"]: p["sightings"] for p in lineage["projects"]} == {
        story.shop: 2,
        story.billing: 2,
    }
    # Each step links on: its id opens it with node(id), its task with task(id).
    first = lineage["sightings"][0]["episode"]
    node = _ask(api, "query($id: ID!) { node(id: $id) { kind key } }", BOTH, id=first["id"])
    assert node["data"]["node"] == {"kind": "Episode", "key": "shop-report-march-s2"}
    task = _ask(api, "query($id: ID!) { task(id: $id) { stepCount } }", BOTH, id=first["taskId"])
    assert task["data"]["task"]["stepCount"] == 6

    error_id = lineage["errors"][0]["id"]
    signature = _ask(api, "query($id: ID!) { error(id: $id) { signature } }", BOTH, id=error_id)
    for name in (
        {"id": error_id},
        {"key": numpy_error_key()},
        {"signature": signature["data"]["error"]["signature"]},
    ):
        again = _ask(api, LINEAGE, BOTH, projects=both, error=name)["data"]["lineage"]
        assert again == lineage, name


def test_sightings_page_over_http(api: Any, story: Story) -> None:
    seen, after = [], None
    for _ in range(6):
        body = _ask(api, LINEAGE, BOTH, projects=[story.shop, story.billing],
                    error={"key": numpy_error_key()}, limit=3, after=after)  # fmt: skip
        page = body["data"]["lineage"]
        seen += [s["episode"]["episodeId"] for s in page["sightings"]]
        after = page["pageInfo"]["endCursor"]
        if not page["pageInfo"]["hasNextPage"]:
            break
    assert len(seen) == len(set(seen)) == 4
    bad = _ask(api, LINEAGE, BOTH, projects=[story.shop], error={"key": numpy_error_key()},
               after="bm9wZQ")  # fmt: skip
    assert "after" in bad["errors"][0]["message"]
    too_many = _ask(api, LINEAGE, BOTH, projects=[story.shop], error={"key": numpy_error_key()},
                    limit=10_000)  # fmt: skip
    assert "limit" in too_many["errors"][0]["message"]


def test_bad_error_names_are_refused_with_the_field(api: Any, story: Story) -> None:
    for name, field in (
        ({}, "give exactly one"),
        ({"key": "abc", "text": "x"}, "give exactly one"),
        ({"key": "not-hex"}, "error.key"),
        ({"text": "   "}, "error.text"),
        ({"text": "all is well"}, "no error found"),
        ({"id": "garbage"}, "id: not a global id"),
    ):
        body = _ask(api, LINEAGE, SHOP, projects=[story.shop], error=name)
        assert field in body["errors"][0]["message"], (name, body)


def test_a_token_reads_its_projects_only(api: Any, story: Story) -> None:
    denied = [
        (LINEAGE, {"projects": [story.shop, story.billing], "error": {"key": "0" * 16}}),
        ("query($p: [String!]!) { errors(projects: $p) { totalCount } }",
         {"p": [story.billing]}),
        ("query($p: [String!]!) { analytics(projects: $p) { episodes } }",
         {"p": [story.shop, story.billing]}),
    ]  # fmt: skip
    for query, variables in denied:
        body = _ask(api, query, SHOP, **variables)
        assert f"not allowed to read project(s): {story.billing}" in body["errors"][0]["message"]
    listed = _ask(api, "{ projects { name } }", SHOP)["data"]["projects"]
    assert [p["name"] for p in listed] == [story.shop]


@pytest.mark.slow
def test_another_tenants_ids_are_not_found_like_unknown_ones(api: Any, story: Story) -> None:
    theirs = {
        "error": NodeRef("Error", story.billing, numpy_error_key()).id,
        "task": NodeRef("Task", story.billing, "billing-totals").id,
        "node": NodeRef("Episode", story.billing, "billing-totals-s0").id,
        "neighbourhood": NodeRef("Error", story.billing, numpy_error_key()).id,
    }
    unknown = {
        "error": NodeRef("Error", story.shop, "0" * 16).id,
        "task": NodeRef("Task", story.shop, "nothing").id,
        "node": NodeRef("Episode", story.shop, "nothing").id,
        "neighbourhood": NodeRef("Error", story.shop, "0" * 16).id,
    }
    fields = {"error": "{ key }", "task": "{ goal }", "node": "{ key }",
              "neighbourhood": "{ nodes { id } }"}  # fmt: skip
    for field, selection in fields.items():
        query = f"query($id: ID!) {{ {field}(id: $id) {selection} }}"
        for ids in (theirs, unknown):
            assert _ask(api, query, SHOP, id=ids[field]) == {"data": {field: None}}, field
        # The owner's token does read it.
        assert _ask(api, query, BOTH, id=theirs[field])["data"][field] is not None
    # A lineage by their error's id finds nothing, exactly like an unknown id.
    mine = _ask(api, LINEAGE, SHOP, projects=[story.shop], error={"id": theirs["error"]})
    none = _ask(api, LINEAGE, SHOP, projects=[story.shop], error={"id": unknown["error"]})
    assert mine == none and mine["data"]["lineage"]["sightingCount"] == 0
    # What their error links to never shows in a neighbourhood of ours.
    around = _ask(api, "query($id: ID!) { neighbourhood(id: $id, depth: 2, limit: 500) "
                  "{ nodes { project } edges { source target } } }", SHOP,
                  id=NodeRef("Error", story.shop, numpy_error_key()).id)  # fmt: skip
    assert {n["project"] for n in around["data"]["neighbourhood"]["nodes"]} == {story.shop}


def test_errors_error_and_analytics_over_graphql(api: Any, story: Story) -> None:
    query = """query($p: [String!]!, $after: String) {
      errors(projects: $p, orderBy: UNRESOLVED, first: 1, after: $after) {
        totalCount items { id project kind open sightings } pageInfo { endCursor hasNextPage }
      } }"""
    body = _ask(api, query, BOTH, p=[story.shop, story.billing])
    page = body["data"]["errors"]
    # open: billing's numpy error, and shop's pip conflict — which only its task's end
    # "fixed" before fixes needed evidence
    assert page["totalCount"] == 2 and page["items"][0]["project"] == story.billing
    assert page["pageInfo"]["hasNextPage"] is True
    detail = _ask(api, "query($id: ID!) { error(id: $id) { alsoIn frames open } }", BOTH,
                  id=page["items"][0]["id"])  # fmt: skip
    assert detail["data"]["error"]["alsoIn"] == [story.shop]
    hidden = _ask(api, "query($id: ID!) { error(id: $id) { alsoIn } }", SHOP,
                  id=NodeRef("Error", story.shop, numpy_error_key()).id)  # fmt: skip
    assert hidden["data"]["error"]["alsoIn"] == []  # billing is not the shop token's to see

    analytics = """query($p: [String!]!) { analytics(projects: $p) {
      episodes truncated warnings clusters { errors { kind ids } tasks }
      rootCauses { error { kind } leads share } hubs { kind name betweenness }
      fixPaths { error { kind } snippet steps path { kind id label } }
      overRepresented { name version lift } } }"""
    result = _ask(api, analytics, BOTH, p=[story.shop, story.billing])["data"]["analytics"]
    assert result["episodes"] == 10 and not result["truncated"]
    assert result["rootCauses"][0]["error"]["kind"] == "python:ModuleNotFoundError"
    assert any(p["snippet"] == "upgrade legacy-stats" for p in result["fixPaths"])


def test_export_over_http_streams_a_tokens_projects_only(api: Any, story: Story) -> None:
    assert api.get(f"/export?project={story.shop}").status_code == 401
    forbidden = api.get(f"/export?project={story.billing}", headers=SHOP)
    assert forbidden.status_code == 403
    assert story.billing in forbidden.json()["errors"][0]["message"]
    for params, message in (
        ("format=pdf", "format"),
        ("format=csv", "table"),
        ("since=yesterday", "since"),
        ("vectors=maybe", "vectors"),
    ):
        bad = api.get(f"/export?project={story.shop}&{params}", headers=SHOP)
        assert bad.status_code == 400 and message in bad.json()["errors"][0]["message"]

    response = api.get(f"/export?project={story.shop}&format=json", headers=SHOP)
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("application/json")
    graph = nx.node_link_graph(response.json(), edges="edges")
    assert {d["project"] for _, d in graph.nodes(data=True)} == {story.shop}
    assert graph.number_of_edges() > graph.number_of_nodes() > 20

    graphml = api.get(f"/export?project={story.shop}&format=graphml&since=2026-05-01", headers=SHOP)
    small = nx.read_graphml(io.BytesIO(graphml.content))
    assert 0 < small.number_of_nodes() < graph.number_of_nodes()
    edges = api.get(f"/export?project={story.shop}&format=csv&table=edges", headers=SHOP)
    assert edges.text.splitlines()[0] == "source,type,target,properties"
    assert len(edges.text.splitlines()) == graph.number_of_edges() + 1
