"""Query.search over HTTP with bearer tokens: a pasted trace finds its error by signature in
every project the token may read (and no other), with sightings, fixes and state as the
errors list counts them; words find episodes; bad input is refused naming the field."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from story import Story, ingest_story, numpy_error_key

from metisgraph.graph import NodeRef

SHOP = {"Authorization": "Bearer shop-token-0123456789"}
BOTH = {"Authorization": "Bearer both-token-0123456789"}

# The story's numpy error as another machine would print it: other paths, other line numbers.
PASTED = """Traceback (most recent call last):
  File "/home/someone/work/shop/report.py", line 97, in build_totals
    return np.float(sum(rows)) / len(rows)
  File "/usr/lib/python3/site-packages/numpy/__init__.py", line 319, in __getattr__
    raise AttributeError(__former_attrs__[attr])
AttributeError: module 'numpy' has no attribute 'float'"""

SEARCH = """query($text: String!, $projects: [String!], $first: Int! = 20) {
  search(text: $text, projects: $projects, first: $first) {
    signed
    errors { id project key sightings tasks fixes open matched }
    episodes { episode { id project episodeId summary } score errors }
  }
}"""
ERRORS = """query($p: [String!]!) { errors(projects: $p, first: 200) {
  items { id sightings tasks fixes open } } }"""


@pytest.fixture(scope="module")
def story(neo4j_settings: Any, embedder: Any) -> Story:
    name = f"srch{uuid.uuid4().hex[:8]}"
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


def _ask(api: Any, headers: dict[str, str], **variables: Any) -> dict[str, Any]:
    body = {"query": SEARCH, "variables": variables}
    response = api.post("/graphql", json=body, headers=headers)
    assert response.status_code == 200, response.text
    answer: dict[str, Any] = response.json()
    return answer


def test_a_pasted_trace_finds_its_error_in_every_readable_project(api: Any, story: Story) -> None:
    found = _ask(api, BOTH, text=PASTED)["data"]["search"]
    key = numpy_error_key()
    assert found["signed"] == [key]
    signed = [e for e in found["errors"] if e["matched"] == "SIGNATURE"]
    assert {(e["project"], e["key"]) for e in signed} == {(story.shop, key), (story.billing, key)}
    # Its counts are the errors list's: one reading of sightings, fixes and state.
    listed = {i["id"]: i for p in (story.shop, story.billing) for i in _errors(api, p)}
    for e in signed:
        assert e["id"] == NodeRef("Error", e["project"], key).id
        want = listed[e["id"]]
        assert (e["sightings"], e["tasks"], e["fixes"], e["open"]) == (
            want["sightings"], want["tasks"], want["fixes"], want["open"],
        )  # fmt: skip
    shop = next(e for e in signed if e["project"] == story.shop)
    assert shop["sightings"] >= 1 and shop["fixes"] >= 1
    # The same words find the episodes that hit it, first.
    assert found["episodes"] and found["episodes"][0]["episode"]["project"] in {
        story.shop, story.billing,
    }  # fmt: skip


def _errors(api: Any, project: str) -> list[dict[str, Any]]:
    response = api.post(
        "/graphql", json={"query": ERRORS, "variables": {"p": [project]}}, headers=BOTH
    )
    items: list[dict[str, Any]] = response.json()["data"]["errors"]["items"]
    return items


def test_a_token_finds_only_what_it_may_read(api: Any, story: Story) -> None:
    found = _ask(api, SHOP, text=PASTED)["data"]["search"]
    hits = found["errors"] + [e["episode"] for e in found["episodes"]]
    assert hits and {h["project"] for h in hits} == {story.shop}
    refused = _ask(api, SHOP, text=PASTED, projects=[story.billing])
    assert f"not allowed to read project(s): {story.billing}" in refused["errors"][0]["message"]


def test_words_find_episodes_and_the_errors_they_hit(api: Any, story: Story) -> None:
    found = _ask(api, BOTH, text="pip refused to pin numpy", projects=[story.shop])["data"]
    top = found["search"]["episodes"][0]
    assert top["episode"]["episodeId"] == "shop-report-march-s3"
    assert found["search"]["signed"] == []
    by_episodes = {e["id"] for e in found["search"]["errors"] if e["matched"] == "EPISODES"}
    assert set(top["errors"]) <= by_episodes and top["errors"]


@pytest.mark.parametrize(
    ("variables", "message"),
    [
        ({"text": "  "}, "text: must not be empty"),
        ({"text": "x", "first": 0}, "first: between 1 and 100"),
        ({"text": "x", "projects": []}, "projects: name at least one project"),
    ],
)
def test_bad_input_is_refused_naming_the_field(
    api: Any, variables: dict[str, Any], message: str
) -> None:
    answer = _ask(api, BOTH, **variables)
    assert message in answer["errors"][0]["message"], answer
