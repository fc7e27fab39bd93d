"""Tenant isolation over the whole GraphQL schema: a token for project A never reads or links B.

The walk reads the schema the service serves and fails on any root field without a case
here, and on any project or id argument (top level, or a field of an input) that no case
fills with B's name or one of B's ids. Each case sends B's values with A's token and checks
the answer refuses (an error naming the project) or finds nothing (null, an empty list);
at the end no answer A received holds anything of B, and B is as it was.
"""

from __future__ import annotations

import json
import re
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest
from graphql import (
    GraphQLInputObjectType,
    GraphQLList,
    GraphQLNamedType,
    GraphQLNonNull,
    GraphQLObjectType,
)
from graphql import build_schema as parse_sdl
from story import Story, ingest_story

A_TOKEN = "walk-a-token-0123456789"
B_TOKEN = "walk-b-token-0123456789"
A = {"Authorization": f"Bearer {A_TOKEN}"}
B = {"Authorization": f"Bearer {B_TOKEN}"}
SNIPPET = "def b_only_total(rows):\n    return sum(r['amount'] for r in rows)\n"

# Arguments that name a tenant or a node: every one must be filled with B's by some case.
_NAMING = ("project", "projects", "id")


def _names_something(name: str) -> bool:
    return name in _NAMING or name.endswith(("Id", "Project"))


@dataclass
class Walk:
    """B's names and ids, and every answer A received."""

    a: str
    b: str
    ids: dict[str, str]
    client: Any
    answers: list[dict[str, Any]] = field(default_factory=list)

    def ask(self, query: str, headers: dict[str, str] = A, **variables: Any) -> dict[str, Any]:
        payload = {"query": query, "variables": variables}
        response = self.client.post("/graphql", json=payload, headers=headers)
        assert response.status_code == 200, response.text
        body: dict[str, Any] = response.json()
        if headers is A:
            self.answers.append(body)
        return body

    def refused(self, query: str, **variables: Any) -> None:
        body = self.ask(query, **variables)
        messages = " ".join(e["message"] for e in body.get("errors") or [])
        assert re.search(rf"not allowed to \w+ project\(s\): {self.b}\b", messages), body

    def nothing(self, query: str, **variables: Any) -> None:
        """No B data: the field is null or an error that names no B memory."""
        body = self.ask(query, **variables)
        errors = body.get("errors") or []
        assert all("path" in e for e in errors), body  # answered, not a malformed query
        data = body.get("data") or {}
        assert all(v in (None, [], {}) for v in data.values()) or body.get("errors"), body


@dataclass(frozen=True)
class Case:
    covers: frozenset[str]  # 'arg' or 'arg.inputField' filled with B's
    run: Callable[[Walk], None]


def _case(*covers: str) -> Callable[[Callable[[Walk], None]], Case]:
    def wrap(run: Callable[[Walk], None]) -> Case:
        return Case(frozenset(covers), run)

    return wrap


@_case("project", "context.projects")
def _recall(w: Walk) -> None:
    q = """query($p: String!, $c: RecallContext) {
      recall(project: $p, query: "build totals float", context: $c) { hits { score } } }"""
    w.refused(q, p=w.b)
    w.refused(q, p=w.a, c={"projects": [w.b]})


@_case("project", "task.projects")
def _plan_context(w: Walk) -> None:
    q = """query($p: String!, $t: PlanTaskInput!) {
      planContext(project: $p, task: $t) { prompt memories { id } } }"""
    task = {"goal": "sum the amounts of the rows into totals"}
    w.refused(q, p=w.b, t=task)
    w.refused(q, p=w.a, t={**task, "projects": [w.b]})
    assert "errors" not in w.ask(q, p=w.a, t=task)  # A's own plan: checked for B at the end


@_case("project")
def _search_snippets(w: Walk) -> None:
    w.refused('query($p: String!) { searchSnippets(project: $p, query: "total") { score } }', p=w.b)


@_case("project", "id")
def _snippet(w: Walk) -> None:
    q = "query($p: String!, $id: String!) { snippet(project: $p, id: $id) { snippet { id } } }"
    w.refused(q, p=w.b, id=w.ids["snippet"])
    w.nothing(q, p=w.a, id=w.ids["snippet"])


@_case("projects", "error.id")
def _lineage(w: Walk) -> None:
    q = """query($ps: [String!]!, $e: ErrorRef!) {
      lineage(projects: $ps, error: $e) { sightingCount sightings { episode { id } } } }"""
    w.refused(q, ps=[w.b], e={"id": w.ids["error"]})
    body = w.ask(q, ps=[w.a], e={"id": w.ids["error"]})
    lineage = (body.get("data") or {}).get("lineage")
    assert lineage is None or lineage["sightingCount"] == 0, body


@_case("projects")
def _test_lineage(w: Walk) -> None:
    q = """query($ps: [String!]!, $t: String!) {
      testLineage(projects: $ps, test: $t) { runs { run } failing } }"""
    w.refused(q, ps=[w.b], t="tests/test_walk.py::test_b_only")
    body = w.ask(q, ps=[w.a], t="tests/test_walk.py::test_b_only")
    assert body["data"]["testLineage"]["runs"] == [], body


def _projects(w: Walk) -> None:
    names = [p["name"] for p in w.ask("{ projects { name } }")["data"]["projects"]]
    assert names == [w.a]


@_case("projects")
def _errors(w: Walk) -> None:
    w.refused("query($ps: [String!]!) { errors(projects: $ps) { totalCount } }", ps=[w.b])


@_case("projects")
def _search(w: Walk) -> None:
    q = """query($t: String!, $ps: [String!]) { search(text: $t, projects: $ps) {
      signed errors { id project } episodes { episode { id project } } } }"""
    w.refused(q, t="b_only_total", ps=[w.b])
    error = w.ask("query($id: ID!) { error(id: $id) { sample template } }", B, id=w.ids["error"])
    text = error["data"]["error"]["sample"] or error["data"]["error"]["template"]
    theirs = w.ask(q, B, t=text)["data"]["search"]
    assert any(e["project"] == w.b for e in theirs["errors"]), theirs  # B's token finds it
    # Without projects: every project A may read, which is A alone — B's error is not found.
    found = w.ask(q, t=text)["data"]["search"]
    hits = found["errors"] + [e["episode"] for e in found["episodes"]]
    assert all(h["project"] == w.a for h in hits), found


@_case("projects", "error.id")
def _trends(w: Walk) -> None:
    q = """query($ps: [String!]!, $e: ErrorRef) { trends(projects: $ps, error: $e) {
      errors weeks { project sightings } recurring { id } newlyAppearing { id } } }"""
    w.refused(q, ps=[w.b])
    found = w.ask(q, ps=[w.a], e={"id": w.ids["error"]})["data"]["trends"]
    assert found["errors"] == [] and found["weeks"] == [], found  # B's error: not A's to count
    hits = found["recurring"] + found["newlyAppearing"]
    assert all(h["id"] not in w.ids.values() for h in hits), found


@_case("projects")
def _compare(w: Walk) -> None:
    q = """query($ps: [String!]!) { compare(projects: $ps) {
      projects shared { key projects sides { id project } } } }"""
    w.refused(q, ps=[w.a, w.b])
    w.refused(q, ps=[w.b, f"{w.b}-other"])
    assert "errors" in w.ask(q, B, ps=[w.b, w.a]), "B's token compared A's project too"


@_case("project")
def _tools(w: Walk) -> None:
    w.refused("query($p: String!) { tools(project: $p) { name uses } }", p=w.b)


@_case("id")
def _error(w: Walk) -> None:
    w.nothing("query($id: ID!) { error(id: $id) { id } }", id=w.ids["error"])


@_case("id")
def _task(w: Walk) -> None:
    w.nothing("query($id: ID!) { task(id: $id) { stepCount } }", id=w.ids["task"])


@_case("id")
def _node(w: Walk) -> None:
    for kind in ("error", "task", "episode"):
        w.nothing("query($id: ID!) { node(id: $id) { id } }", id=w.ids[kind])


@_case("id")
def _neighbourhood(w: Walk) -> None:
    q = "query($id: ID!) { neighbourhood(id: $id, depth: 2) { nodes { id } } }"
    for kind in ("error", "task", "episode"):
        w.nothing(q, id=w.ids[kind])


@_case("projects")
def _analytics(w: Walk) -> None:
    w.refused("query($ps: [String!]!) { analytics(projects: $ps) { episodes } }", ps=[w.b])


@_case("project")
def _audit_log(w: Walk) -> None:
    w.refused("query($p: String!) { auditLog(project: $p) { entries { action } } }", p=w.b)


@_case("project", "memoryId")
def _review(w: Walk) -> None:
    q = """mutation($p: String!, $m: String!) {
      reviewMemory(project: $p, memoryId: $m, status: "rejected") { status } }"""
    w.refused(q, p=w.b, m=w.ids["episode_key"])
    w.nothing(q, p=w.a, m=w.ids["episode_key"])


@_case("project")
def _review_queue(w: Walk) -> None:
    w.refused("query($p: String!) { reviewQueue(project: $p) { total } }", p=w.b)


@_case("project", "memoryId")
def _memory_review(w: Walk) -> None:
    q = """query($p: String!, $m: String!) {
      memoryReview(project: $p, memoryId: $m) { id status } }"""
    for memory in (w.ids["episode_key"], w.ids["snippet"]):
        w.refused(q, p=w.b, m=memory)
        w.nothing(q, p=w.a, m=memory)


@_case("project", "memoryId")
def _review_action(w: Walk) -> None:
    q = """mutation($p: String!, $m: String!, $a: ReviewAction!, $c: CorrectionInput) {
      review(project: $p, memoryId: $m, action: $a, correction: $c) { id status } }"""
    corrections = {
        w.ids["episode_key"]: {"summary": "walk: A rewrites B"},
        w.ids["snippet"]: {"code": "def walk():\n    return 2\n"},
    }
    for memory, change in corrections.items():
        for action in ("REJECT", "CORRECT"):
            w.refused(q, p=w.b, m=memory, a=action, c=change)
            w.nothing(q, p=w.a, m=memory, a=action, c=change)


@_case("project", "episodeId", "taskId")
def _forget(w: Walk) -> None:
    q = """mutation($p: String!, $e: String, $t: String) {
      forget(project: $p, episodeId: $e, taskId: $t) { deleted } }"""
    w.refused(q, p=w.b, e=w.ids["episode_key"])
    w.refused(q, p=w.b, t=w.ids["task_key"])
    w.nothing(q, p=w.a, e=w.ids["episode_key"])
    w.nothing(q, p=w.a, t=w.ids["task_key"])


@_case("project")
def _forget_project(w: Walk) -> None:
    q = "mutation($p: String!) { forgetProject(project: $p, confirm: $p) { deleted } }"
    w.refused(q, p=w.b)


def _episode(w: Walk, project: str, **more: Any) -> dict[str, Any]:
    return {"project": project, "summary": "walk: an A episode", "id": uuid.uuid4().hex, **more}


@_case("input.project", "input.id", "input.taskId")
def _record_episode(w: Walk) -> None:
    q = "mutation($i: EpisodeInput!) { recordEpisode(input: $i) { id status } }"
    w.refused(q, i=_episode(w, w.b))
    w.refused(q, i=_episode(w, w.b, id=w.ids["episode_key"]))
    # B's ids in A's project name A's own memories: a new episode and task of A, no link to B.
    done = w.ask(q, i=_episode(w, w.a, id=w.ids["episode_key"], taskId=w.ids["task_key"]))
    assert done["data"]["recordEpisode"]["status"] == "written", done


@_case("inputs.project", "inputs.id", "inputs.taskId")
def _record_episodes(w: Walk) -> None:
    q = "mutation($is: [EpisodeInput!]!) { recordEpisodes(inputs: $is) { written refused } }"
    mixed = [_episode(w, w.a), _episode(w, w.b, id=w.ids["episode_key"], taskId=w.ids["task_key"])]
    w.refused(q, **{"is": mixed})


@_case("input.project", "input.id")
def _record_task(w: Walk) -> None:
    q = "mutation($i: TaskInput!) { recordTask(input: $i) { id status } }"
    w.refused(q, i={"project": w.b, "goal": "walk: take over", "id": w.ids["task_key"]})


@_case("input.project", "input.id", "input.episodeId")
def _record_snippet(w: Walk) -> None:
    q = "mutation($i: SnippetRecordInput!) { recordSnippet(input: $i) { id status } }"
    snippet = {"code": "def walk():\n    return 1\n", "language": "python"}
    w.refused(q, i={**snippet, "project": w.b, "episodeId": w.ids["episode_key"]})
    w.refused(q, i={**snippet, "project": w.b, "id": w.ids["snippet"]})
    # B's episode key in A's project names no episode of B: B's state is checked at the end.
    w.ask(q, i={**snippet, "project": w.a, "episodeId": w.ids["episode_key"]})


@_case("project", "memoryId", "appliedInProject")
def _record_outcome(w: Walk) -> None:
    q = """mutation($p: String!, $m: String!) {
      recordOutcome(project: $p, memoryId: $m, success: false) { uses } }"""
    w.refused(q, p=w.b, m=w.ids["snippet"])
    w.nothing(q, p=w.a, m=w.ids["snippet"])
    # A's memory said to be applied in B's episode: refused, and nothing links to B.
    applied = """mutation($p: String!, $m: String!, $in: String, $ap: String) {
      recordOutcome(project: $p, memoryId: $m, success: true, appliedIn: $in,
                    appliedInProject: $ap) { uses } }"""
    w.refused(applied, p=w.a, m=w.ids["episode_key"], **{"in": w.ids["episode_key"], "ap": w.b})


@_case("project", "snippetId")
def _verify_snippet(w: Walk) -> None:
    q = """mutation($p: String!, $s: String!) {
      verifySnippet(project: $p, snippetId: $s) { status } }"""
    w.refused(q, p=w.b, s=w.ids["snippet"])
    w.nothing(q, p=w.a, s=w.ids["snippet"])


@_case("project")
def _maintain(w: Walk) -> None:
    w.refused("mutation($p: String!) { maintain(project: $p) { duplicates } }", p=w.b)


CASES: dict[str, Case | Callable[[Walk], None]] = {
    "Query.recall": _recall,
    "Query.planContext": _plan_context,
    "Query.searchSnippets": _search_snippets,
    "Query.snippet": _snippet,
    "Query.lineage": _lineage,
    "Query.testLineage": _test_lineage,
    "Query.projects": _projects,
    "Query.errors": _errors,
    "Query.search": _search,
    "Query.trends": _trends,
    "Query.compare": _compare,
    "Query.tools": _tools,
    "Query.error": _error,
    "Query.task": _task,
    "Query.node": _node,
    "Query.neighbourhood": _neighbourhood,
    "Query.analytics": _analytics,
    "Query.reviewQueue": _review_queue,
    "Query.memoryReview": _memory_review,
    "Query.auditLog": _audit_log,
    "Mutation.reviewMemory": _review,
    "Mutation.review": _review_action,
    "Mutation.forget": _forget,
    "Mutation.forgetProject": _forget_project,
    "Mutation.recordEpisode": _record_episode,
    "Mutation.recordEpisodes": _record_episodes,
    "Mutation.recordTask": _record_task,
    "Mutation.recordSnippet": _record_snippet,
    "Mutation.recordOutcome": _record_outcome,
    "Mutation.verifySnippet": _verify_snippet,
    "Mutation.maintain": _maintain,
}


def _named(kind: Any) -> GraphQLNamedType:
    while isinstance(kind, GraphQLNonNull | GraphQLList):
        kind = kind.of_type
    named: GraphQLNamedType = kind
    return named


def _naming_arguments(schema_sdl: str) -> dict[str, set[str]]:
    """Every root field, with its arguments (and input fields) that name a project or a node."""
    schema = parse_sdl(schema_sdl)
    fields: dict[str, set[str]] = {}
    for root in (schema.query_type, schema.mutation_type):
        assert isinstance(root, GraphQLObjectType)
        for name, definition in root.fields.items():
            naming = set()
            for arg_name, arg in definition.args.items():
                if _names_something(arg_name):
                    naming.add(arg_name)
                kind = _named(arg.type)
                if isinstance(kind, GraphQLInputObjectType):
                    naming |= {f"{arg_name}.{f}" for f in kind.fields if _names_something(f)}
            fields[f"{root.name}.{name}"] = naming
    return fields


@pytest.fixture(scope="module")
def walk(neo4j_settings: Any, app_settings: Any, embedder: Any) -> Iterator[Walk]:
    from pydantic import SecretStr
    from starlette.testclient import TestClient

    from metisgraph.api.http.app import create_app

    name = f"walk{uuid.uuid4().hex[:8]}"
    story = Story(shop=f"{name}-a", billing=f"{name}-b")
    ingest_story(neo4j_settings, embedder, story)
    settings = app_settings.model_copy(deep=True)
    settings.api.api_tokens = SecretStr(f"{A_TOKEN}={story.shop};{B_TOKEN}={story.billing}")
    app = create_app(settings, embedder=embedder, wait_ready=True)
    with TestClient(app, base_url="http://127.0.0.1") as client:
        w = Walk(story.shop, story.billing, {}, client)
        w.ids = _b_ids(w)
        yield w


def _b_ids(w: Walk) -> dict[str, str]:
    """B's ids, read with B's own token: global ids of an error, a task, an episode; the
    keys of an episode and a task; a snippet's id."""
    errors = w.ask(
        "query($ps: [String!]!) { errors(projects: $ps) { items { id } } }", B, ps=[w.b]
    )["data"]["errors"]["items"]
    lineage = w.ask(
        """query($ps: [String!]!, $e: ErrorRef!) { lineage(projects: $ps, error: $e) {
             sightings { episode { id episodeId taskId } } } }""",
        B,
        ps=[w.b],
        e={"id": errors[0]["id"]},
    )["data"]["lineage"]["sightings"][0]["episode"]
    task = w.ask("query($id: ID!) { node(id: $id) { key } }", B, id=lineage["taskId"])
    snippet = w.ask(
        "mutation($i: SnippetRecordInput!) { recordSnippet(input: $i) { id status } }",
        B,
        i={"project": w.b, "code": SNIPPET, "language": "python", "name": "b_only_total"},
    )["data"]["recordSnippet"]
    assert snippet["status"] == "written", snippet
    return {
        "error": errors[0]["id"],
        "episode": lineage["id"],
        "task": lineage["taskId"],
        "episode_key": lineage["episodeId"],
        "task_key": task["data"]["node"]["key"],
        "snippet": snippet["id"],
    }


def _b_state(w: Walk) -> Any:
    q = """query($ps: [String!]!, $s: String!, $p: String!, $e: String!) {
      projects { name tasks episodes errors }
      errors(projects: $ps) { totalCount items { sightings tasks } }
      snippet(project: $p, id: $s) { snippet { id uses successes failures } }
      episodeReview: memoryReview(project: $p, memoryId: $e) { status reviewer correctedBy }
      snippetReview: memoryReview(project: $p, memoryId: $s) { status reviewer correctedBy } }"""
    return w.ask(q, B, ps=[w.b], s=w.ids["snippet"], p=w.b, e=w.ids["episode_key"])["data"]


def test_every_field_and_every_naming_argument_has_a_case(app_settings: Any) -> None:
    from metisgraph.api.graphql.schema import build_schema

    naming = _naming_arguments(str(build_schema(app_settings.api)))
    assert set(naming) == set(CASES), "a root field without an isolation case (or a stale one)"
    uncovered = {
        f"{name}({arg})"
        for name, args in naming.items()
        for arg in args
        if not isinstance(CASES[name], Case) or arg not in CASES[name].covers  # type: ignore[union-attr]
    }
    assert not uncovered, f"project or id arguments no case fills with B's: {sorted(uncovered)}"


@pytest.mark.slow
def test_a_token_for_a_never_reads_or_links_b(walk: Walk) -> None:
    before = _b_state(walk)
    for name, case in CASES.items():
        run = case.run if isinstance(case, Case) else case
        try:
            run(walk)
        except AssertionError as exc:
            raise AssertionError(f"{name}: {exc}") from None
    assert _b_state(walk) == before, "B changed under A's token"
    seen = json.dumps([answer.get("data") for answer in walk.answers])
    # (B's episode and task keys are left out: A recorded memories of its own under them.)
    b_only = (walk.b, walk.ids["error"], walk.ids["task"], walk.ids["episode"], "b_only_total")
    for value in (*b_only, walk.ids["snippet"]):
        assert value not in seen, f"A's answers hold B's {value!r}"
