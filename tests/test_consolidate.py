"""maintain: duplicates merged, lessons grouped into patterns, dead snippets retired.

An authored fixture (tests/fixtures/consolidation) through the real pipeline, the real
model and the real Neo4j: clustering cares about meaning.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from metisgraph.graph import ConsolidationSettings, OutcomeReport, consolidate, record_outcome
from metisgraph.graph.consolidate import _candidates, _read
from metisgraph.graph.lessons import Memory, candidate_pairs, plan_lessons
from metisgraph.ingest.adapters import SourceRef, validate_record
from metisgraph.ingest.pipeline import Ingestor

pytestmark = pytest.mark.anyio
FIXTURE = Path(__file__).parent / "fixtures" / "consolidation" / "episodes.jsonl"


async def _ingest(store: Any, embedder: Any, project: str, only: set[str] | None = None) -> None:
    items = []
    for n, line in enumerate(FIXTURE.read_text().splitlines()):
        raw = json.loads(line)
        if only is None or raw["id"] in only:
            items.append(validate_record({**raw, "project": project}, SourceRef("fixture", n)))
    await Ingestor(store, embedder).ingest(items)


async def _state(store: Any, project: str) -> dict[str, Any]:
    rows = await store.run_text(
        """MATCH (e:Episode {project: $p})
           OPTIONAL MATCH (e)-[d:DUPLICATE_OF]->(c)
           OPTIONAL MATCH (q:Pattern)-[:SUMMARIZES]->(e)
           RETURN e.id AS id, c.id AS canonical, d.exact AS exact, q.id AS pattern""",
        {"p": project},
        read=True,
    )
    return {r["id"]: r for r in rows}


async def _patterns(store: Any, project: str) -> list[dict[str, Any]]:
    return await store.run_text(
        """MATCH (p:Pattern {project: $p})
           RETURN p {.*, embedding: null} AS p,
                  [(p)-[:SUMMARIZES]->(e) | e.id] AS members,
                  [(p)-[:RECOMMENDS]->(s) | s.id] AS recommends""",
        {"p": project},
        read=True,
    )


@pytest.mark.slow
async def test_maintain_merges_groups_and_retires(store: Any, embedder: Any, project: str) -> None:
    await _ingest(store, embedder, project)
    report = await consolidate(store, project)
    assert report.dirty == report.episodes == 11
    state = await _state(store, project)
    # The copy is merged into the original, exactly; nothing is deleted.
    assert state["ssl-1-copy"]["canonical"] == "ssl-1" and state["ssl-1-copy"]["exact"]
    assert report.duplicates >= 1
    patterns = await _patterns(store, project)
    by_member = {m: p for p in patterns for m in p["members"]}
    ssl = by_member["ssl-1"]
    assert {"ssl-1", "ssl-2", "ssl-4", "ssl-1-copy"} <= set(ssl["members"])
    # Support counts independent sources: each episode here is another task's.
    assert ssl["p"]["support"] == ssl["p"]["episodes"] == len(ssl["members"]) >= 4
    assert ssl["p"]["success_rate"] == 1.0 and ssl["p"]["outcome"] == "success"
    assert "episodes from" in ssl["p"]["summary"] and ssl["p"]["error_keys"]
    assert ssl["recommends"], "the pattern recommends the snippet its members used"
    # Its trust prior comes from its members: their success rate, smoothed, worth as many
    # reports as independent sources; with no report yet its confidence is that prior.
    n = ssl["p"]["episodes"]
    assert ssl["p"]["prior_confidence"] == pytest.approx((n + 1) / (n + 2))
    assert ssl["p"]["prior_strength"] == ssl["p"]["support"]
    assert ssl["p"]["confidence"] == pytest.approx(ssl["p"]["prior_confidence"])
    # A report about the pattern moves it from there: one failure is one pseudo-report.
    after = await record_outcome(store, OutcomeReport(project, ssl["p"]["id"], False, key="k1"))
    mean, strength = ssl["p"]["prior_confidence"], ssl["p"]["prior_strength"]
    assert after is not None
    assert after["confidence"] == pytest.approx(mean * strength / (strength + 1))
    oom = by_member["oom-1"]
    assert {"oom-1", "oom-2", "oom-3"} == set(oom["members"])
    assert "oom-fail" not in by_member  # the same error, the opposite outcome: another lesson
    assert "talk-1" not in by_member
    # Snippets only failing episodes produced, never reused, are retired, and kept.
    snippets = await store.run_text(
        """MATCH (s:Snippet {project: $p})
           RETURN s.id AS id, s.retired AS retired, s.recallable AS recallable,
                  [(e)-[:GENERATED|USED|MODIFIED]->(s) | e.outcome] AS outcomes""",
        {"p": project},
        read=True,
    )
    retired = [s for s in snippets if s["retired"]]
    assert retired and report.retired == len(retired)
    assert all(set(s["outcomes"]) == {"failure"} and not s["recallable"] for s in retired)
    assert all(s["recallable"] for s in snippets if "success" in s["outcomes"])


@pytest.mark.slow
async def test_second_run_changes_nothing_and_new_episodes_join(
    store: Any, embedder: Any, project: str
) -> None:
    await _ingest(store, embedder, project, only={"oom-1", "oom-2", "oom-3", "talk-1"})
    first = await consolidate(store, project)
    assert first.patterns == 1
    before = await _state(store, project)
    again = await consolidate(store, project)
    assert again.dirty == 0 and again.patterns == again.duplicates == 0
    assert "read" not in again.seconds  # nothing dirty: nothing read
    assert await _state(store, project) == before
    # A new episode of the same lesson joins the stored pattern: only it is compared.
    await _ingest(store, embedder, project, only={"ssl-1", "oom-fail"})
    await store.run_text(
        """MATCH (e:Episode {project: $p, id: 'oom-fail'})
           SET e.outcome = 'success', e.content_hash = 'changed'""",
        {"p": project},
    )
    third = await consolidate(store, project)
    assert third.dirty == 2 and third.episodes == 6
    patterns = await _patterns(store, project)
    assert len(patterns) == 1 and "oom-fail" in patterns[0]["members"]
    assert patterns[0]["p"]["support"] == 4


@pytest.mark.slow
async def test_a_run_with_few_dirty_episodes_reads_their_candidates_and_plans_the_same(
    store: Any, embedder: Any, project: str
) -> None:
    """Two new episodes in a maintained store: the run reads them, what shares an error or a
    tool with them, their close neighbours and the patterns those are in — not the rest —
    and plans what a run over every episode plans."""
    everything = {json.loads(line)["id"] for line in FIXTURE.read_text().splitlines()}
    later = {"ssl-4", "oom-3"}
    await _ingest(store, embedder, project, only=everything - later)
    await consolidate(store, project)
    await _ingest(store, embedder, project, only=later)
    settings = ConsolidationSettings()
    stored = {r["id"]: r["seed"] for r in await store.run("maintain_stored_patterns",
                                                           project=project)}  # fmt: skip
    full, full_vectors, _ = await _read(store, project)
    ids = await _candidates(store, project, settings)
    part, vectors, large = await _read(store, project, ids, settings.block_cap)
    read = {m.id for m in part}
    assert later <= read and len(part) < len(full), sorted(read)
    planned = plan_lessons(
        project, part, vectors, {p: s for p, s in stored.items() if s in read}, settings, large
    )
    expected = plan_lessons(project, full, full_vectors, stored, settings)  # fmt: skip
    assert planned.duplicates == expected.duplicates
    assert planned.patterns == expected.patterns and planned.patterns
    assert sorted(planned.dissolved) == sorted(expected.dissolved)
    report = await consolidate(store, project)
    assert (report.dirty, report.episodes) == (2, len(part))
    assert {"ssl-4"} <= {m for p in await _patterns(store, project) for m in p["members"]}


def _memory(i: int, dirty: bool = True, **kw: Any) -> Memory:
    base = {"outcome": "success", "kind": "episode", "errors": frozenset(), "tools": frozenset()}
    return Memory(id=f"e{i}", created_at=f"2025-01-{i + 1:02d}", dirty=dirty, **(base | kw))


def test_candidates_are_not_all_pairs() -> None:
    """Far-apart vectors with nothing in common are never compared; clean pairs neither."""
    rng = np.random.default_rng(1)
    vectors = rng.standard_normal((400, 32)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    vectors[1] = vectors[0]  # one close pair
    memories = [_memory(i) for i in range(400)]
    a, b = candidate_pairs(memories, vectors, ConsolidationSettings())
    pairs = set(zip(a.tolist(), b.tolist(), strict=True))
    assert (0, 1) in pairs
    assert len(pairs) < 400 * 399 / 2 / 20
    clean = [_memory(i, dirty=i < 2) for i in range(400)]
    a, b = candidate_pairs(clean, vectors, ConsolidationSettings())
    assert all(x < 2 or y < 2 for x, y in zip(a.tolist(), b.tolist(), strict=True))


def test_star_patterns_and_leader_duplicates() -> None:
    """No chains: a duplicate is within the threshold of its canonical, a member of its seed."""
    base = np.zeros(8, dtype=np.float32)
    base[0] = 1.0
    near = base.copy()
    near[1] = 0.2  # cos ~0.98 with base
    far = base.copy()
    far[1] = 0.45  # cos ~0.91 with base, ~0.98 with near: not a duplicate of base
    vectors = np.stack([base, near, far, np.eye(8, dtype=np.float32)[3]])
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    memories = [_memory(0), _memory(1), _memory(2), _memory(3)]
    plan = plan_lessons("p", memories, vectors, {}, ConsolidationSettings())
    assert plan.duplicates["e1"][0] == "e0"
    assert "e2" not in plan.duplicates  # close to e1, not to its canonical e0
    assert list(plan.patterns.values()) == [] or all(
        "e3" not in members for members in plan.patterns.values()
    )
