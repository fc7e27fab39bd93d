"""Review people can work: risky memories start pending, the queue pages, the four actions,
a correction is a new version with its reviewer and note, all through GraphQL."""

from __future__ import annotations

from typing import Any

import pytest

from metisgraph.ingest.adapters import SourceRef, validate_record
from metisgraph.ingest.prepare import prepare_episode

RECORD = "mutation($i: [EpisodeInput!]!) { recordEpisodes(inputs: $i) { written } }"
QUEUE = """query($p: String!, $after: String, $kind: ReviewKind) {
  reviewQueue(project: $p, first: 2, after: $after, kind: $kind) {
    total hasNextPage endCursor items { kind id reason command } } }"""
REVIEW = """mutation($p: String!, $id: String!, $a: ReviewAction!, $n: String,
                   $c: CorrectionInput) {
  review(project: $p, memoryId: $id, action: $a, note: $n, correction: $c) {
    id status reviewer note reason correctedBy versionOf { id reason reviewer note } } }"""
AUDIT = """query($p: String!) { auditLog(project: $p, first: 500) {
  entries { actor action target } } }"""
DETAIL = """query($p: String!, $id: String!) { memoryReview(project: $p, memoryId: $id) {
  id status reviewer note correctedBy versionOf { id } } }"""


def _episode(project: str, n: int, command: str) -> dict[str, Any]:
    return {
        "project": project,
        "id": f"ep-{n}",
        "summary": f"cleaned up the deployment, step {n}",
        "action": {"type": "command", "command": command},
        "outcome": "success",
    }


def test_critical_operations_start_pending() -> None:
    def status(command: str) -> str:
        raw = {"project": "p", "summary": "did it", "action": {"command": command}}
        item = validate_record(raw, SourceRef("t"))
        return prepare_episode(item.record).review_status  # type: ignore[union-attr, arg-type]

    assert status("kubectl delete namespace prod") == "pending"
    assert status('psql -c "DROP TABLE users"') == "pending"
    assert status("rm -rf /") == "pending"
    assert status("ls -la && git status") == "unreviewed"


def test_queue_pages_and_actions(gql: Any, project: str) -> None:
    commands = ["rm -rf /var/lib/app", "kubectl delete ns staging", "ls -la", "rm -rf $HOME"]
    episodes = [_episode(project, n, c) for n, c in enumerate(commands)]
    assert gql(RECORD, {"i": episodes})["data"]["recordEpisodes"]["written"] == 4
    first = gql(QUEUE, {"p": project, "kind": "EPISODE"})["data"]["reviewQueue"]
    assert first["total"] == 3 and first["hasNextPage"]
    assert [i["id"] for i in first["items"]] == ["ep-0", "ep-1"]
    assert "rm-rf" in first["items"][0]["reason"]
    after = {"p": project, "after": first["endCursor"], "kind": "EPISODE"}
    second = gql(QUEUE, after)["data"]["reviewQueue"]
    assert [i["id"] for i in second["items"]] == ["ep-3"] and not second["hasNextPage"]
    # The risky commands are also snippets of their own, pending with their risk.
    snippets = gql(QUEUE, {"p": project, "kind": "SNIPPET"})["data"]["reviewQueue"]
    everything = gql(QUEUE, {"p": project})["data"]["reviewQueue"]
    assert everything["total"] == 3 + snippets["total"]
    assert all(i["kind"] == "Snippet" and i["reason"] for i in snippets["items"])
    bad = gql(QUEUE, {"p": project, "after": "not-a-cursor"})
    assert "after" in bad["errors"][0]["message"]

    approved = gql(REVIEW, {"p": project, "id": "ep-0", "a": "APPROVE", "n": "checked"})
    assert approved["data"]["review"]["status"] == "approved"
    assert approved["data"]["review"]["note"] == "checked"
    held = gql(REVIEW, {"p": project, "id": "ep-2", "a": "HOLD"})["data"]["review"]
    assert held["status"] == "pending"
    rejected = gql(REVIEW, {"p": project, "id": "ep-3", "a": "REJECT"})["data"]["review"]
    assert rejected["status"] == "rejected"
    left = gql(QUEUE, {"p": project, "kind": "EPISODE"})["data"]["reviewQueue"]
    assert [i["id"] for i in left["items"]] == ["ep-1", "ep-2"]
    trail = gql(AUDIT, {"p": project})["data"]["auditLog"]["entries"]
    decided = {(e["action"], e["target"]) for e in trail}
    assert {("approve", "ep-0"), ("hold", "ep-2"), ("reject", "ep-3")} <= decided, trail


@pytest.mark.slow
def test_correction_is_a_new_version(gql: Any, project: str) -> None:
    assert gql(RECORD, {"i": [_episode(project, 1, "kubectl delete ns staging")]})["data"]
    change = {"command": "kubectl delete ns staging --dry-run=server", "outcome": "partial"}
    done = gql(
        REVIEW,
        {"p": project, "id": "ep-1", "a": "CORRECT", "n": "dry run first", "c": change},
    )
    assert "errors" not in done, done["errors"]
    new = done["data"]["review"]
    assert new["id"] != "ep-1" and new["status"] == "approved"
    assert new["versionOf"]["id"] == "ep-1"
    assert new["versionOf"]["reason"] == "corrected by a reviewer"
    assert new["versionOf"]["note"] == "dry run first" and new["versionOf"]["reviewer"]
    old = gql(DETAIL, {"p": project, "id": "ep-1"})["data"]["memoryReview"]
    assert old["status"] == "corrected" and old["correctedBy"] == new["id"]
    # The old version is kept and out of recall; the correction comes back instead.
    hits = gql(
        """query($p: String!) { recall(project: $p, query: "delete the staging namespace")
           { hits { episode { id outcome source } } } }""",
        {"p": project},
    )["data"]["recall"]["hits"]
    ids = [h["episode"]["id"] for h in hits]
    assert "ep-1" not in ids and new["id"] in ids
    corrected = next(h["episode"] for h in hits if h["episode"]["id"] == new["id"])
    assert corrected["outcome"] == "partial" and corrected["source"] == "reviewer"
    trail = gql(AUDIT, {"p": project})["data"]["auditLog"]["entries"]
    assert ("correct", "ep-1") in {(e["action"], e["target"]) for e in trail}, trail
    nothing = gql(REVIEW, {"p": project, "id": new["id"], "a": "CORRECT", "c": {}})
    assert "correction" in nothing["errors"][0]["message"]


def test_review_memory_still_works(gql: Any, project: str) -> None:
    """The old mutation stays (deprecated) and does what it did."""
    gql(RECORD, {"i": [_episode(project, 5, "ls")]})
    body = gql(
        """mutation($p: String!) { reviewMemory(project: $p, memoryId: "ep-5",
           status: "approved") { id status } }""",
        {"p": project},
    )
    assert body["data"]["reviewMemory"]["status"] == "approved"
