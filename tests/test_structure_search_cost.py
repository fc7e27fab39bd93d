"""Structural snippet search by a name or a trailing path reads what matches, not the
project's every snippet or file (issue 24's reads that must not grow with the store: at
100k, 44k snippets, a name took 278 ms, read whole); the text index that serves it never
costs a snippet its place in the store. Real Neo4j; the snippets are written directly,
their shape as ingest stores it, and through the pipeline where a record's fate is asked."""

from __future__ import annotations

from typing import Any

import pytest
from embedders import HashEmbedder
from profiles import db_hits, plan_lines

from metisgraph.graph.cypher import query
from metisgraph.ingest.adapters import Parsed, SourceRef
from metisgraph.ingest.pipeline.ingestor import Ingestor
from metisgraph.ingest.records import EpisodeRecord, SnippetInput

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


async def test_a_name_or_a_path_reads_what_matches(store: Any, project: str) -> None:
    await store.run_text(SNIPPETS, {"p": project, "n": 400})
    # the same names in another project: found by the index, never returned here
    await store.run_text(SNIPPETS, {"p": project + "-other", "n": 5})
    asks = {
        "names": (["run_7"], ["s7"]),
        "symbols": (["jobs.run_12"], ["s12"]),
        "files": (["jobs/task_3.py"], ["s3"]),
    }
    text = query("snippets_by_structure").text
    for facet, (wanted, ids) in asks.items():
        params = _params(project, **{facet: wanted})
        rows = await store.run("snippets_by_structure", **params)
        assert [r["id"] for r in rows] == ids, (facet, rows)
        _, summary, _ = await store.driver.execute_query("PROFILE " + text, params)
        # a scan of the project reads its 400 snippets (or files), two hits or more each
        assert db_hits(summary.profile) < 150, (facet, plan_lines(summary.profile))
    # a parameter is still found (each of the project's snippets read: no index holds them)
    rows = await store.run("snippets_by_structure", **_params(project, parameters=["arg9"]))
    assert [r["id"] for r in rows] == ["s9"]
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


async def test_a_name_or_defaults_past_what_a_text_index_holds_are_stored(
    store: Any, project: str
) -> None:
    """A text index refuses a value past ~32 KB, and a refused write refuses the record:
    a function named with 40,000 characters is stored under its name's last 4,096 (found
    by them), its default of 60,000 characters whole (no index over the parameters)."""
    long_name = "f" + "x" * 39_999
    code = f"def {long_name}(path, header='{'h' * 60_000}'):\n    return open(path).read()\n"
    record = EpisodeRecord(project=project, id="e1", summary="wrote two helpers",
                           outcome="success",
                           snippets=[SnippetInput(code=code, language="python")])  # fmt: skip
    summary = await Ingestor(store, HashEmbedder()).ingest([Parsed(record, SourceRef("test"))])
    assert summary.refused == 0 and summary.written == 1, summary
    kept = long_name[-4096:]
    rows = await store.run("snippets_by_structure", **_params(project, names=[kept]))
    assert len(rows) == 1, rows
    stored = await store.run_text(
        "MATCH (s:Snippet {project: $p}) RETURN size(s.name) AS name, size(s.parameters) AS p",
        {"p": project},
        read=True,
    )
    assert [r["name"] for r in stored] == [4096] and stored[0]["p"] > 60_000, stored


@pytest.mark.own_server  # scratch_store: its indexes are built here
async def test_a_store_with_a_name_too_long_for_the_index_still_starts(
    scratch_store: Any,
) -> None:
    """A name stored before ingest kept names short would fail snippet_name_text's
    population, and a failed index stops the start: apply_schema keeps its end first."""
    from metisgraph.graph.indexes import SNIPPET_NAME_CHARS, apply_schema

    store = scratch_store
    await store.run_text(
        "CREATE (:Snippet {project: 'p', id: 'long', name: $name}), "
        "(:Snippet {project: 'p', id: 'short', name: 'jobs.run'})",
        {"name": "a" * 20_000 + "b" * 20_000},
    )
    report = await apply_schema(store, 384)
    assert report.indexes["snippet_name_text"] == "ONLINE"
    rows = await store.run_text(
        "MATCH (s:Snippet {project: 'p'}) RETURN s.id AS id, s.name AS name ORDER BY id",
        read=True,
    )
    assert [(r["id"], r["name"]) for r in rows] == [
        ("long", "b" * SNIPPET_NAME_CHARS), ("short", "jobs.run")
    ]  # fmt: skip
