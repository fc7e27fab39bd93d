"""Tags are abstracted like every other text before they are stored (issue 30, item 6): an
owner's address or a host's IP never comes back from recall nor names a Tag node."""

from __future__ import annotations

from typing import Any

import pytest

from metisgraph.ingest.prepare import clean_tags

RECORD = "mutation($i: EpisodeInput!) { recordEpisode(input: $i) { id status } }"
RECALL = """query($p: String!) { recall(project: $p, query: "the nightly backup failed")
  { hits { episode { id tags } } } }"""
TAGS = ["owner:alice.smith@example.com", "host:10.23.45.67", "team:payments"]


def test_tags_are_sanitized_like_text() -> None:
    assert clean_tags([*TAGS, "token:ghp_" + "a" * 36]) == [
        "owner:<EMAIL>",
        "host:<IP>",
        "team:payments",
        "token:[REDACTED:github_token]",
    ]


@pytest.mark.anyio
async def test_recall_and_tag_nodes_hold_no_instance_detail(
    gql: Any, store: Any, project: str
) -> None:
    episode = {"project": project, "id": "ep-1", "summary": "The nightly backup failed",
               "tags": TAGS}  # fmt: skip
    assert gql(RECORD, {"i": episode})["data"]["recordEpisode"]["status"] == "written"
    hits = gql(RECALL, {"p": project})["data"]["recall"]["hits"]
    assert hits and hits[0]["episode"]["tags"] == ["owner:<EMAIL>", "host:<IP>", "team:payments"]
    rows = await store.run_text(
        "MATCH (t:Tag {project: $p}) RETURN t.name AS name ORDER BY name", {"p": project}, read=True
    )
    names = [r["name"] for r in rows]
    assert names and not any("alice" in n or "10.23.45.67" in n for n in names), names
