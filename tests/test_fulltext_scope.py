"""Recall's full-text channels search the question's terms without the projects' scope first
(issue 24: a required scope term every episode of a project carries made Lucene visit each
of them, its cost growing with the project), and within the scope when other projects'
episodes filled that search. Either way a channel finds exactly what the scoped search alone
finds, in the same order."""

from __future__ import annotations

import random
import uuid
from dataclasses import replace
from typing import Any

import pytest

from metisgraph.graph import QuestionVectors, RecallRequest, snippet_search
from metisgraph.graph.channels import gather_channels
from metisgraph.graph.lucene import lucene_query, project_scope
from metisgraph.graph.recall_settings import RecallSettings
from metisgraph.graph.snippet_search import SnippetSearch, _fetch

DIMENSIONS = 384
# One question of k 1 with two candidates a channel: each full-text search fetches 8.
LIMIT, FETCH = 2, 8
CHANNELS = {"fulltext": "episode_text", "context_text": "episode_context"}


def _word() -> str:
    """A term no other test's episode holds (the test database is shared)."""
    return "zq" + "".join(random.choice("bcdfghjklmnpqrstvwxz") for _ in range(10))


async def _episodes(
    store: Any, project: str, texts: list[str], recallable: bool = True
) -> set[str]:
    rows = [{"id": f"e-{uuid.uuid4().hex[:12]}", "text": text} for text in texts]
    await store.run_text(
        "UNWIND $rows AS row "
        "CREATE (:Episode {project: $project, id: row.id, recallable: $recallable, "
        "outcome: 'success', review_status: 'unreviewed', active_at: datetime(), "
        "summary: row.text, context_text: row.text, scope: $scope})",
        {"project": project, "rows": rows, "recallable": recallable,
         "scope": project_scope(project)},
    )  # fmt: skip
    return {row["id"] for row in rows}


def _request(project: str, text: str) -> RecallRequest:
    return RecallRequest(
        projects=(project,),
        text=text,
        k=1,
        settings=replace(RecallSettings(), candidates=LIMIT),
    )


async def _channels(store: Any, project: str, text: str) -> dict[str, list[tuple[str, float]]]:
    vector = [random.random() for _ in range(DIMENSIONS)]
    answers = await gather_channels(store, _request(project, text), QuestionVectors(vector))
    assert not answers.failures
    return {
        name: [(c.key[1], c.score) for c in answers.candidates.get(name, [])] for name in CHANNELS
    }


async def _scoped_alone(store: Any, index: str, project: str, text: str) -> list[tuple[str, float]]:
    """What the channel found before: the scoped search, filtered after."""
    rows = await store.run_text(
        f"CALL db.index.fulltext.queryNodes('{index}', $q, {{limit: $fetch}}) "
        "YIELD node AS e, score WHERE e.project IN $projects AND e.recallable = true "
        "RETURN e.id AS id, score ORDER BY score DESC LIMIT $limit",
        {"q": lucene_query(text, (project_scope(project),)), "fetch": FETCH, "limit": LIMIT,
         "projects": [project]},
    )  # fmt: skip
    return [(r["id"], r["score"]) for r in rows]


@pytest.mark.anyio
async def test_a_small_project_beside_a_larger_one_finds_its_own_episodes(
    store: Any, project: str
) -> None:
    # Another project's episodes match the question better and outnumber the fetch: the
    # terms alone find only them, so the channel searches within the project's scope.
    word = _word()
    await _episodes(store, f"{project}-big", [f"{word} {word} {word} crash"] * (FETCH + 4))
    own = await _episodes(store, project, [f"{word} crash in the lexer", f"{word} parser"])
    found = await _channels(store, project, f"{word} crash")
    for name, index in CHANNELS.items():
        ids = [i for i, _ in found[name]]
        assert len(ids) == LIMIT and set(ids) == own, (name, ids)
        alone = await _scoped_alone(store, index, project, f"{word} crash")
        assert ids == [i for i, _ in alone], name


@pytest.mark.anyio
async def test_a_project_holding_the_matches_finds_what_the_scoped_search_finds(
    store: Any, project: str
) -> None:
    # Every match is the project's own: the terms alone find the same episodes, in the same
    # order, each scored the scoped search's score less the same share of its scope term.
    word = _word()
    texts = [f"{word} " * n + "crash in the lexer" for n in range(1, FETCH + 5)]
    await _episodes(store, project, texts)
    await _episodes(store, project, [f"{word} {word} {word} {word}"] * 3, recallable=False)
    found = await _channels(store, project, f"{word} lexer")
    for name, index in CHANNELS.items():
        alone = await _scoped_alone(store, index, project, f"{word} lexer")
        assert [i for i, _ in found[name]] == [i for i, _ in alone] and len(alone) == LIMIT
        shifts = [s - t for (_, s), (_, t) in zip(alone, found[name], strict=True)]
        assert max(shifts) - min(shifts) < 1e-4 and min(shifts) > 0, (name, shifts)


async def _snippets(store: Any, project: str, texts: list[str]) -> set[str]:
    rows = [{"id": f"s-{uuid.uuid4().hex[:12]}", "text": text} for text in texts]
    await store.run_text(
        "UNWIND $rows AS row "
        "CREATE (:Snippet {project: $project, id: row.id, recallable: true, "
        "language: 'python', kind: 'function', name: 'f', description: row.text, "
        "scope: $scope})",
        {"project": project, "rows": rows, "scope": project_scope(project)},
    )
    return {row["id"] for row in rows}


@pytest.mark.anyio
async def test_the_snippet_search_finds_a_small_projects_code_beside_a_larger_ones(
    store: Any, project: str
) -> None:
    # planContext's full-text search over code: the same two searches as recall's channel.
    word = _word()
    search = SnippetSearch(project=project, text=f"{word} parser", k=1)
    fetch = _fetch(search) * 5
    await _snippets(store, f"{project}-big", [f"{word} {word} {word} parser"] * (fetch + 5))
    own = await _snippets(store, project, [f"{word} parser for the lexer", f"{word} lexer"])
    found = await snippet_search._fulltext(store, search, None)
    assert {r["id"] for r in found} == own
    # a word only the project's code holds: the terms alone find it all, best first
    other = _word()
    mine = await _snippets(store, project, [f"{other} {other} lexer", f"{other} parser"])
    found = await snippet_search._fulltext(store, replace(search, text=other), None)
    assert {r["id"] for r in found} == mine and found[0]["score"] > found[1]["score"]
