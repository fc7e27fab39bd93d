"""Forgetting through GraphQL: an id that names nothing deletes nothing; a whole project goes
only through its own mutation, confirmed by repeating the project's name."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest
from neo4j import GraphDatabase

from metisgraph.graph.settings import Neo4jSettings

RECORD_MANY = """
mutation($inputs: [EpisodeInput!]!) { recordEpisodes(inputs: $inputs) { written refused } }"""
FORGET = """
mutation($project: String!, $episodeId: String, $taskId: String) {
  forget(project: $project, episodeId: $episodeId, taskId: $taskId) { deleted }
}"""
FORGET_PROJECT = """
mutation($project: String!, $confirm: String!) {
  forgetProject(project: $project, confirm: $confirm) { deleted }
}"""


@pytest.fixture
def stored(gql: Any, project: str) -> str:
    """Three episodes of one task in the project."""
    inputs = [
        {"project": project, "id": f"ep-{n}", "taskId": "task-1", "step": n,
         "summary": f"The nightly backup job step {n} copied the database dump"}
        for n in range(3)
    ]  # fmt: skip
    body = gql(RECORD_MANY, {"inputs": inputs})
    assert body["data"]["recordEpisodes"]["written"] == 3, body
    return project


@pytest.fixture
def episode_ids(neo4j_settings: Neo4jSettings) -> Iterator[Callable[[str], set[str]]]:
    """The ids of the episodes stored in a project, read from Neo4j itself."""
    password = neo4j_settings.password.get_secret_value() if neo4j_settings.password else ""
    with GraphDatabase.driver(neo4j_settings.uri or "", auth=("neo4j", password)) as driver:

        def ids(project: str) -> set[str]:
            records, _, _ = driver.execute_query(
                "MATCH (e:Episode {project: $project}) RETURN e.id AS id", project=project
            )
            return {r["id"] for r in records}

        yield ids


def _error(body: dict[str, Any]) -> str:
    assert body.get("data") is None or body["data"].get("forget") is None, body
    message: str = body["errors"][0]["message"]
    return message


@pytest.mark.parametrize(
    ("arguments", "named"),
    [
        ({"episodeId": ""}, "episodeId"),
        ({"episodeId": "   "}, "episodeId"),
        ({"taskId": ""}, "taskId"),
        ({"taskId": "\t"}, "taskId"),
        ({}, "forgetProject"),
        ({"episodeId": "ep-0", "taskId": "task-1"}, "not both"),
    ],
    ids=["empty-episode", "blank-episode", "empty-task", "blank-task", "no-id", "both-ids"],
)
def test_forget_without_one_real_id_is_refused_and_deletes_nothing(
    gql: Any, stored: str, episode_ids: Any, arguments: dict[str, str], named: str
) -> None:
    message = _error(gql(FORGET, {"project": stored, **arguments}))
    assert named in message
    assert episode_ids(stored) == {"ep-0", "ep-1", "ep-2"}


@pytest.mark.parametrize("argument", ["episodeId", "taskId"])
def test_forget_an_unknown_id_is_a_clear_error(
    gql: Any, stored: str, episode_ids: Any, argument: str
) -> None:
    message = _error(gql(FORGET, {"project": stored, argument: "no-such-id"}))
    assert argument in message and "'no-such-id'" in message and stored in message
    assert episode_ids(stored) == {"ep-0", "ep-1", "ep-2"}


def test_forget_one_episode_and_then_its_task(gql: Any, stored: str, episode_ids: Any) -> None:
    assert gql(FORGET, {"project": stored, "episodeId": "ep-0"})["data"]["forget"]["deleted"] == 1
    assert episode_ids(stored) == {"ep-1", "ep-2"}
    body = gql(FORGET, {"project": stored, "taskId": "task-1"})
    assert body["data"]["forget"]["deleted"] >= 2, body
    assert episode_ids(stored) == set()


@pytest.mark.parametrize(
    "confirm", ["", "yes", "other-project", " {project}", "{project} "], ids=repr
)
def test_forget_project_needs_the_project_name_as_confirmation(
    gql: Any, stored: str, episode_ids: Any, confirm: str
) -> None:
    body = gql(FORGET_PROJECT, {"project": stored, "confirm": confirm.format(project=stored)})
    assert body["data"] is None, body
    assert "confirm" in body["errors"][0]["message"]
    assert episode_ids(stored) == {"ep-0", "ep-1", "ep-2"}


def test_forget_project_confirmed_deletes_the_project_and_only_it(
    gql: Any, stored: str, episode_ids: Any, project: str
) -> None:
    other = f"{project}-other"
    kept = {"project": other, "id": "kept", "summary": "The nightly backup job of another team"}
    body = gql(RECORD_MANY, {"inputs": [kept]})
    assert body["data"]["recordEpisodes"]["written"] == 1, body
    body = gql(FORGET_PROJECT, {"project": stored, "confirm": stored})
    assert body["data"]["forgetProject"]["deleted"] >= 4, body  # 3 episodes, task, project...
    assert episode_ids(stored) == set()
    assert episode_ids(other) == {"kept"}
    again = gql(FORGET_PROJECT, {"project": stored, "confirm": stored})
    assert again["data"] is None and stored in again["errors"][0]["message"], again
