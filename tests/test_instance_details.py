"""Instance details (the originals behind <EMAIL>, <IP>, <HOME> …) are for no reader.

By default they are not kept at all: an e-mail, an internal IP and a home path planted in an
episode come back through no read path — the stored graph, GraphQL (recall, planContext,
node, neighbourhood, task, auditLog), /export, the MCP tools, the explorer's routes, the
logs, and the dead-letter file of the same ingest. An operator may opt in
(METISGRAPH_KEEP_INSTANCE_DETAILS): then node() shows them to the project's admins only,
never to a reader, never in an export or a recall, and forget takes them away.
"""

from __future__ import annotations

import json
import logging
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest
from mcp.client import ClientSession
from mcp.client.streamable_http import streamable_http_client

from metisgraph.graph import NodeRef

EMAIL = "alice.liddell@wondercorp.io"
IP = "10.42.17.203"
HOME = "/home/alice"
PLANTED = (EMAIL, IP, HOME)

RECORD = "mutation($i: EpisodeInput!) { recordEpisode(input: $i) { id status } }"
EPISODE = """id summary reasoning actionCommand actionParameters observation error facts
             title tags"""
RECALL = f"""query($p: String!, $q: String!) {{ recall(project: $p, query: $q, k: 5) {{
  hits {{ episode {{ {EPISODE} }} errors {{ key kind template frames }} environment {{ os }}
          task {{ id goal constraints }} }} }} }}"""
PLAN = """query($p: String!, $g: String!) {
  planContext(project: $p, task: {goal: $g}) { prompt memories { id } } }"""
NODE = "query($id: ID!) { node(id: $id) { id properties } }"
AROUND = """query($id: ID!) { neighbourhood(id: $id, depth: 2) {
  nodes { id title properties } edges { type properties } } }"""
TASK = """query($id: ID!) { task(id: $id) { id goal
  steps { summary command actionParameters facts environment } } }"""
AUDIT = """query($p: String!) { auditLog(project: $p) { entries { actor action target } } }"""
FORGET = """mutation($p: String!, $e: String!) { forget(project: $p, episodeId: $e) {
  deleted } }"""


def _episode(project: str, task: str) -> dict[str, Any]:
    return {
        "project": project,
        "id": f"ep-{uuid.uuid4().hex[:8]}",
        "taskId": task,
        "summary": f"The ledger sync to {IP} failed; {EMAIL} owns the box",
        "reasoning": f"{EMAIL} said the config under {HOME}/ledger/settings.toml is stale",
        "action": {
            "type": "command",
            "command": f"scp {HOME}/ledger/settings.toml deploy@{IP}:/etc/ledger/",
            "parameters": {"owner": EMAIL, "target": IP},
        },
        "observation": f"ssh: connect to host {IP} port 22: Connection refused",
        "error": f"ConnectionRefusedError: [Errno 111] {IP}:22 ({HOME}/ledger)",
        "facts": {"contact": EMAIL, "host": IP, "checkout": f"{HOME}/ledger"},
        "outcome": "failure",
        "tags": ["service:ledger"],
    }


def _leaks(text: str) -> list[str]:
    return [value for value in PLANTED if value in text]


def _stored_text(neo4j: Any, project: str, *, but_details: bool = False) -> str:
    """Every property of every node and relationship of the project, and the audit trail
    (``but_details``: every one but an episode's kept instance details)."""
    from metisgraph.graph.store import driver_from_settings

    async def read() -> str:
        driver = driver_from_settings(neo4j)
        try:
            records, _, _ = await driver.execute_query(
                "MATCH (n) WHERE n.project = $project OR n.name = $project "
                "OPTIONAL MATCH (n)-[r]-() "
                "RETURN collect(DISTINCT CASE WHEN $but_details THEN n {.*, details: null} "
                "ELSE properties(n) END) AS nodes, "
                "collect(DISTINCT properties(r)) AS rels "
                "UNION ALL MATCH (a:AuditEntry) "
                "RETURN collect(properties(a)) AS nodes, [] AS rels",
                project=project,
                but_details=but_details,
                database_=neo4j.database,
            )
        finally:
            await driver.close()
        return json.dumps([dict(r) for r in records], default=str)

    return anyio.run(read)


def _mcp_recall(url: str, project: str, token: str | None = None) -> str:
    async def call() -> str:
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        async with (
            httpx2.AsyncClient(headers=headers, timeout=120) as http,
            streamable_http_client(f"{url}/mcp", http_client=http) as (read, write),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            texts = []
            for tool, arguments in (
                ("recall", {"project": project, "query": "ledger sync refused", "k": 5}),
                ("plan_context", {"project": project, "goal": "sync the ledger config"}),
                ("lineage", {"projects": [project], "error_text": "ConnectionRefusedError"}),
            ):
                called = await session.call_tool(tool, arguments)
                assert not called.is_error, called.content
                texts.append(json.dumps(called.model_dump(mode="json"), default=str))
            return "\n".join(texts)

    return anyio.run(call)


@pytest.mark.slow
def test_instance_details_reach_no_reader_by_default(
    client: Any,
    gql: Any,
    api_url: str,
    neo4j_settings: Any,
    embedder: Any,
    project: str,
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG)
    task = f"task-{uuid.uuid4().hex[:6]}"
    record = _episode(project, task)
    written = gql(RECORD, {"i": record})
    assert written["data"]["recordEpisode"]["status"] == "written", written
    episode = written["data"]["recordEpisode"]["id"]

    # The same kind of record through a file, beside one that is refused (a bad outcome):
    # the dead letter keeps the refused record for its owner (0600) with a reason that names
    # the field, and the stored one leaves nothing of its originals anywhere.
    lines = tmp_path / "records.jsonl"
    good = _episode(project, task) | {"id": "from-file"}
    bad = _episode(project, task) | {"id": "refused", "outcome": "maybe"}
    lines.write_text(
        "\n".join(json.dumps({"record_type": "episode", **_snake(r)}) for r in (good, bad)) + "\n"
    )
    summary, dead = _ingest_file(neo4j_settings, embedder, lines, tmp_path / "dead.jsonl")
    assert (summary.written, summary.refused) == (1, 1), summary
    kept = [json.loads(line) for line in dead.read_text().splitlines()]
    assert [k["raw"]["id"] for k in kept] == ["refused"]
    assert oct(dead.stat().st_mode & 0o777) == "0o600"
    assert all(not _leaks(json.dumps(k["errors"])) for k in kept), kept
    assert "outcome" in json.dumps(kept[0]["errors"])

    read: dict[str, str] = {"graph": _stored_text(neo4j_settings, project)}
    node_id = NodeRef("Episode", project, episode).id
    task_id = NodeRef("Task", project, task).id
    for name, query, variables in (
        ("recall", RECALL, {"p": project, "q": "ledger sync connection refused"}),
        ("planContext", PLAN, {"p": project, "g": "sync the ledger config to the host"}),
        ("node", NODE, {"id": node_id}),
        ("neighbourhood", AROUND, {"id": node_id}),
        ("task", TASK, {"id": task_id}),
        ("auditLog", AUDIT, {"p": project}),
    ):
        body = gql(query, variables)
        assert "errors" not in body, (name, body)
        read[name] = json.dumps(body)
    assert "Connection refused" in read["node"] and "<IP>" in read["node"]  # it is there
    for fmt in ("json", "graphml"):
        response = client.get("/export", params={"project": project, "format": fmt})
        assert response.status_code == 200, response.text
        read[f"export {fmt}"] = response.text
    for table in ("nodes", "edges"):
        response = client.get(
            "/export", params={"project": project, "format": "csv", "table": table}
        )
        read[f"export csv {table}"] = response.text
    for path in ("/explore", "/explore/explore.js"):
        read[path] = client.get(path).text
    read["mcp"] = _mcp_recall(api_url, project)
    read["logs"] = caplog.text

    assert {name: _leaks(text) for name, text in read.items() if _leaks(text)} == {}
    assert "<EMAIL>" in read["graph"] and "<HOME>" in read["graph"]  # abstracted, not lost


def _snake(record: dict[str, Any]) -> dict[str, Any]:
    return {("task_id" if k == "taskId" else k): v for k, v in record.items()}


def _ingest_file(neo4j: Any, embedder: Any, path: Path, dead_path: Path) -> tuple[Any, Path]:
    from metisgraph.graph.store import GraphStore, driver_from_settings
    from metisgraph.ingest import DeadLetter, Ingestor, read_path

    async def run() -> Any:
        driver = driver_from_settings(neo4j)
        dead = DeadLetter.open(dead_path)
        try:
            store = GraphStore(driver, neo4j.database)
            return await Ingestor(store, embedder).ingest(read_path(path), dead_letter=dead)
        finally:
            dead.close()
            await driver.close()

    return anyio.run(run), dead_path


@dataclass
class OptedIn:
    client: Any
    neo4j: Any
    project: str
    tokens: dict[str, str]

    def ask(self, who: str, query: str, **variables: Any) -> dict[str, Any]:
        headers = {"Authorization": f"Bearer {self.tokens[who]}"}
        response = self.client.post(
            "/graphql", json={"query": query, "variables": variables}, headers=headers
        )
        assert response.status_code == 200, response.text
        body: dict[str, Any] = response.json()
        assert "errors" not in body, body
        return body


@pytest.fixture(scope="module")
def opted_in(neo4j_settings: Any, app_settings: Any, embedder: Any) -> Iterator[OptedIn]:
    from starlette.testclient import TestClient

    from metisgraph.api.auth import Limits
    from metisgraph.api.http.app import create_app
    from metisgraph.api.keys import create_key
    from metisgraph.graph.store import GraphStore, driver_from_settings

    settings = app_settings.model_copy(deep=True)
    settings.api.require_token = True
    settings.api.keep_instance_details = True
    project = f"details{uuid.uuid4().hex[:8]}"

    def make(scopes: list[str]) -> str:
        async def run() -> str:
            driver = driver_from_settings(neo4j_settings)
            try:
                store = GraphStore(driver, neo4j_settings.database)
                issued = await create_key(store, [project], scopes, limits=Limits(), actor="t")
                return issued.token
            finally:
                await driver.close()

        return anyio.run(run)

    app = create_app(settings, embedder=embedder, wait_ready=True)
    with TestClient(app, base_url="http://127.0.0.1") as client:
        tokens = {name: make([name]) for name in ("read", "write", "admin")}
        yield OptedIn(client, neo4j_settings, project, tokens)


@pytest.mark.slow
def test_opted_in_details_are_for_admins_alone_and_go_with_forget(opted_in: OptedIn) -> None:
    p = opted_in.project
    record = _episode(p, f"task-{uuid.uuid4().hex[:6]}")
    written = opted_in.ask("write", RECORD, i=record)["data"]["recordEpisode"]
    assert written["status"] == "written"
    node_id = NodeRef("Episode", p, written["id"]).id

    as_admin = opted_in.ask("admin", NODE, id=node_id)["data"]["node"]["properties"]
    assert EMAIL in as_admin["details"]["EMAIL"] and IP in as_admin["details"]["IP"]
    assert HOME in as_admin["details"]["HOME"]
    as_reader = opted_in.ask("read", NODE, id=node_id)["data"]["node"]["properties"]
    assert "details" not in as_reader and not _leaks(json.dumps(as_reader))
    around = opted_in.ask("admin", AROUND, id=node_id)
    recalled = opted_in.ask("admin", RECALL, p=p, q="ledger sync connection refused")
    assert recalled["data"]["recall"]["hits"]
    assert not _leaks(json.dumps(around)) and not _leaks(json.dumps(recalled))
    headers = {"Authorization": f"Bearer {opted_in.tokens['admin']}"}
    exported = opted_in.client.get("/export", params={"project": p}, headers=headers)
    assert exported.status_code == 200 and not _leaks(exported.text)

    # Kept apart: no other stored property (the embedded texts, the searchable ones) holds
    # them; only `details` does, and forget takes it with the episode.
    stored = _stored_text(opted_in.neo4j, p)
    assert set(_leaks(stored)) == set(PLANTED)
    assert _leaks(_stored_text(opted_in.neo4j, p, but_details=True)) == []
    deleted = opted_in.ask("admin", FORGET, p=p, e=written["id"])["data"]["forget"]["deleted"]
    assert deleted >= 1
    assert _leaks(_stored_text(opted_in.neo4j, p)) == []


@pytest.mark.anyio
async def test_migration_6_removes_the_details_kept_before(store: Any, project: str) -> None:
    from metisgraph.ingest.migrations import MIGRATIONS

    (six,) = [m for m in MIGRATIONS if m.version == 6]
    kept = json.dumps({"EMAIL": [EMAIL], "IP": [IP], "HOME": [HOME]})
    await store.run_text(
        "CREATE (:Episode {project: $p, id: 'old', summary: 'mailed <EMAIL>', details: $d})",
        {"p": project, "d": kept},
    )
    changes = await six.step(store)
    assert changes["episodes_cleared"] >= 1
    rows = await store.run_text(
        "MATCH (e:Episode {project: $p, id: 'old'}) RETURN e.details AS details, e.summary AS s",
        {"p": project},
        read=True,
    )
    assert rows == [{"details": None, "s": "mailed <EMAIL>"}]
