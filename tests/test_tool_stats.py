"""Tools with statistics, through GraphQL on the real Neo4j: uses, successes, failures and
the last use per project, kept at write time and recounted by forget; shown in recall's
why and in planContext; the `tools` query ranks a project's tools by failure rate."""

from __future__ import annotations

from typing import Any

RECORD = """
mutation($inputs: [EpisodeInput!]!) {
  recordEpisodes(inputs: $inputs) { refused results { id status } }
}"""
TOOLS = """
query($p: String!) {
  tools(project: $p) { name uses successes failures failureRate lastUsedAt }
}"""
RECALL = """
query($p: String!, $q: String!) {
  recall(project: $p, query: $q, k: 5) {
    hits { episode { id } why { tools { name uses successes failures failureRate } } }
  }
}"""
PLAN = """
query($p: String!, $g: String!) {
  planContext(project: $p, task: {goal: $g}, k: 5) { memories { id text } }
}"""
FORGET = "mutation($p: String!, $e: String!) { forget(project: $p, episodeId: $e) { deleted } }"


def _episode(project: str, id_: str, command: str, outcome: str, at: str) -> dict[str, Any]:
    return {
        "project": project, "id": id_, "outcome": outcome, "createdAt": at,
        "summary": f"looked for the leak in the order service with {command.split()[0]}",
        "action": {"type": "command", "command": command},
    }  # fmt: skip


def _record(gql: Any, inputs: list[dict[str, Any]]) -> None:
    body = gql(RECORD, {"inputs": inputs})
    assert "errors" not in body and body["data"]["recordEpisodes"]["refused"] == 0, body


def _tools(gql: Any, project: str) -> list[dict[str, Any]]:
    body = gql(TOOLS, {"p": project})
    assert "errors" not in body, body
    found: list[dict[str, Any]] = body["data"]["tools"]
    return found


def test_tool_statistics_kept_shown_ranked_and_recounted(gql: Any, project: str) -> None:
    leak = "--leak-check=full"
    episodes = [
        _episode(project, "v1", f"valgrind {leak} ./orders", "failure", "2026-01-02T10:00Z"),
        _episode(project, "v2", "valgrind --track-origins=yes ./orders", "failure",
                 "2026-01-03T10:00Z"),
        _episode(project, "v3", f"valgrind {leak} --show-reachable=yes ./orders", "success",
                 "2026-01-04T10:00Z"),
        _episode(project, "g1", "gdb -batch -ex run ./orders", "success", "2026-01-05T10:00Z"),
    ]  # fmt: skip
    _record(gql, episodes)
    tools = {t["name"]: t for t in _tools(gql, project)}
    assert [t["name"] for t in _tools(gql, project)][:2] == ["valgrind", "gdb"]
    valgrind = tools["valgrind"]
    assert (valgrind["uses"], valgrind["successes"], valgrind["failures"]) == (3, 1, 2)
    assert abs(valgrind["failureRate"] - 2 / 3) < 1e-9
    assert valgrind["lastUsedAt"].startswith("2026-01-04")
    assert (tools["gdb"]["uses"], tools["gdb"]["failures"], tools["gdb"]["failureRate"]) == (
        1,
        0,
        0,
    )

    _record(gql, episodes[:1])  # written again: nothing counts twice
    assert {t["name"]: t for t in _tools(gql, project)} == tools

    body = gql(RECALL, {"p": project, "q": "find the memory leak in the order service"})
    assert "errors" not in body, body
    why = {h["episode"]["id"]: h["why"]["tools"] for h in body["data"]["recall"]["hits"]}
    assert {"name": "valgrind", "uses": 3, "successes": 1, "failures": 2,
            "failureRate": valgrind["failureRate"]} in why["v1"]  # fmt: skip
    plan = gql(PLAN, {"p": project, "g": "find the memory leak in the order service"})
    assert "errors" not in plan, plan
    text = " ".join(m["text"] for m in plan["data"]["planContext"]["memories"])
    assert "valgrind (3 uses, 1 succeeded, 2 failed, last 2026-01-04)" in text

    gone = gql(FORGET, {"p": project, "e": "v1"})
    assert "errors" not in gone and gone["data"]["forget"]["deleted"] >= 1, gone
    after = {t["name"]: t for t in _tools(gql, project)}
    assert (after["valgrind"]["uses"], after["valgrind"]["failures"]) == (2, 1)
    assert after["valgrind"]["failureRate"] == 0.5
    assert [t["name"] for t in _tools(gql, project)][:2] == ["valgrind", "gdb"]
