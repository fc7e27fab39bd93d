"""Structural snippet search by a name, a trailing path or a parameter reads what matches,
not the project's every snippet or file (issue 24's reads that must not grow with the
store: at 100k, 44k snippets, a name took 278 ms and a parameter 96 ms, each read whole).
Real Neo4j; the snippets are written directly, their shape as ingest stores it."""

from __future__ import annotations

from typing import Any

import pytest
from profiles import db_hits, plan_lines

from metisgraph.graph.cypher import query

pytestmark = pytest.mark.anyio

SNIPPETS = """
UNWIND range(0, $n - 1) AS i
CREATE (s:Snippet {project: $p, id: 's' + i, name: 'jobs.run_' + i, recallable: true,
                   parameters: '[{"name": "arg' + i + '", "default": null}]', uses: i})
CREATE (f:File {project: $p, path: 'src/jobs/task_' + i + '.py'})
CREATE (s)-[:TOUCHES]->(f)
"""


def _params(project: str, **facet: list[str]) -> dict[str, Any]:
    asked = {"imports": [], "calls": [], "symbols": [], "files": [], "names": [],
             "parameters": []} | facet  # fmt: skip
    return {"project": project, **asked, "needed": sum(len(v) for v in facet.values()),
            "language": None, "kind": None, "limit": 500}  # fmt: skip


async def test_a_name_a_path_or_a_parameter_reads_what_matches(store: Any, project: str) -> None:
    await store.run_text(SNIPPETS, {"p": project, "n": 400})
    # the same names in another project: found by the index, never returned here
    await store.run_text(SNIPPETS, {"p": project + "-other", "n": 5})
    asks = {
        "names": (["run_7"], ["s7"]),
        "symbols": (["jobs.run_12"], ["s12"]),
        "files": (["jobs/task_3.py"], ["s3"]),
        "parameters": (["arg9"], ["s9"]),
    }
    text = query("snippets_by_structure").text
    for facet, (wanted, ids) in asks.items():
        params = _params(project, **{facet: wanted})
        rows = await store.run("snippets_by_structure", **params)
        assert [r["id"] for r in rows] == ids, (facet, rows)
        _, summary, _ = await store.driver.execute_query("PROFILE " + text, params)
        # a scan of the project reads its 400 snippets (or files), two hits or more each
        assert db_hits(summary.profile) < 150, (facet, plan_lines(summary.profile))
    # a part of a component is no trailing path; `run_1` is not `run_12`
    assert await store.run("snippets_by_structure", **_params(project, files=["ask_3.py"])) == []
    rows = await store.run("snippets_by_structure", **_params(project, names=["run_1"]))
    assert [r["id"] for r in rows] == ["s1"]


async def test_the_review_queue_reads_the_pending_not_every_snippet(
    store: Any, project: str
) -> None:
    """The queue and its count seek a project's pending snippets by their index, as they
    do its episodes (100k bench store: 188 + 117 ms, every snippet read, none pending)."""
    await store.run_text(SNIPPETS, {"p": project, "n": 400})
    await store.run_text(
        "MATCH (s:Snippet {project: $p}) SET s.review_status = "
        "CASE WHEN s.id IN ['s5', 's50'] THEN 'pending' ELSE 'unreviewed' END",
        {"p": project},
    )
    for name, params in (
        ("review_queue", {"project": project, "kind": None, "after": "", "first": 21}),
        ("review_pending_count", {"project": project, "kind": "Snippet"}),
    ):
        rows = await store.run(name, **params)
        if name == "review_queue":
            assert [r["id"] for r in rows] == ["s5", "s50"]
        else:
            assert rows == [{"total": 2}]
        _, summary, _ = await store.driver.execute_query("PROFILE " + query(name).text, params)
        assert db_hits(summary.profile) < 150, (name, plan_lines(summary.profile))
