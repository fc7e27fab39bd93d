"""Query.compare over HTTP with bearer tokens: two projects side by side — the errors they
share (and none they do not), each side's fixes and attempts read from the evidence links
(RESOLVED {kind, rule, why}, ATTEMPTED), a way that fixed an error in one project and failed
in the other, sightings after a fix; a project the token may not read is refused."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from story import Story, numpy_error_key, story_records

from metisgraph.ingest.errors import extract_errors

SHOP = {"Authorization": "Bearer cmp-shop-token-0123456789"}
BOTH = {"Authorization": "Bearer cmp-both-token-0123456789"}

# The story's shop fixed its missing yaml with `pip install pyyaml==6.0.1` (March). Billing
# meets the same error in June (its copy of the report, another path); the same install fails
# there and the error stays.
YAML = (
    "Traceback (most recent call last):\n"
    '  File "/home/ops/billing/shop/report.py", line 12, in <module>\n'
    "    import yaml\n"
    "ModuleNotFoundError: No module named 'yaml'"
)
RUN = "python -m shop.report --tenant billing --export"
NO_VERSION = (
    "ERROR: Could not find a version that satisfies the requirement pyyaml==6.0.1 "
    "(from versions: none)"
)

COMPARE = """query($p: [String!]!, $first: Int! = 20) { compare(projects: $p, first: $first) {
  projects sharedCount
  shared { key kind projects
    sides { id project key sightings tasks fixes open workarounds attemptCount recurrences
            afterFixElsewhere
            fixedBy { kind rule why confidence episode { episodeId project } }
            attempts { kind rule why episode { episodeId project } } }
    contrasts { rule why workedIn failedIn } } } }"""
ERRORS = """query($p: [String!]!) { errors(projects: $p, first: 200) {
  items { id key sightings tasks fixes open } } }"""


def _billing_yaml(project: str) -> list[Any]:
    from metisgraph.ingest.adapters.base import SourceRef, validate_record

    def episode(step: int, minute: int, command: str, **more: Any) -> dict[str, Any]:
        return {"record_type": "episode", "project": project, "id": f"billing-export-s{step}",
                "task_id": "billing-export", "step": step,
                "created_at": f"2026-06-03T10:{minute:02d}:00Z", "outcome": "failure",
                "source": "executed", "action": {"type": "command", "command": command},
                **more}  # fmt: skip

    raws = [
        {"record_type": "task", "project": project, "id": "billing-export",
         "goal": "The invoice export stops at import time", "status": "abandoned",
         "outcome": "failure", "started_at": "2026-06-03T10:00:00Z"},
        episode(0, 0, RUN, summary="Ran the export", error=YAML),
        episode(1, 5, "pip install pyyaml==6.0.1", summary="Tried to install the YAML parser",
                observation=NO_VERSION),
        episode(2, 10, RUN, summary="Ran the export again", error=YAML),
    ]  # fmt: skip
    return [validate_record(raw, SourceRef("compare", n)) for n, raw in enumerate(raws, 1)]


@pytest.fixture(scope="module")
def story(neo4j_settings: Any, embedder: Any) -> Story:
    import anyio

    from metisgraph.graph.indexes import apply_schema
    from metisgraph.graph.store import GraphStore, driver_from_settings
    from metisgraph.ingest.pipeline.ingestor import Ingestor

    name = f"cmp{uuid.uuid4().hex[:8]}"
    story = Story(shop=f"{name}-shop", billing=f"{name}-billing")

    async def load() -> None:
        driver = driver_from_settings(neo4j_settings)
        try:
            store = GraphStore(driver, neo4j_settings.database)
            await apply_schema(store, embedder.dimension)
            records = story_records(story) + _billing_yaml(story.billing)
            summary = await Ingestor(store, embedder).ingest(records)
            assert summary.refused == 0, summary.refusals
        finally:
            await driver.close()

    anyio.run(load)
    return story


@pytest.fixture(scope="module")
def api(app_settings: Any, embedder: Any, story: Story) -> Iterator[Any]:
    from pydantic import SecretStr
    from starlette.testclient import TestClient

    from metisgraph.api.http.app import create_app

    settings = app_settings.model_copy(deep=True)
    settings.api.api_tokens = SecretStr(
        f"cmp-shop-token-0123456789={story.shop};"
        f"cmp-both-token-0123456789={story.shop},{story.billing}"
    )
    app = create_app(settings, embedder=embedder, wait_ready=True)
    with TestClient(app, base_url="http://127.0.0.1") as client:
        yield client


def _ask(api: Any, headers: dict[str, str], query: str, **variables: Any) -> dict[str, Any]:
    response = api.post("/graphql", json={"query": query, "variables": variables}, headers=headers)
    assert response.status_code == 200, response.text
    answer: dict[str, Any] = response.json()
    return answer


def _compare(api: Any, story: Story, **more: Any) -> dict[str, Any]:
    body = _ask(api, BOTH, COMPARE, p=[story.billing, story.shop], **more)
    assert "errors" not in body, body
    found: dict[str, Any] = body["data"]["compare"]
    return found


def _sides(shared: dict[str, Any], story: Story) -> tuple[dict[str, Any], dict[str, Any]]:
    by = {s["project"]: s for s in shared["sides"]}
    return by[story.shop], by[story.billing]


def test_compare_lists_the_errors_both_projects_met_and_no_other(api: Any, story: Story) -> None:
    found = _compare(api, story)
    numpy, yaml = numpy_error_key(), extract_errors(YAML)[0].key
    assert found["projects"] == sorted(story.projects)
    # Both projects met the numpy error (4 sightings) and the missing yaml (3): nothing else
    # is in both — shop's pip resolution error and billing's export are theirs alone.
    assert [s["key"] for s in found["shared"]] == [numpy, yaml]
    assert found["sharedCount"] == 2
    for shared in found["shared"]:
        assert shared["projects"] == sorted(story.projects)
    # Each side's counts are the errors list's (one reading of sightings, fixes, state).
    listed = {i["id"]: i for p in story.projects for i in _errors(api, p)}
    for shared in found["shared"]:
        for side in shared["sides"]:
            want = listed[side["id"]]
            got = {k: side[k] for k in ("sightings", "tasks", "fixes", "open")}
            assert got == {k: want[k] for k in got}, (side, want)
    assert _compare(api, story, first=1)["sharedCount"] == 2  # the count is beyond the page


def test_where_each_was_fixed_and_the_recurrences_after_a_fix(api: Any, story: Story) -> None:
    numpy = _compare(api, story)["shared"][0]
    shop, billing = _sides(numpy, story)
    # Shop fixed it in March on evidence; it came back in May (after shop's own fix).
    assert shop["fixes"] >= 1 and shop["fixedBy"], shop
    assert all(f["episode"]["project"] == story.shop and f["rule"] for f in shop["fixedBy"])
    assert "shop-report-march" in shop["fixedBy"][0]["episode"]["episodeId"]
    assert shop["recurrences"] == 1 and shop["afterFixElsewhere"] == 0
    # Billing never fixed it: open, both its April sightings after shop's March fix; its
    # re-run with a clean cache acted on it (an attempt) and did not end it.
    assert billing["fixes"] == 0 and billing["fixedBy"] == [] and billing["open"]
    assert billing["recurrences"] == 0 and billing["afterFixElsewhere"] == 2
    assert billing["attemptCount"] == len(billing["attempts"]) >= 1
    assert {a["episode"]["episodeId"] for a in billing["attempts"]} == {"billing-totals-s1"}


def test_a_fix_that_worked_in_one_project_and_failed_in_the_other(api: Any, story: Story) -> None:
    yaml = _compare(api, story)["shared"][1]
    shop, billing = _sides(yaml, story)
    assert [f["episode"]["episodeId"] for f in shop["fixedBy"]] == ["shop-report-march-s1"]
    assert shop["fixedBy"][0]["kind"] == "fixed" and shop["fixedBy"][0]["rule"] == "module"
    assert [a["episode"]["episodeId"] for a in billing["attempts"]] == ["billing-export-s1"]
    way = shop["fixedBy"][0]["why"]
    assert billing["attempts"][0]["why"] == way and "pyyaml" in way
    assert yaml["contrasts"] == [
        {"rule": "module", "why": way, "workedIn": [story.shop], "failedIn": [story.billing]}
    ]
    # The numpy error has no such way: what billing tried was never what fixed it in shop.
    assert _compare(api, story)["shared"][0]["contrasts"] == []


def test_a_project_the_token_may_not_read_is_refused_never_shown(api: Any, story: Story) -> None:
    body = _ask(api, SHOP, COMPARE, p=[story.shop, story.billing])
    assert body.get("data") is None, body
    messages = " ".join(e["message"] for e in body["errors"])
    assert f"not allowed to read project(s): {story.billing}" in messages, body
    # A project that does not exist is refused the same way (existence is not told apart).
    ghost = f"{story.shop}-ghost"
    body = _ask(api, SHOP, COMPARE, p=[story.shop, ghost])
    assert body.get("data") is None and ghost in body["errors"][0]["message"], body


@pytest.mark.parametrize(
    ("variables", "field"),
    [({"first": 0}, "first"), ({"first": 101}, "first"), ({"one": True}, "projects")],
)
def test_bad_input_names_the_field(
    api: Any, story: Story, variables: dict[str, Any], field: str
) -> None:
    projects = [story.shop] if variables.pop("one", False) else story.projects
    body = _ask(api, BOTH, COMPARE, p=projects, **variables)
    assert body.get("data") is None, body
    assert body["errors"][0]["message"].startswith(f"{field}:"), body


def _errors(api: Any, project: str) -> list[dict[str, Any]]:
    body = _ask(api, BOTH, ERRORS, p=[project])
    items: list[dict[str, Any]] = body["data"]["errors"]["items"]
    return items
