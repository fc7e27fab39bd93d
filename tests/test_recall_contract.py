"""The recall contract through GraphQL against the real Neo4j and the real model.

recall(project, query, context: RecallContext, filter: RecallFilter, k): RecallResult —
filters, cross-project scope, expansion across the bridge, conflicts, abstention, trust.
"""

from __future__ import annotations

from typing import Any

import pytest

RECORD_MANY = """
mutation($inputs: [EpisodeInput!]!) {
  recordEpisodes(inputs: $inputs) { written refused results { id status errors { field message } } }
}"""
RECORD_TASK = """
mutation($input: TaskInput!) { recordTask(input: $input) { id status } }"""
REVIEW = """
mutation($p: String!, $id: String!, $s: String!) {
  reviewMemory(project: $p, memoryId: $id, status: $s) { id kind status }
}"""
RECALL = """
query($project: String!, $query: String!, $k: Int, $context: RecallContext, $filter: RecallFilter) {
  recall(project: $project, query: $query, k: $k, context: $context, filter: $filter) {
    abstained reason
    conflicts { a { id outcome } b { id outcome } reason similarity }
    hits {
      score flagged
      why { relevance trustAdjustment channels { channel score rank contribution }
            trust { factor value }
            evidence { source prior priorStrength successes failures posteriorMean idleDays } }
      episode { id project outcome kind reviewStatus confidence createdAt summary }
      task { id goal status outcome steps }
      previous { id step } next { id step }
      errors { relation kind template }
      environment { runtime runtimeVersion os packages { name version } }
      snippets { relation compatible compatibility { status reasons } successRate risk
                 snippet { id kind language imports } }
    }
  }
}"""


def _record(gql: Any, inputs: list[dict[str, Any]]) -> None:
    body = gql(RECORD_MANY, {"inputs": inputs})
    assert "errors" not in body, body
    assert body["data"]["recordEpisodes"]["refused"] == 0, body


def _recall(gql: Any, project: str, query: str, **variables: Any) -> dict[str, Any]:
    body = gql(RECALL, {"project": project, "query": query, "k": 5, **variables})
    assert "errors" not in body, body
    result: dict[str, Any] = body["data"]["recall"]
    return result


def _ids(result: dict[str, Any]) -> list[str]:
    return [h["episode"]["id"] for h in result["hits"]]


LEAK = "The worker's memory grew for days; valgrind showed buffers never freed in parse_data"


@pytest.fixture
def outcomes_project(gql: Any, project: str) -> str:
    _record(gql, [
        {"project": project, "id": "old-fail", "summary": LEAK + " (first attempt)",
         "outcome": "failure", "createdAt": "2024-01-10T10:00:00Z", "confidence": 0.4,
         "kind": "step"},
        {"project": project, "id": "new-fix", "summary": LEAK + "; freeing them fixed it",
         "outcome": "success", "createdAt": "2026-06-01T10:00:00Z", "confidence": 0.9,
         "kind": "fix", "source": "executed"},
        {"project": project, "id": "other", "summary": "Rotated the TLS certificates of the proxy",
         "outcome": "success", "createdAt": "2026-06-02T10:00:00Z", "kind": "step"},
    ])  # fmt: skip
    return project


@pytest.mark.slow
def test_filters_narrow_what_comes_back(gql: Any, outcomes_project: str) -> None:
    question = "memory keeps growing, a leak in the parser?"
    assert set(_ids(_recall(gql, outcomes_project, question))) >= {"old-fail", "new-fix"}
    only_success = _recall(gql, outcomes_project, question, filter={"outcome": ["success"]})
    assert "old-fail" not in _ids(only_success)
    assert all(h["episode"]["outcome"] == "success" for h in only_success["hits"])
    since = _recall(gql, outcomes_project, question, filter={"since": "2025-01-01T00:00:00Z"})
    assert "old-fail" not in _ids(since) and "new-fix" in _ids(since)
    until = _recall(gql, outcomes_project, question, filter={"until": "2025-01-01T00:00:00Z"})
    assert _ids(until) == ["old-fail"]
    confident = _recall(gql, outcomes_project, question, filter={"minConfidence": 0.8})
    assert "old-fail" not in _ids(confident) and "new-fix" in _ids(confident)
    kinds = _recall(gql, outcomes_project, question, filter={"kinds": ["fix"]})
    assert _ids(kinds) == ["new-fix"]


def test_every_hit_explains_itself(gql: Any, outcomes_project: str) -> None:
    hit = _recall(gql, outcomes_project, "memory leak in parse_data")["hits"][0]
    channels = {c["channel"]: c for c in hit["why"]["channels"]}
    assert "vector" in channels and channels["vector"]["rank"] >= 1
    assert {t["factor"] for t in hit["why"]["trust"]} == {"confidence", "review", "decay"}
    fix = next(h for h in _recall(gql, outcomes_project, "memory leak")["hits"]
               if h["episode"]["id"] == "new-fix")  # fmt: skip
    evidence = fix["why"]["evidence"]  # an executed fix with no report yet: its prior alone
    assert (evidence["source"], evidence["successes"], evidence["failures"]) == ("executed", 0, 0)
    assert evidence["posteriorMean"] == pytest.approx(evidence["prior"]) == pytest.approx(0.9)
    assert evidence["idleDays"] < 1  # stored just now: imported history is not stale
    total = hit["why"]["relevance"] + hit["why"]["trustAdjustment"]
    assert hit["score"] == pytest.approx(total)


def test_rejected_never_returns_and_pending_is_flagged(gql: Any, outcomes_project: str) -> None:
    p = outcomes_project
    reviewed = gql(REVIEW, {"p": p, "id": "new-fix", "s": "pending"})["data"]["reviewMemory"]
    assert (reviewed["kind"], reviewed["status"]) == ("Episode", "pending")
    hits = {h["episode"]["id"]: h for h in _recall(gql, p, "valgrind leak parse_data")["hits"]}
    assert hits["new-fix"]["flagged"] == ["pending review"]
    gql(REVIEW, {"p": p, "id": "new-fix", "s": "rejected"})
    assert "new-fix" not in _ids(_recall(gql, p, "valgrind leak parse_data"))
    asked = gql(RECALL, {"project": p, "query": "valgrind leak parse_data", "k": 5,
                         "filter": {"reviewStatus": ["rejected"]}})  # fmt: skip
    assert asked["data"] is None  # not even when asked for: the caller is told so
    assert "rejected memories never return" in asked["errors"][0]["message"]


@pytest.mark.slow
def test_filters_out_of_range_are_refused_and_times_without_a_zone_are_utc(
    gql: Any, outcomes_project: str
) -> None:
    def error(**filter: Any) -> str:
        body = gql(RECALL, {"project": outcomes_project, "query": "leak", "k": 5, "filter": filter})
        return str(body.get("errors", [{}])[0].get("message"))

    assert "minConfidence must be between 0 and 1" in error(minConfidence=5)
    huge = gql(RECALL, {"project": outcomes_project, "query": "leak " * 50_000, "k": 5})
    assert "query: at most 200000 characters" in huge["errors"][0]["message"]
    assert "unknown or unrecallable review status" in error(reviewStatus=["aproved"])
    window = {"since": "2000-01-01T00:00:00", "until": "2999-01-01T00:00:00Z"}
    naive = _recall(gql, outcomes_project, "memory leak", filter=window)
    assert naive["hits"]  # compared as UTC, not an internal error and not an empty answer
    assert "since is after" in error(since="2999-01-01T00:00:00", until="2000-01-01T00:00:00Z")


def test_unknown_memory_cannot_be_reviewed(gql: Any, project: str) -> None:
    body = gql(REVIEW, {"p": project, "id": "nope", "s": "approved"})
    assert "no episode or snippet 'nope'" in body["errors"][0]["message"]
    body = gql(REVIEW, {"p": project, "id": "nope", "s": "maybe"})
    assert "status must be one of" in body["errors"][0]["message"]


@pytest.mark.slow
def test_cross_project_recall_reads_only_the_projects_named(gql: Any, project: str) -> None:
    other = project + "-b"
    _record(
        gql,
        [
            {
                "project": project,
                "id": "a1",
                "summary": "ORA-04031 in the nightly report; bind variables fixed the shared pool",
                "outcome": "success",
            }
        ],
    )
    _record(gql, [{"project": other, "id": "b1", "summary": "ORA-04031 unable to allocate shared "
                   "memory; raised shared_pool_size", "outcome": "success"}])  # fmt: skip
    alone = _recall(gql, project, "who else solved ORA-04031 and how?")
    assert {h["episode"]["project"] for h in alone["hits"]} == {project}
    both = _recall(gql, project, "who else solved ORA-04031 and how?",
                   context={"projects": [other]})  # fmt: skip
    assert {h["episode"]["project"] for h in both["hits"]} == {project, other}


@pytest.mark.slow
def test_expansion_walks_the_bridge(gql: Any, project: str) -> None:
    task = {"project": project, "id": "t1", "goal": "Make the CSV export fast again",
            "status": "resolved", "outcome": "success"}  # fmt: skip
    assert gql(RECORD_TASK, {"input": task})["data"]["recordTask"]["status"] == "written"
    trace = ("Traceback (most recent call last):\n  File \"/srv/app/export.py\", line 12, in run\n"
             "    rows = pandas.read_sql(query, conn)\nMemoryError: cannot allocate")  # fmt: skip
    code = ("import pandas\n\ndef export(conn, query, path):\n    for chunk in pandas.read_sql("
            "query, conn, chunksize=10000):\n        chunk.to_csv(path, mode='a')\n")  # fmt: skip
    _record(gql, [
        {"project": project, "id": "s0", "taskId": "t1", "step": 0, "outcome": "failure",
         "summary": "The CSV export ran out of memory reading the whole table at once",
         "observation": trace, "source": "executed",
         "environment": {"runtime": "python", "runtimeVersion": "3.11.4",
                         "packages": {"pandas": "2.2.1"}}},
        {"project": project, "id": "s1", "taskId": "t1", "step": 1, "outcome": "success",
         "summary": "Reading the table in chunks keeps the export's memory flat",
         # the evidence that it fixed the error: it edits the file of the trace's own frame
         "action": {"type": "edit", "command": "edit export.py",
                    "parameters": {"path": "/srv/app/export.py"}},
         "source": "executed", "snippets": [{"code": code, "language": "python"}],
         "environment": {"runtime": "python", "runtimeVersion": "3.11.4",
                         "packages": {"pandas": "2.2.1"}}},
    ])  # fmt: skip
    context = {"environment": {"runtime": "python", "runtimeVersion": "3.12.1",
                               "packages": {"pandas": "2.2.3"}}}  # fmt: skip
    result = _recall(gql, project, "export to CSV uses too much memory", context=context)
    hits = {h["episode"]["id"]: h for h in result["hits"]}
    fix, failure = hits["s1"], hits["s0"]
    assert fix["task"]["goal"] == "Make the CSV export fast again"
    assert fix["task"]["status"] == "resolved" and fix["task"]["steps"] == 2
    assert fix["previous"]["id"] == "s0" and failure["next"]["id"] == "s1"
    # The neighbouring steps are read only when the document selects them; the rest of
    # every hit does not depend on it, and a document selecting one of them gets it.
    bare = gql(RECALL.replace("previous { id step } next { id step }", ""),
               {"project": project, "query": "export to CSV uses too much memory", "k": 5,
                "context": context})  # fmt: skip
    assert "errors" not in bare, bare
    assert bare["data"]["recall"] == {
        **result, "hits": [{k: v for k, v in h.items() if k not in ("previous", "next")}
                           for h in result["hits"]]}  # fmt: skip
    one = gql("query($p: String!, $q: String!) { recall(project: $p, query: $q) {"
              " hits { episode { id } ...N } } } fragment N on RecallHit { next { id } }",
              {"p": project, "q": "export to CSV uses too much memory"})  # fmt: skip
    assert {h["episode"]["id"]: h["next"] for h in one["data"]["recall"]["hits"]}["s0"] == {
        "id": "s1"}  # fmt: skip
    assert [e["kind"] for e in failure["errors"]] and failure["errors"][0]["relation"] == "HIT"
    assert any(e["relation"] == "RESOLVED" for e in fix["errors"])
    assert failure["environment"]["runtime"] == "python"
    snippet = fix["snippets"][0]
    assert snippet["relation"] == "GENERATED" and "pandas" in snippet["snippet"]["imports"]
    assert snippet["compatible"] in ("compatible", "unknown")
    old = {"environment": {"runtime": "python", "runtimeVersion": "3.11.4",
                           "packages": {"pandas": "1.0.0"}}}  # fmt: skip
    judged = _recall(gql, project, "export to CSV uses too much memory", context=old)
    verdict = {h["episode"]["id"]: h for h in judged["hits"]}["s1"]["snippets"][0]
    assert verdict["compatible"] == "incompatible"
    assert any("pandas" in r for r in verdict["compatibility"]["reasons"])


@pytest.mark.slow
def test_conflicting_memories_come_side_by_side(gql: Any, project: str) -> None:
    _record(gql, [
        {"project": project, "id": "c-yes", "taskId": "ta", "outcome": "success",
         "summary": "Upgrading the JDBC driver to 42.7 fixed the connection resets under load"},
        {"project": project, "id": "c-no", "taskId": "tb", "outcome": "failure",
         "summary": "Upgrading the JDBC driver to 42.7 did not fix the connection resets under "
                    "load"},
    ])  # fmt: skip
    result = _recall(gql, project, "connection resets under load after a JDBC upgrade")
    pairs = [{c["a"]["id"], c["b"]["id"]} for c in result["conflicts"]]
    assert {"c-yes", "c-no"} in pairs
    conflict = result["conflicts"][pairs.index({"c-yes", "c-no"})]
    assert "opposite outcomes" in conflict["reason"] and conflict["similarity"] > 0.7
    # Conflicts are looked for only when the document selects them, through a fragment too;
    # the hits do not depend on it.
    variables = {"p": project, "q": "connection resets under load after a JDBC upgrade"}
    fragment = gql(
        "query($p: String!, $q: String!) { recall(project: $p, query: $q) { ...R } }"
        " fragment R on RecallResult { hits { episode { id } } ... on RecallResult {"
        " conflicts { a { id } b { id } } } }",
        variables,
    )
    assert "errors" not in fragment, fragment
    found = fragment["data"]["recall"]
    assert {"c-yes", "c-no"} in [{c["a"]["id"], c["b"]["id"]} for c in found["conflicts"]]
    bare = gql(
        "query($p: String!, $q: String!) {"
        " recall(project: $p, query: $q) { hits { episode { id } } } }",
        variables,
    )
    assert "errors" not in bare, bare
    assert bare["data"]["recall"]["hits"] == found["hits"]


@pytest.mark.slow
def test_abstains_when_nothing_is_relevant(gql: Any, outcomes_project: str) -> None:
    result = _recall(gql, outcomes_project, "what is a good recipe for sourdough bread?")
    assert result["abstained"] is True and result["hits"] == []
    assert "too far" in result["reason"]
    empty = _recall(gql, outcomes_project + "-empty", "memory leak")
    assert empty["abstained"] and "no memory" in empty["reason"]


def test_context_error_finds_the_same_error(gql: Any, project: str) -> None:
    _record(gql, [
        {"project": project, "id": "npe", "summary": "Fixed a crash when removing markers",
         "error": "java.lang.NullPointerException\n\tat org.acme.plot.CategoryPlot.removeMarker("
                  "CategoryPlot.java:2448)", "outcome": "success"},
        {"project": project, "id": "unrelated", "summary": "Fixed a crash when adding markers",
         "outcome": "success"},
    ])  # fmt: skip
    error = ("java.lang.NullPointerException\n\tat org.acme.plot.CategoryPlot.removeMarker("
             "CategoryPlot.java:2301)")  # fmt: skip
    result = _recall(gql, project, "a test fails with this trace", context={"error": error})
    top = result["hits"][0]
    assert top["episode"]["id"] == "npe"
    assert {"errors", "symbols"} & {c["channel"] for c in top["why"]["channels"]}


OLD_NAME = """
query($project: String!, $env: CallerEnvironment) {
  recall(project: $project, query: "the cache grows", context: {environment: $env}) { abstained }
}"""


def test_an_environment_is_one_input_and_its_old_name_still_answers(gql: Any, project: str) -> None:
    """CallerEnvironment is EnvironmentInput under the name recall's context took first:
    documents that name it keep working; packages that are not {name: version} are refused,
    naming the field."""
    env = {"os": "linux", "packages": {"pandas": 2}}  # a number is a version too
    assert "errors" not in gql(OLD_NAME, {"project": project, "env": env})
    refused = gql(OLD_NAME, {"project": project, "env": {"packages": ["pandas==2.2"]}})
    assert "environment.packages" in refused["errors"][0]["message"]
