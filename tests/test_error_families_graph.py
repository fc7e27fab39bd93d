"""Error families in the graph: assigned at ingest, merged only, resolved across projects,
and given to errors stored before families existed (real Neo4j)."""

from __future__ import annotations

import random
from datetime import UTC, datetime
from typing import Any

import pytest

from metisgraph.graph.families import family_members
from metisgraph.ingest.adapters import Parsed, SourceRef
from metisgraph.ingest.errors import error_ref_keys, extract_errors
from metisgraph.ingest.pipeline.families import assign_all_families
from metisgraph.ingest.pipeline.ingestor import Ingestor
from metisgraph.ingest.records import EpisodeRecord

pytestmark = pytest.mark.anyio

USERS = ("cyrus", "news", "test", "games")


def _opened(user: str) -> str:
    return f"ERROR session opened for user {user} by (uid=0)"


def _key(text: str) -> str:
    (error,) = extract_errors(text)
    return error.key


async def _ingest(store: Any, embedder: Any, project: str, texts: list[str], day: int = 1) -> None:
    records = []
    for i, text in enumerate(texts):
        at = datetime(2026, 1, day, i, tzinfo=UTC)
        episode = EpisodeRecord(project=project, id=f"e{day}-{i}", outcome="failure",
                                summary="login", error=text, created_at=at)  # fmt: skip
        records.append(Parsed(episode, SourceRef("test")))
    await Ingestor(store, embedder).ingest(records)


async def _families(store: Any, project: str) -> dict[str, str]:
    rows = await store.run_text(
        "MATCH (r:Error {project: $p}) RETURN r.key AS key, r.family AS family",
        {"p": project},
        read=True,
    )
    return {r["key"]: r["family"] for r in rows}


async def _family_node(store: Any, project: str, family: str) -> dict[str, Any]:
    rows = await store.run_text(
        "MATCH (f:ErrorFamily {project: $p, id: $id}) RETURN properties(f) AS f",
        {"p": project, "id": family},
        read=True,
    )
    assert len(rows) == 1
    return dict(rows[0]["f"])


def _partition(families: dict[str, str]) -> set[frozenset[str]]:
    groups: dict[str, set[str]] = {}
    for key, family in families.items():
        groups.setdefault(family, set()).add(key)
    return {frozenset(g) for g in groups.values()}


async def test_new_errors_join_merge_and_keep_the_oldest_id(
    store: Any, embedder: Any, project: str
) -> None:
    cyrus, news, test = (_key(_opened(u)) for u in USERS[:3])
    other = _key("ERROR disk 3 full on /dev/sda")
    await _ingest(store, embedder, project, [_opened("cyrus"), _opened("news")], day=1)
    await _ingest(store, embedder, project, ["ERROR disk 3 full on /dev/sda"], day=2)
    first = await _families(store, project)
    assert first == {cyrus: cyrus, news: news, other: other}  # two values: no slot yet
    await _ingest(store, embedder, project, [_opened("test")], day=3)
    after = await _families(store, project)
    assert after == {cyrus: cyrus, news: cyrus, test: cyrus, other: other}
    family = await _family_node(store, project, cyrus)
    assert family["template"] == "session opened for user <*> by (uid=<*>)"
    assert family["size"] == 3 and family["former_ids"] == [news]
    assert family["since"].day == 1
    absent = await store.run_text(
        "MATCH (f:ErrorFamily {project: $p, id: $id}) RETURN count(f) AS n",
        {"p": project, "id": news},
        read=True,
    )
    assert absent[0]["n"] == 0  # the absorbed family is gone; its id lives on as a former id


async def test_families_do_not_depend_on_the_order_of_ingest(
    store: Any, embedder: Any, project: str
) -> None:
    texts = [_opened(u) for u in USERS] + [
        "ERROR connection from 10.0.0.1 () at Fri Jun 17 07:07:00 2005",
        "ERROR connection from 10.0.0.2 (a.example.net) at Fri Jun 17 07:07:00 2005",
        "ERROR disk 3 full on /dev/sda",
        "ERROR program interrupt: illegal instruction",
        "ERROR program interrupt: privileged instruction",
        "ERROR program interrupt: trap instruction",
    ]
    found = []
    for seed in (1, 2):
        order = list(texts)
        random.Random(seed).shuffle(order)
        where = f"{project}-{seed}"
        for day, start in enumerate(range(0, len(order), 3), start=1):  # three batches
            await _ingest(store, embedder, where, order[start : start + 3], day=day)
        found.append(_partition(await _families(store, where)))
    assert found[0] == found[1]
    assert frozenset(_key(_opened(u)) for u in USERS) in found[0]
    assert len(found[0]) == 4  # sessions, connections, disk, interrupts


@pytest.mark.slow
async def test_family_members_across_the_projects_asked_only(
    store: Any, embedder: Any, project: str
) -> None:
    a, b, c = f"{project}-a", f"{project}-b", f"{project}-c"
    await _ingest(store, embedder, a, [_opened(u) for u in USERS[:3]])
    await _ingest(store, embedder, b, [_opened("games"), _opened("cyrus")])
    await _ingest(store, embedder, c, [_opened("news")])
    keys = error_ref_keys(text=_opened("cyrus"))
    members = await family_members(store, [a, b], keys)
    assert {(m.project, m.key) for m in members} == {
        (a, _key(_opened("cyrus"))), (a, _key(_opened("news"))), (a, _key(_opened("test"))),
        (b, _key(_opened("cyrus"))), (b, _key(_opened("games"))),
    }  # fmt: skip
    assert all(m.project != c for m in members)
    assert [m.key for m in members if m.matched] == keys * 2
    assert {m.family_template for m in members if m.project == a} == {
        "session opened for user <*> by (uid=<*>)"
    }
    # b alone has too few accounts for a family, but from a sibling seen only in b, a's
    # family, whose template covers it, is found too.
    games = await family_members(store, [a, b], error_ref_keys(text=_opened("games")))
    assert {(m.project, m.key) for m in games} == {(m.project, m.key) for m in members}
    signature = extract_errors(_opened("test"))[0].signature
    by_signature = await family_members(store, [a], error_ref_keys(signature=signature))
    assert len(by_signature) == 3
    assert await family_members(store, [c], error_ref_keys(key=keys[0])) == []
    assert len(await family_members(store, [a, b], keys, limit=2)) == 2


def test_an_error_reference_names_one_kind_of_value() -> None:
    with pytest.raises(ValueError, match="exactly one"):
        error_ref_keys()
    with pytest.raises(ValueError, match="exactly one"):
        error_ref_keys(key="0" * 16, text="boom")
    with pytest.raises(ValueError, match="key: expected 16 hexadecimal"):
        error_ref_keys(key="MATCH (n) DETACH DELETE n")
    assert error_ref_keys(text="nothing went wrong") == []


async def test_errors_stored_before_families_get_them_once(
    store: Any, embedder: Any, project: str
) -> None:
    await _ingest(store, embedder, project, [_opened(u) for u in USERS])
    expected = _partition(await _families(store, project))
    await store.run_text(
        """MATCH (r:Error {project: $p})
           REMOVE r.family, r.family_bucket, r.family_tokens
           WITH collect(r) AS errors
           MATCH (f:ErrorFamily {project: $p}) DETACH DELETE f""",
        {"p": project},
    )
    report = await assign_all_families(store, project)
    assert report == {"errors": 4, "shaped": 4, "placed": 4}
    assert _partition(await _families(store, project)) == expected
    assert len(expected) == 1
    again = await assign_all_families(store, project)
    assert again == {"errors": 4, "shaped": 0, "placed": 0}


async def test_forgetting_a_project_forgets_its_families(
    store: Any, embedder: Any, project: str
) -> None:
    await _ingest(store, embedder, project, [_opened(u) for u in USERS[:3]])
    await store.run("forget_project", project=project)
    rows = await store.run_text(
        "MATCH (f:ErrorFamily {project: $p}) RETURN count(f) AS n", {"p": project}, read=True
    )
    assert rows[0]["n"] == 0


async def test_lineage_of_an_error_follows_its_family(
    store: Any, embedder: Any, project: str
) -> None:
    from metisgraph.graph.lineage import LineageRequest, error_members, lineage

    await _ingest(store, embedder, project, [_opened(u) for u in USERS[:3]])
    await _ingest(store, embedder, project, ["ERROR disk 3 full on /dev/sda"], day=2)
    members = await error_members(store, [project], error_ref_keys(text=_opened("cyrus")))
    assert {m.key for m in members} == {_key(_opened(u)) for u in USERS[:3]}
    found = await lineage(store, LineageRequest(members))
    assert found.sighting_count == 3 and len(found.sightings) == 3
    alone = await error_members(store, [project], [_key("ERROR disk 3 full on /dev/sda")])
    assert [m.key for m in alone] == [_key("ERROR disk 3 full on /dev/sda")]
