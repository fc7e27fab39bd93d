"""Failure lineage against the real Neo4j, on the authored story (a fix, then a regression)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest
from story import Story, load_story, module_story, numpy_error_key

from metisgraph.graph.lineage import (
    ErrorKey,
    LineageRequest,
    error_members,
    lineage,
)
from metisgraph.graph.refs import InvalidCursor
from metisgraph.graph.rows import iso_time, native_time

pytestmark = pytest.mark.anyio


@pytest.fixture(scope="module")
def story(neo4j_settings: Any, embedder: Any) -> Story:
    """One story for the tests that only read it."""
    return module_story(neo4j_settings, embedder, "lg")


@pytest.fixture
async def own_story(store: Any, embedder: Any, project: str) -> Story:
    """A story of the test's own, for a test that writes into its projects."""
    return await load_story(store, embedder, project)


async def _members(store: Any, story: Story) -> list[ErrorKey]:
    return await error_members(store, story.projects, [numpy_error_key()])


async def test_ingest_links_the_code_that_ended_an_error(store: Any, story: Story) -> None:
    rows = await store.run_text(
        "MATCH (s:Snippet {project: $p})-[f:FIXES]->(r:Error) "
        "RETURN s.name AS snippet, r.kind AS kind, f.task AS task, f.episode AS episode "
        "ORDER BY task, kind",
        {"p": story.shop},
        read=True,
    )
    fixes = {(r["task"], r["kind"], r["snippet"], r["episode"]) for r in rows}
    assert (
        "shop-report-march",
        "python:AttributeError",
        "use builtin float in build_totals",
        "shop-report-march-s4",
    ) in fixes
    assert (
        "shop-report-march",
        "python:ModuleNotFoundError",
        "install pyyaml",
        "shop-report-march-s1",
    ) in fixes
    assert (
        "shop-report-may",
        "python:AttributeError",
        "upgrade legacy-stats",
        "shop-report-may-s1",
    ) in fixes
    # The billing task never succeeded: nothing there fixed anything.
    billing = await store.run_text(
        "MATCH (:Snippet {project: $p})-[f:FIXES]->() RETURN count(f) AS n",
        {"p": story.billing},
        read=True,
    )
    assert billing[0]["n"] == 0


async def test_fixes_are_derived_again_not_doubled(
    store: Any, embedder: Any, own_story: Story
) -> None:
    from story import story_records

    story = own_story

    from metisgraph.ingest.pipeline.ingestor import Ingestor

    count = "MATCH (:Snippet {project: $p})-[f:FIXES]->() RETURN count(f) AS n"
    before = (await store.run_text(count, {"p": story.shop}, read=True))[0]["n"]
    await Ingestor(store, embedder).ingest(story_records(story))
    after = (await store.run_text(count, {"p": story.shop}, read=True))[0]["n"]
    assert after == before > 0


@pytest.mark.slow
async def test_lineage_across_projects_with_its_fix_and_regression(
    store: Any, story: Story
) -> None:
    members = await _members(store, story)
    assert {m.project for m in members} == set(story.projects)
    result = await lineage(store, LineageRequest(members=members))

    # Every sighting, in time order, across both projects.
    seen = [(s.episode.project, s.episode.id) for s in result.sightings]
    assert seen == [
        (story.shop, "shop-report-march-s2"),
        (story.billing, "billing-totals-s0"),
        (story.billing, "billing-totals-s1"),
        (story.shop, "shop-report-may-s0"),
    ]
    assert result.sighting_count == 4 and result.next_after is None
    first, last = result.first, result.last
    assert first is not None and first.first_episode == "shop-report-march-s2"
    assert last is not None and last.last_episode == "shop-report-may-s0"
    march = result.sightings[0]
    assert march.task is not None and march.task.goal.startswith("The nightly sales report")
    assert march.environment is not None and march.environment.runtime_version == "3.11.4"
    assert march.tools == ["shop.report"]  # `python -m shop.report`: the module run

    # What was attempted: the numpy pin in March (it acted on a library of the traceback, and
    # failed), the run again with another option in billing. Failing steps that merely came
    # after are not attempts.
    assert [a.episode.id for a in result.attempts] == [
        "shop-report-march-s3",
        "billing-totals-s1",
    ]
    assert result.attempts[0].why[0].startswith("module: installs numpy<1.24")
    assert result.attempts[1].why[0].startswith("rerun: ")

    # The fixes, on evidence: the patch edits the innermost own frame's file; the upgrade
    # installs the library the traceback runs through. The step that ended each task (the
    # passing test run of March) claims nothing: it did not act on the error.
    by_episode = {f.episode.id: f for f in result.fixes}
    assert set(by_episode) == {"shop-report-march-s4", "shop-report-may-s1"}
    patch = by_episode["shop-report-march-s4"]
    assert patch.via == ["FIXES", "RESOLVED"] and patch.kind == "fixed"
    assert patch.why == ["frame: edits shop/report.py (shop.report.build_totals)"]
    assert patch.confidence is not None and 0 < patch.confidence <= 1
    assert by_episode["shop-report-may-s1"].why[0].startswith("module: installs legacy-stats")
    # the step's code: the patch, and the shell line that applied it (no name)
    assert "use builtin float in build_totals" in [s.name for s in patch.snippets]
    assert by_episode["shop-report-may-s1"].snippets[0].name == "upgrade legacy-stats"

    # The regression: May's sighting after the March fix, on other package versions.
    may = next(r for r in result.recurrences if r.episode.id == "shop-report-may-s0")
    assert may.same_project and may.fix.project == story.shop
    # each recurrence beside the latest fix claimed with evidence strictly before it (the
    # patch; no longer March's last step, which resolved its task but fixed nothing)
    assert {r.episode.id: r.fix.id for r in result.recurrences} == {
        "billing-totals-s0": "shop-report-march-s4",
        "billing-totals-s1": "shop-report-march-s4",
        "shop-report-may-s0": "shop-report-march-s4",
    }
    changes = {(p.name, p.before, p.after, p.change) for p in may.diff.packages}
    assert changes == {
        ("numpy", "1.24.2", "1.26.4", "changed"),
        ("pandas", "2.0.3", "2.2.1", "changed"),
        ("legacy-stats", None, "0.3.1", "added"),
    }
    assert may.diff.fields["runtime_version"] == ("3.11.4", "3.11.9")
    # Billing met it after shop had fixed it: recurrences too, in the same package versions.
    billing = [r for r in result.recurrences if r.episode.project == story.billing]
    assert len(billing) == 2 and not billing[0].same_project
    assert billing[0].diff.packages == []
    assert result.recurrence_count == 3

    # Related errors: the missing yaml module came before it, the pip conflict after.
    related = {r.kind: r for r in result.related}
    assert related["python:ModuleNotFoundError"].preceded == 1
    assert related["python:ModuleNotFoundError"].followed == 0
    assert related["log:error"].followed == 1

    counts = {p.project: p for p in result.projects}
    assert counts[story.shop].sightings == 2 and counts[story.billing].sightings == 2
    assert counts[story.billing].fixes == 0 and counts[story.shop].fixes >= 2


# Not slow (1.5 s, at the line): test-fast's one check of the regression pairing.
async def test_a_recurrence_is_paired_with_the_latest_fix_before_it(
    store: Any, embedder: Any, own_story: Story
) -> None:
    """After two fixes of the error (March's patch, May's upgrade), a June sighting is the
    regression of May's fix, not of the first one; the earlier sightings keep March's."""
    story = own_story
    import json

    from story import STORY

    from metisgraph.ingest.adapters.base import SourceRef, validate_record
    from metisgraph.ingest.pipeline.ingestor import Ingestor

    may = next(
        json.loads(line)
        for line in STORY.read_text(encoding="utf-8").splitlines()
        if '"id": "shop-report-may-s0"' in line
    )
    june = [
        {
            "record_type": "task",
            "project": story.shop,
            "id": "shop-report-june",
            "agent": "ops-bot",
            "goal": "The sales report fails once more",
            "status": "abandoned",
            "outcome": "failure",
            "started_at": "2026-06-02T08:00:00Z",
        },
        {
            **may,
            "project": story.shop,
            "id": "shop-report-june-s0",
            "task_id": "shop-report-june",
            "created_at": "2026-06-02T08:00:00Z",
        },
    ]
    source = SourceRef("june", 1)
    summary = await Ingestor(store, embedder).ingest([validate_record(r, source) for r in june])
    assert summary.refused == 0, summary.refusals

    result = await lineage(store, LineageRequest(members=await _members(store, story)))
    fixes = {f.episode.id for f in result.fixes}
    assert {"shop-report-march-s4", "shop-report-may-s1"} <= fixes
    assert {r.episode.id: r.fix.id for r in result.recurrences} == {
        "billing-totals-s0": "shop-report-march-s4",
        "billing-totals-s1": "shop-report-march-s4",
        "shop-report-may-s0": "shop-report-march-s4",
        "shop-report-june-s0": "shop-report-may-s1",
    }


async def test_sightings_page_with_stable_cursors(store: Any, story: Story) -> None:
    members = await _members(store, story)
    whole = await lineage(store, LineageRequest(members=members))
    walked: list[str] = []
    after = None
    for _ in range(10):
        page = await lineage(store, LineageRequest(members=members, limit=1, after=after))
        walked.extend(s.episode.id for s in page.sightings)
        after = page.next_after
        if after is None:
            break
    assert walked == [s.episode.id for s in whole.sightings]
    with pytest.raises(InvalidCursor):
        await lineage(store, LineageRequest(members=members, after="bm90LWEtY3Vyc29y"))
    with pytest.raises(ValueError, match="limit"):
        LineageRequest(members=members, limit=100_000)


@pytest.mark.slow
async def test_window_bounds_sightings_but_keeps_the_fix_before_it(
    store: Any, story: Story
) -> None:
    members = await _members(store, story)
    since = datetime(2026, 4, 1, tzinfo=UTC)
    result = await lineage(store, LineageRequest(members=members, since=since))
    assert [s.episode.id for s in result.sightings] == [
        "billing-totals-s0",
        "billing-totals-s1",
        "shop-report-may-s0",
    ]
    assert result.recurrence_count == 3
    assert any(f.episode.id == "shop-report-march-s4" for f in result.fixes)


@pytest.mark.slow
async def test_a_fixed_number_of_queries_whatever_the_sightings(store: Any, story: Story) -> None:
    class Counting:
        def __init__(self, inner: Any) -> None:
            self.inner, self.calls = inner, 0

        async def run(self, name: str, **params: Any) -> list[dict[str, Any]]:
            self.calls += 1
            result: list[dict[str, Any]] = await self.inner.run(name, **params)
            return result

    members = await _members(store, story)
    one, many = Counting(store), Counting(store)
    await lineage(one, LineageRequest(members=members[:1], limit=1))  # type: ignore[arg-type]
    await lineage(many, LineageRequest(members=members, limit=100))  # type: ignore[arg-type]
    assert one.calls == many.calls == 6


async def test_members_only_in_the_projects_asked(store: Any, story: Story) -> None:
    assert await error_members(store, [story.shop], [numpy_error_key()]) == [
        ErrorKey(story.shop, numpy_error_key())
    ]
    assert await error_members(store, [f"{story.shop}-nobody"], [numpy_error_key()]) == []
    assert await error_members(store, story.projects, []) == []


async def test_moments_read_as_text_keep_the_instant_and_page_exactly(store: Any) -> None:
    # Lineage returns its moments as Neo4j's own text (cheaper for the driver than DateTime
    # values): read back, the instant is the same, and a cursor keeps the text as it is.
    stored = "2026-03-01T10:00:00.123456789+01:00[Europe/Paris]"
    rows = await store.run_text(
        "WITH datetime($at) AS at RETURN toString(at) AS text, at", {"at": stored}, read=True
    )
    text, value = rows[0]["text"], rows[0]["at"]
    assert native_time(text) == native_time(value)
    assert native_time(text) == datetime(2026, 3, 1, 9, 0, 0, 123456, tzinfo=UTC)
    assert iso_time(text) == text
    later = await store.run_text(
        "RETURN datetime($at) > datetime($cursor) AS after",
        {"at": stored, "cursor": iso_time(text)},
        read=True,
    )
    assert later == [{"after": False}]  # the cursor is the very instant, not a rounded one
    with pytest.raises(ValueError):
        native_time("not a time")
