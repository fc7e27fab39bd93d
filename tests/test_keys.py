"""Scoped API keys stored in Neo4j: what each scope allows, revocation, rates and quotas, the
audit trail, and that the store keeps a digest, never a token."""

from __future__ import annotations

import hashlib
import time
import uuid
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass
from typing import Any

import anyio
import pytest
from graphql import build_schema as parse_sdl

from metisgraph.api.auth import Limits

RECALL = 'query($p: String!) { recall(project: $p, query: "totals") { abstained } }'
RECORD = "mutation($i: EpisodeInput!) { recordEpisode(input: $i) { id status } }"
RECORD_MANY = "mutation($is: [EpisodeInput!]!) { recordEpisodes(inputs: $is) { written } }"
REVIEW = """mutation($p: String!, $m: String!) {
  reviewMemory(project: $p, memoryId: $m, status: "approved") { status } }"""
QUEUE = "query($p: String!) { reviewQueue(project: $p) { total } }"
FORGET_PROJECT = "mutation($p: String!) { forgetProject(project: $p, confirm: $p) { deleted } }"
AUDIT = """query($p: String!) { auditLog(project: $p) {
  entries { actor action project target count } pageInfo { hasNextPage } } }"""


@dataclass
class Keys:
    client: Any
    neo4j: Any  # the test Neo4j's settings: each use opens its own driver in its own loop
    project: str
    other: str
    tokens: dict[str, str]
    ids: dict[str, str]

    def ask(self, token: str | None, query: str, **variables: Any) -> Any:
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        payload = {"query": query, "variables": variables}
        return self.client.post("/graphql", json=payload, headers=headers)

    def body(self, who: str, query: str, **variables: Any) -> dict[str, Any]:
        response = self.ask(self.tokens[who], query, **variables)
        assert response.status_code == 200, response.text
        body: dict[str, Any] = response.json()
        return body

    def refused(self, who: str, scope: str, query: str, **variables: Any) -> None:
        body = self.body(who, query, **variables)
        messages = " ".join(e["message"] for e in body.get("errors") or [])
        assert f"not allowed to {scope} project(s)" in messages, body

    def on_store(self, work: Callable[[Any], Awaitable[Any]]) -> Any:
        from metisgraph.graph.store import GraphStore, driver_from_settings

        async def run() -> Any:
            driver = driver_from_settings(self.neo4j)
            try:
                return await work(GraphStore(driver, self.neo4j.database))
            finally:
                await driver.close()

        return anyio.run(run)

    def make(self, projects: list[str], scopes: list[str], **limits: Any) -> tuple[str, str]:
        from metisgraph.api.keys import create_key

        issued = self.on_store(
            lambda store: create_key(store, projects, scopes, limits=Limits(**limits), actor="t")
        )
        return issued.token, issued.info.key_id


def _episode(project: str) -> dict[str, Any]:
    return {
        "project": project,
        "id": uuid.uuid4().hex,
        "summary": "build_totals crashed on np.float",
    }


@pytest.fixture(scope="module")
def keys(neo4j_settings: Any, app_settings: Any, embedder: Any) -> Iterator[Keys]:
    from starlette.testclient import TestClient

    from metisgraph.api.http.app import create_app

    settings = app_settings.model_copy(deep=True)
    settings.api.require_token = True
    project, other = f"keys{uuid.uuid4().hex[:8]}", f"keys{uuid.uuid4().hex[:8]}-other"
    app = create_app(settings, embedder=embedder, wait_ready=True)
    with TestClient(app, base_url="http://127.0.0.1") as client:  # the schema is applied
        k = Keys(client, neo4j_settings, project, other, {}, {})
        for name, projects, scopes in (
            ("read", [project], ["read"]),
            ("write", [project], ["write"]),
            ("review", [project], ["review"]),
            ("admin", [project], ["admin"]),
            ("elsewhere", [other], ["admin"]),
        ):
            k.tokens[name], k.ids[name] = k.make(projects, scopes)
        yield k


def test_every_root_field_needs_a_named_scope(app_settings: Any) -> None:
    from metisgraph.api.graphql.schema import build_schema
    from metisgraph.api.scopes import REQUIRED

    schema = parse_sdl(str(build_schema(app_settings.api)))
    fields = {
        f"{root.name}.{name}"
        for root in (schema.query_type, schema.mutation_type)
        if root is not None
        for name in root.fields
    }
    assert fields == set(REQUIRED)


@pytest.mark.slow
def test_each_scope_allows_what_it_names_and_no_more(keys: Keys) -> None:
    p = keys.project
    assert "errors" not in keys.body("read", RECALL, p=p)
    keys.refused("read", "write", RECORD, i=_episode(p))
    keys.refused("elsewhere", "read", RECALL, p=p)  # admin of another project only

    written = keys.body("write", RECORD, i=_episode(p))["data"]["recordEpisode"]
    assert written["status"] == "written"
    assert "errors" not in keys.body("write", RECALL, p=p)  # write implies read
    keys.refused("write", "review", REVIEW, p=p, m=written["id"])

    reviewed = keys.body("review", REVIEW, p=p, m=written["id"])
    assert reviewed["data"]["reviewMemory"]["status"] == "approved", reviewed
    keys.refused("review", "write", RECORD, i=_episode(p))
    keys.refused("read", "review", QUEUE, p=p)  # pending memories are for reviewers
    assert "errors" not in keys.body("review", QUEUE, p=p)

    trail = keys.body("admin", AUDIT, p=p)["data"]["auditLog"]["entries"]
    done = [(e["actor"], e["action"]) for e in trail]
    assert (f"key:{keys.ids['review']}", "approve") in done
    assert (f"key:{keys.ids['write']}", "record") in done
    assert all(e["project"] == p for e in trail)


def test_forgetting_the_project_and_reading_its_trail_need_admin(keys: Keys) -> None:
    """(Out of the test above: make test-fast's check that write is not admin.)"""
    keys.refused("write", "admin", FORGET_PROJECT, p=keys.project)
    keys.refused("write", "admin", AUDIT, p=keys.project)


def test_no_token_or_a_wrong_one_is_401(keys: Keys) -> None:
    assert keys.ask(None, RECALL, p=keys.project).status_code == 401
    forged = keys.tokens["admin"][:-4] + "AAAA"
    assert keys.ask(forged, RECALL, p=keys.project).status_code == 401
    assert keys.ask("mgk_000000000000_" + "A" * 43, RECALL, p=keys.project).status_code == 401


@pytest.mark.slow
def test_a_revoked_key_stops_within_the_cache_lifetime(keys: Keys) -> None:
    from metisgraph.api.keys import KEY_CACHE_S, revoke_key

    token, key_id = keys.make([keys.project], ["read"])
    assert keys.ask(token, RECALL, p=keys.project).status_code == 200
    keys.on_store(lambda store: revoke_key(store, key_id, actor="test"))
    revoked = time.monotonic()
    while keys.ask(token, RECALL, p=keys.project).status_code == 200:
        assert time.monotonic() - revoked < KEY_CACHE_S + 1, "a revoked key still works"
        time.sleep(0.25)


def test_the_store_keeps_a_digest_never_the_token(keys: Keys) -> None:
    rows = keys.on_store(
        lambda store: store.run_text(
            "MATCH (k:AccessKey {key_id: $id}) RETURN properties(k) AS p",
            {"id": keys.ids["admin"]},
            read=True,
        )
    )
    kept = rows[0]["p"]
    token = keys.tokens["admin"]
    assert kept["digest"] == hashlib.sha256(token.encode()).hexdigest()
    secret = token.rsplit("_", 1)[1]
    assert not any(secret in str(value) for value in kept.values())


@pytest.mark.slow
def test_rates_and_quotas_answer_429_with_retry_after(keys: Keys) -> None:
    token, _ = keys.make([keys.project], ["write"], per_minute=2)
    statuses = [keys.ask(token, RECALL, p=keys.project) for _ in range(3)]
    assert [r.status_code for r in statuses] == [200, 200, 429]
    assert int(statuses[-1].headers["Retry-After"]) >= 1

    token, _ = keys.make([keys.project], ["write"], records_per_day=2)
    over = keys.ask(token, RECORD_MANY, **{"is": [_episode(keys.project) for _ in range(3)]})
    assert over.status_code == 429 and int(over.headers["Retry-After"]) >= 1
    assert "quota of 2 records a day" in over.text
    fits = keys.ask(token, RECORD_MANY, **{"is": [_episode(keys.project) for _ in range(2)]})
    assert fits.json()["data"]["recordEpisodes"]["written"] == 2
    assert keys.ask(token, RECORD, i=_episode(keys.project)).status_code == 429


def test_a_rate_below_one_a_second_paces_requests() -> None:
    """0.5 a second is one request every 2 s, not a refusal of every request."""
    from metisgraph.api.auth import Caller
    from metisgraph.api.http.ratelimit import RateLimiter

    now = [0.0]
    limiter = RateLimiter(clock=lambda: now[0])
    slow = Caller("key:slow", None, limits=Limits(per_second=0.5))
    waits = []
    for at in (0.0, 0.5, 2.0, 2.1):
        now[0] = at
        waits.append(limiter.retry_after(slow))
    assert waits == [None, 2, None, 2]


def test_keys_and_the_trail_stay_out_of_the_project_graph(keys: Keys) -> None:
    # a memory of its own: the project is listed whichever of this module's tests ran before
    written = keys.body("write", RECORD, i=_episode(keys.project))["data"]["recordEpisode"]
    assert written["status"] == "written"
    exported = keys.client.get(
        "/export",
        params={"project": keys.project, "vectors": "false"},
        headers={"Authorization": f"Bearer {keys.tokens['admin']}"},
    )
    assert exported.status_code == 200, exported.text
    digests = [hashlib.sha256(t.encode()).hexdigest() for t in keys.tokens.values()]
    for kept in ("AccessKey", "AuditEntry", "key_create", *digests):
        assert kept not in exported.text
    projects = keys.body("admin", "{ projects { name } }")["data"]["projects"]
    assert [p["name"] for p in projects] == [keys.project]


def test_introspection_only_in_dev(app_settings: Any) -> None:
    from metisgraph.api.graphql.schema import build_schema

    served = build_schema(app_settings.api)
    assert served.execute_sync("{ __schema { queryType { name } } }").errors
    assert not served.execute_sync("{ __typename }").errors
    dev = build_schema(app_settings.api.model_copy(update={"dev": True}))
    assert not dev.execute_sync("{ __schema { queryType { name } } }").errors


def test_off_loopback_a_token_is_required(app_settings: Any) -> None:
    from metisgraph.api.http.app import _tokens

    settings = app_settings.model_copy(deep=True)
    settings.api.host = "10.0.0.5"
    with pytest.raises(RuntimeError, match="without tokens"):
        _tokens(settings)
    settings.api.require_token = True  # stored keys only
    assert _tokens(settings) == (None, True)


def test_a_refused_record_is_audited_as_refused_and_costs_no_quota(keys: Keys) -> None:
    """Issue 30, item 4: the quota is charged after validation, for what may be written; a
    refused record is in the trail as refused, with count 0."""
    token, key_id = keys.make([keys.project], ["admin"], records_per_day=1)
    blank = {"project": keys.project, "id": "refused-1", "summary": ""}
    refused = keys.ask(token, RECORD, i=blank)
    assert refused.status_code == 200, refused.text
    assert refused.json()["data"]["recordEpisode"]["status"] == "refused"
    written = keys.ask(token, RECORD, i=_episode(keys.project))
    assert written.status_code == 200, written.text  # the refused one took none of the 1
    assert written.json()["data"]["recordEpisode"]["status"] == "written"
    entries = keys.body("admin", AUDIT, p=keys.project)["data"]["auditLog"]["entries"]
    mine = [(e["action"], e["count"]) for e in entries if e["actor"] == f"key:{key_id}"]
    assert mine == [("record", 1), ("record_refused", 0)], entries


def test_a_long_project_name_cannot_break_the_audit_write(keys: Keys) -> None:
    from metisgraph.graph import COUNTERS

    token, _ = keys.make(["*"], ["admin"])
    before = sum(v for n, _, v in COUNTERS.snapshot() if n == "audit_write_failures")
    long = "p" * 10_000
    answer = keys.ask(token, RECORD, i={"project": long, "id": "x", "summary": "a lesson"})
    assert answer.json()["data"]["recordEpisode"]["status"] == "refused", answer.text
    forgotten = keys.ask(token, FORGET_PROJECT, p=long)
    assert forgotten.status_code == 200, forgotten.text
    after = sum(v for n, _, v in COUNTERS.snapshot() if n == "audit_write_failures")
    assert after == before  # every entry kept ("audit entry not kept" before)


@pytest.mark.slow
def test_pending_memories_reach_only_callers_who_may_review(keys: Keys) -> None:
    """Issue 30, item 5: a risky memory waiting for review (``rm -rf /``) is kept from the
    recall and planContext of a key that cannot review it; a reviewer sees it, flagged."""
    risky = {
        "project": keys.project,
        "id": f"risky-{uuid.uuid4().hex[:6]}",
        "summary": "wiped the scratch volume to free the disk of the build host",
        "action": {"type": "command", "command": "rm -rf /"},
        "outcome": "success",
    }
    written = keys.body("write", RECORD, i=risky)["data"]["recordEpisode"]
    assert written["status"] == "written", written
    ask = """query($p: String!) { recall(project: $p, query: "free the disk of the build host",
      k: 20) { hits { episode { id reviewStatus } } } }"""
    plan = """query($p: String!) { planContext(project: $p,
      task: {goal: "free the disk of the build host"}, k: 20) { memories { id } } }"""

    def recalled(who: str) -> set[str]:
        hits = keys.body(who, ask, p=keys.project)["data"]["recall"]["hits"]
        return {h["episode"]["id"] for h in hits}

    def planned(who: str) -> set[str]:
        memories = keys.body(who, plan, p=keys.project)["data"]["planContext"]["memories"]
        return {m["id"] for m in memories}

    for who in ("read", "write"):
        assert risky["id"] not in recalled(who) and risky["id"] not in planned(who), who
    for who in ("review", "admin"):
        assert risky["id"] in recalled(who) and risky["id"] in planned(who), who
    only_pending = """query($p: String!) { recall(project: $p, query: "disk",
      filter: {reviewStatus: ["pending"]}) { abstained } }"""
    keys.refused("read", "review", only_pending, p=keys.project)


@pytest.mark.slow
def test_pending_snippets_reach_only_callers_who_may_review(keys: Keys) -> None:
    """The same rule for code memory: a risky snippet waiting for review is kept from the
    snippet search and planContext of a key that cannot review it (it was found by both)."""
    record = """mutation($i: SnippetRecordInput!) { recordSnippet(input: $i) {
      id status snippet { reviewStatus } } }"""
    risky = {"project": keys.project, "language": "bash", "name": "free_build_disk",
             "description": "free the disk of the build host by wiping the scratch volume",
             "code": "rm -rf / --no-preserve-root\n"}  # fmt: skip
    written = keys.body("write", record, i=risky)["data"]["recordSnippet"]
    assert written["snippet"]["reviewStatus"] == "pending", written
    search = """query($p: String!) { searchSnippets(project: $p,
      query: "free the disk of the build host", k: 5) { snippet { id } } }"""
    plan = """query($p: String!) { planContext(project: $p,
      task: {goal: "free the disk of the build host"}, k: 20) { memories { id } } }"""

    def found(who: str) -> set[str]:
        hits = keys.body(who, search, p=keys.project)["data"]["searchSnippets"]
        return {h["snippet"]["id"] for h in hits}

    def planned(who: str) -> set[str]:
        memories = keys.body(who, plan, p=keys.project)["data"]["planContext"]["memories"]
        return {m["id"] for m in memories}

    for who in ("read", "write"):
        assert written["id"] not in found(who) and written["id"] not in planned(who), who
    for who in ("review", "admin"):
        assert written["id"] in found(who) and written["id"] in planned(who), who


def test_n_workers_share_a_rate_not_multiply_it() -> None:
    """Issue 30, item 8: three workers told they are three (METISGRAPH_RATE_WORKERS) let a
    key spread over them make its stated 6 a minute in all; each alone would let 6 through
    (18 in all) before."""
    from metisgraph.api.auth import Caller
    from metisgraph.api.http.ratelimit import RateLimiter

    now = [0.0]
    workers = [RateLimiter(per_minute=6, clock=lambda: now[0], share=3) for _ in range(3)]
    key = Caller("key:spread", None)
    allowed = sum(workers[n % 3].retry_after(key) is None for n in range(30))  # round robin
    assert allowed == 6
    own = Caller("key:own", None, limits=Limits(per_minute=3))  # a key's own limit is shared too
    assert sum(workers[n % 3].retry_after(own) is None for n in range(30)) == 3
