"""The explorer's newly appearing errors (graph/explore/trends.py new_errors) from the first
sighting each error keeps: the same errors, order and counts as read from the sightings
themselves, at the cost of the errors in the window and the top ones' sightings — not of
every sighting of the project (100k bench store: 625 ms and 1.8M db hits before). Real
Neo4j, the pipeline itself (fast embedder: meaning does not matter here)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest
from embedders import HashEmbedder
from profiles import db_hits, plan_lines

from metisgraph.graph.cypher import query
from metisgraph.graph.explore.trends import new_errors
from metisgraph.ingest.adapters import Parsed, SourceRef
from metisgraph.ingest.pipeline.ingestor import Ingestor
from metisgraph.ingest.records import EpisodeRecord

pytestmark = pytest.mark.anyio

# error -> the days of January 2026 it was sighted (one episode a day, each its own task)
SIGHTINGS = {"OrderTimeout": [2, 5, 9], "LedgerLocked": [4], "QuotaExceeded": [6, 8],
             "SchemaDrift": [1], "TokenExpired": [7, 7]}  # fmt: skip


def _at(day: int, hour: int = 9) -> datetime:
    return datetime(2026, 1, day, hour, tzinfo=UTC)


async def _ingest(store: Any, project: str) -> None:
    records = []
    for name, days in SIGHTINGS.items():
        for n, day in enumerate(days):
            text = f"{name}Error: the {name.lower()} check failed for order {name}"
            episode = EpisodeRecord(project=project, id=f"{name}-{n}", outcome="failure",
                                    summary=f"ran the {name} check", error=text,
                                    created_at=_at(day, 9 + n))  # fmt: skip
            records.append(Parsed(episode, SourceRef("test")))
    await Ingestor(store, HashEmbedder()).ingest(records)


async def _from_sightings(
    store: Any, project: str, since: datetime | None, until: datetime | None
) -> list[tuple[str, datetime, int]]:
    """What the read answered before: each error's first sighting from its sightings."""
    rows = await store.run_text(
        """MATCH (r:Error {project: $p})<-[:HIT]-(e:Episode)
           WITH r, min(e.created_at) AS first,
                [x IN collect(e.created_at) WHERE $until IS NULL OR x < $until] AS seen
           WHERE ($since IS NULL OR first >= $since) AND ($until IS NULL OR first < $until)
           RETURN r.kind AS kind, first, size(seen) AS sightings
           ORDER BY first DESC, r.key""",
        {"p": project, "since": since, "until": until},
        read=True,
    )
    return [(r["kind"], r["first"].to_native(), r["sightings"]) for r in rows]


async def test_newly_appearing_errors_are_read_from_their_kept_first_sighting(
    store: Any, project: str
) -> None:
    await _ingest(store, project)
    for since, until, top in ((None, None, 10), (_at(3), _at(8), 10), (None, None, 2),
                              (_at(7, 0), None, 10), (_at(10), None, 10)):  # fmt: skip
        rows = await new_errors(store, [project], since, until, top)
        got = [(r.kind, r.first_seen, r.sightings) for r in rows]
        assert got == (await _from_sightings(store, project, since, until))[:top], (since, until)
    window = await new_errors(store, [project], _at(3), _at(8), 10)
    assert [(r.kind, r.sightings) for r in window] == [
        ("python:TokenExpiredError", 2),
        ("python:QuotaExceededError", 1),  # its sighting of the 8th is past the window
        ("python:LedgerLockedError", 1),
    ]


async def test_the_read_does_not_count_every_sighting_of_the_project(
    store: Any, project: str
) -> None:
    """An error sighted 400 times before the window and 60 errors in it: the read seeks the
    window in the first-sighting index and counts the top three's sightings only."""
    await store.run_text(
        """CREATE (old:Error {project: $p, key: 'old', kind: 'OldError', sightings: 400,
                              tasks: 400, first_sighting: $old, last_sighting: $old})
           WITH old UNWIND range(1, 400) AS i
           CREATE (:Episode {project: $p, id: 'o' + i, task_id: 't' + i, created_at: $old})
                  -[:HIT {project: $p, error: 'old', at: $old}]->(old)""",
        {"p": project, "old": _at(1)},
    )
    await store.run_text(
        """UNWIND range(1, 60) AS i
           CREATE (r:Error {project: $p, key: 'new' + i, kind: 'NewError', sightings: 1,
                            tasks: 1, first_sighting: $at + duration({minutes: i}),
                            last_sighting: $at + duration({minutes: i})})
           CREATE (:Episode {project: $p, id: 'n' + i, task_id: 'n' + i,
                             created_at: $at + duration({minutes: i})})
                  -[:HIT {project: $p, error: 'new' + i, at: $at + duration({minutes: i})}]->(r)""",
        {"p": project, "at": _at(5)},
    )
    params = {"projects": [project], "since": _at(2), "until": None, "top": 3}
    rows = await store.run("trend_new_errors", **params)
    assert [r["key"] for r in rows] == ["new60", "new59", "new58"]
    _, summary, _ = await store.driver.execute_query(
        "PROFILE " + query("trend_new_errors").text, params
    )
    # reading every sighting of the project cost 3,153 db hits here before
    assert db_hits(summary.profile) < 400, plan_lines(summary.profile)
