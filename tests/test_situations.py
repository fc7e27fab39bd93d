"""Conflicts and supersession written at ingest: the same error in compatible environments,
opposite outcomes -> CONTRADICTS with the evidence; a newer fix by another action ->
SUPERSEDES; recall shows the newer first and says the older was superseded.
Through GraphQL and the real Neo4j."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest
from embedders import HashEmbedder

from metisgraph.graph import GraphStore, consolidate, recall, relate_situations
from metisgraph.graph import situations as situations_module
from metisgraph.graph.migrations import cypher_step
from metisgraph.ingest.adapters import Parsed, SourceRef
from metisgraph.ingest.pipeline import Ingestor
from metisgraph.ingest.question import Question, prepare_question
from metisgraph.ingest.records import EpisodeRecord, TaskRecord

RECORD = """
mutation($inputs: [EpisodeInput!]!) {
  recordEpisodes(inputs: $inputs) { refused results { id status errors { field message } } }
}"""
RECALL = """
query($p: String!, $q: String!) {
  recall(project: $p, query: $q, k: 5) {
    hits { flagged episode { id } }
    conflicts { a { id } b { id } reason }
  }
}"""
ERROR = (
    "Traceback (most recent call last):\n"
    '  File "app.py", line 3, in <module>\n'
    "    import jinja2\n"
    "ImportError: cannot import name 'soft_unicode' from 'markupsafe'"
)
LINUX = {"os": "linux", "runtime": "python", "runtimeVersion": "3.11.4"}


def _episode(project: str, id_: str, outcome: str, command: str, at: str, **more: Any) -> Any:
    return {
        "project": project, "id": id_, "outcome": outcome, "createdAt": at, "error": ERROR,
        "summary": f"jinja2 import failed on markupsafe; ran {command}",
        "action": {"type": "command", "command": command}, "environment": LINUX, **more,
    }  # fmt: skip


def _record(gql: Any, inputs: list[dict[str, Any]]) -> None:
    body = gql(RECORD, {"inputs": inputs})
    assert "errors" not in body and body["data"]["recordEpisodes"]["refused"] == 0, body


@pytest.fixture
def situations(gql: Any, project: str) -> str:
    _record(gql, [
        _episode(project, "pin", "success", "pip install markupsafe==2.0.1", "2024-01-05T10:00Z"),
        _episode(project, "try", "failure", "pip install markupsafe==2.1.0", "2025-03-01T10:00Z"),
        _episode(project, "upgrade", "success", "pip install -U jinja2", "2026-02-01T10:00Z"),
        # The same error on another OS: not the same situation.
        _episode(project, "windows", "failure", "pip install -U jinja2", "2026-03-01T10:00Z",
                 environment={**LINUX, "os": "windows"}),
    ])  # fmt: skip
    return project


async def _links(store: Any, project: str) -> list[tuple[str, str, str, str | None]]:
    rows = await store.run_text(
        """MATCH (a:Episode {project: $p})-[r:CONTRADICTS|SUPERSEDES]->(b:Episode {project: $p})
           RETURN type(r) AS type, a.id AS a, b.id AS b, r.reason AS reason
           ORDER BY type, a, b""",
        {"p": project},
        read=True,
    )
    return [(r["type"], *sorted((r["a"], r["b"])), r["reason"]) if r["type"] == "CONTRADICTS"
            else (r["type"], r["a"], r["b"], r["reason"]) for r in rows]  # fmt: skip


@pytest.mark.anyio
async def test_ingest_writes_contradictions_and_supersession(
    gql: Any, store: Any, situations: str
) -> None:
    links = await _links(store, situations)
    contradicts = sorted((a, b) for kind, a, b, _ in links if kind == "CONTRADICTS")
    assert contradicts == [("pin", "try"), ("try", "upgrade")]  # not the Windows episode
    reasons = {reason for kind, _, _, reason in links if kind == "CONTRADICTS"}
    same = "the same error (python:ImportError) with opposite outcomes, by different actions"
    assert reasons == {same}
    assert [(a, b) for kind, a, b, _ in links if kind == "SUPERSEDES"] == [("upgrade", "pin")]
    _record(gql, [_episode(situations, "pin", "success", "pip install markupsafe==2.0.1",
                           "2024-01-05T10:00Z")])  # fmt: skip
    assert await _links(store, situations) == links  # written again: nothing doubles


def test_recall_shows_the_newer_fix_first_and_says_so(gql: Any, situations: str) -> None:
    body = gql(RECALL, {"p": situations, "q": "cannot import name soft_unicode from markupsafe"})
    assert "errors" not in body, body
    hits = body["data"]["recall"]["hits"]
    order = [h["episode"]["id"] for h in hits]
    assert order.index("upgrade") < order.index("pin")
    pin = hits[order.index("pin")]
    assert "superseded by upgrade (a newer fix of the same error)" in pin["flagged"]
    recorded = [c for c in body["data"]["recall"]["conflicts"]
                if {c["a"]["id"], c["b"]["id"]} == {"pin", "try"}]  # fmt: skip
    assert recorded and recorded[0]["reason"].startswith("recorded as contradicting: the same")


@pytest.mark.anyio
async def test_maintain_relates_an_episode_a_later_link_unstamped(
    gql: Any, store: Any, situations: str
) -> None:
    await consolidate(store, situations, reconcile=relate_situations)
    links = await _links(store, situations)
    # What a RESOLVED link or code across the bridge written later does (memorize_resolution,
    # link_snippet_episodes): the episode's stamp is cleared, its content is unchanged, so
    # consolidation does not see it as dirty. Its links are dropped here to see them written.
    await store.run_text(
        """MATCH (e:Episode {project: $p, id: 'try'}) SET e.situated = null
           WITH e MATCH (e)-[r:CONTRADICTS]-() DELETE r""",
        {"p": situations},
    )
    assert await _links(store, situations) != links
    report = await consolidate(store, situations, reconcile=relate_situations)
    assert report.dirty == 0 and report.unsituated == 1
    assert await _links(store, situations) == links
    again = await consolidate(store, situations, reconcile=relate_situations)
    assert again.unsituated == 0 and "reconcile" not in again.seconds


PARTNERS = {"pin": {"try", "upgrade"}, "try": {"pin", "upgrade"}, "upgrade": {"pin", "try"}}
ONE = """
query($p: String!, $q: String!) {
  recall(project: $p, query: $q, k: 1) {
    hits { episode { id } }
    conflicts { a { id outcome summary } b { id outcome summary } reason }
  }
}"""
PLAN = """
query($p: String!, $g: String!) {
  planContext(project: $p, task: {goal: $g}, k: 1) { memories { kind id text } }
}"""


def test_a_conflict_outside_the_top_k_is_fetched_whole(gql: Any, situations: str) -> None:
    """With k = 1 the hit's recorded partners (CONTRADICTS, SUPERSEDES either way) are not
    among the hits: recall fetches them for the side-by-side view, planContext names them."""
    question = "cannot import name soft_unicode from markupsafe"
    body = gql(ONE, {"p": situations, "q": question})
    assert "errors" not in body, body
    [hit] = [h["episode"]["id"] for h in body["data"]["recall"]["hits"]]
    conflicts = body["data"]["recall"]["conflicts"]
    pairs = [{c["a"]["id"], c["b"]["id"]} for c in conflicts]
    assert all(hit in pair for pair in pairs), pairs
    assert {i for pair in pairs for i in pair} - {hit} == PARTNERS[hit]  # never `windows`
    for c in conflicts:
        partner = c["b"] if c["a"]["id"] == hit else c["a"]
        assert partner["outcome"] and "markupsafe" in partner["summary"]  # the episode whole
        if {c["a"]["id"], c["b"]["id"]} == {"pin", "upgrade"}:
            assert c["reason"] == "superseded: upgrade is a newer fix of the same error than pin"
        else:
            assert c["reason"].startswith("recorded as contradicting")
    plan = gql(PLAN, {"p": situations, "g": question})
    assert "errors" not in plan, plan
    shown = [m for m in plan["data"]["planContext"]["memories"] if m["kind"] == "conflict"]
    texts = " ".join(m["text"] for m in shown)
    named = {p for p in PARTNERS[hit] if f"episode {p} (not recalled)" in texts}
    assert named == PARTNERS[hit], shown


@pytest.mark.anyio
@pytest.mark.parametrize("early", [False, True])
async def test_the_partners_of_the_best_hits_are_read_with_their_expansion(
    store: Any, embedder: Any, situations: str, early: bool
) -> None:
    """The hit's recorded partners (outside the top k = 1) come back in the expansion's
    round trip, read there for the first k candidates: no round trip after the ranking —
    whether or not the full-text shortlist was expanded early (a read before the fusion)."""
    reads: list[str] = []

    class Counting(GraphStore):
        async def run_text(
            self, text: str, params: dict[str, Any] | None = None, *, read: bool = False
        ) -> list[dict[str, Any]]:
            reads.append(text)
            return await super().run_text(text, params, read=read)

    question = Question(project=situations, query="cannot import name soft_unicode", k=1)
    prepared = prepare_question(question)
    counting = Counting(store.driver, store.database)
    vectors = await prepared.vectors(embedder)
    outcome = await recall(counting, prepared.request, vectors, speculate=early)
    [hit] = [h.episode["id"] for h in outcome.hits]
    assert {p.episode["id"] for p in outcome.partners} == PARTNERS[hit]
    assert all(p.previous is None and p.next is None for p in outcome.partners)
    assert {i for c in outcome.conflicts for i in (c.a, c.b)} == {hit, *PARTNERS[hit]}
    assert sum("fixed_by" in text for text in reads) == 1 + early  # the expansion, once


def _sighting(project: str, id_: str, outcome: str, at: str, task: str | None = None) -> Any:
    record = EpisodeRecord(
        project=project, id=id_, task_id=task, outcome=outcome, error=ERROR,
        summary=f"jinja2 import failed on markupsafe ({id_})",
        action={"type": "command", "command": "pip install markupsafe==2.0.1"},
        created_at=datetime.fromisoformat(at).replace(tzinfo=UTC),
    )  # fmt: skip
    return Parsed(record, SourceRef("test"))


@pytest.mark.anyio
@pytest.mark.slow
async def test_an_episode_is_compared_with_the_most_recent_sightings_of_other_tasks(
    store: Any, project: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The others an episode is compared with, per error, are the PER_ERROR most recent
    sightings of other tasks by their time — whatever order they were stored in, however
    many there are (a bound of 3 read stands for main's 1,000 of an error's thousands)."""
    monkeypatch.setattr(situations_module, "PER_ERROR", 2)
    monkeypatch.setattr(situations_module, "SCAN", 3, raising=False)
    ingest = Ingestor(store, HashEmbedder())
    mine = Parsed(TaskRecord(project=project, id="mine", goal="import jinja2"), SourceRef("t"))
    stored = [  # stored in this order; by time: b newest, then a, then c; m1 newest of all
        [_sighting(project, "a1", "success", "2025-06-01T10:00"),
         _sighting(project, "a2", "success", "2025-06-02T10:00")],
        [_sighting(project, "b1", "success", "2026-01-01T10:00"),
         _sighting(project, "b2", "success", "2026-01-02T10:00")],
        [_sighting(project, "c1", "success", "2024-01-01T10:00"),
         _sighting(project, "c2", "success", "2024-01-02T10:00")],
        [mine, _sighting(project, "m1", "success", "2026-06-01T10:00", task="mine")],
    ]  # fmt: skip
    for batch in stored:
        await ingest.ingest(batch)
    await ingest.ingest([_sighting(project, "m2", "failure", "2026-07-01T10:00", task="mine")])
    rows = await store.run_text(
        """MATCH (:Episode {project: $p, id: 'm2'})-[:CONTRADICTS]-(o:Episode)
           RETURN o.id AS id ORDER BY id""",
        {"p": project},
        read=True,
    )
    # the two most recent of other tasks; never m1 (its own task), never the older ones
    assert [r["id"] for r in rows] == ["b1", "b2"]


SIGHTING_KEYS = """
MATCH (e:Episode {project: $p})-[h:HIT|RESOLVED]->(r:Error)
RETURN e.id AS id, type(h) AS type, r.key AS key, h.project AS project, h.error AS error,
       h.at = e.created_at AS timed
ORDER BY id, type, key"""


@pytest.mark.anyio
async def test_migration_9_keys_the_sightings_of_a_store_written_before(
    store: Any, situations: str
) -> None:
    kept = await store.run_text(SIGHTING_KEYS, {"p": situations}, read=True)
    assert kept and all(r["error"] == r["key"] and r["project"] == situations and r["timed"]
                        for r in kept)  # fmt: skip
    await store.run_text(
        """MATCH (:Episode {project: $p})-[h:HIT]->(:Error) REMOVE h.project, h.error, h.at""",
        {"p": situations},
    )
    assert await store.run_text(SIGHTING_KEYS, {"p": situations}, read=True) != kept
    await cypher_step("migrate_sighting_keys")(store)
    assert await store.run_text(SIGHTING_KEYS, {"p": situations}, read=True) == kept
