"""Recall's channels against the real Neo4j and model: what each one is for, shown on small data."""

from __future__ import annotations

from typing import Any

RECORD_MANY = """
mutation($inputs: [EpisodeInput!]!) { recordEpisodes(inputs: $inputs) { written refused } }"""
RECALL = """
query($project: String!, $query: String!, $context: RecallContext) {
  recall(project: $project, query: $query, k: 5, context: $context) {
    abstained hits { episode { id } why { channels { channel score } } }
  }
}"""


def _frames(*methods: str) -> str:
    lines = ["java.lang.IllegalStateException: bad state"]
    lines += [f"\tat org.acme.plot.{m}({m.split('.')[0]}.java:10)" for m in methods]
    runner = "\tat org.junit.runners.ParentRunner.run(ParentRunner.java:363)"
    return "\n".join([*lines, runner])


def _patch(name: str) -> str:
    path = f"src/main/java/org/acme/plot/{name}.java"
    return f"--- a/{path}\n+++ b/{path}\n@@ -1,1 +1,1 @@\n-int x = 1;\n+int x = 2;\n"


def test_the_fix_that_changed_the_class_outranks_one_whose_trace_passed_it(
    gql: Any, project: str
) -> None:
    # Same words and error. The first trace shares more classes with the question's; the
    # second memory's fix changed the class where the question's trace fails.
    inputs = [
        {"project": project, "id": "passed-through", "summary": "Fixed a plot rendering bug",
         "error": _frames("Legend.draw", "CategoryPlot.render", "Renderer.paint"),
         "outcome": "success",
         "snippets": [{"code": _patch("Legend"), "language": "diff"}]},
        {"project": project, "id": "changed-it", "summary": "Fixed a plot rendering bug",
         "error": _frames("Axis.draw", "Chart.paint"), "outcome": "success",
         "snippets": [{"code": _patch("CategoryPlot"), "language": "diff"}]},
    ]  # fmt: skip
    body = gql(RECORD_MANY, {"inputs": inputs})
    assert body["data"]["recordEpisodes"]["written"] == 2, body
    question = {"error": _frames("CategoryPlot.render", "Renderer.paint")}
    result = gql(RECALL, {"project": project, "query": "this test fails", "context": question})
    hits = result["data"]["recall"]["hits"]
    assert [h["episode"]["id"] for h in hits][:2] == ["changed-it", "passed-through"]
    scores = [{c["channel"]: c["score"] for c in h["why"]["channels"]} for h in hits]
    assert scores[0]["symbols"] > scores[1]["symbols"]
