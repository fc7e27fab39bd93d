"""The MCP server through a real MCP client session: streamable HTTP at /mcp of the real app,
and `metisgraph mcp` on stdio proxying to it — the real service, Neo4j and model behind."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx
import httpx2
import pytest
from mcp.client import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client

TOOLS = {
    "recall",
    "plan_context",
    "record_episode",
    "record_outcome",
    "search_snippets",
    "lineage",
    "review_queue",
    "review",
    "verify_snippet",
    "maintain",
}
CLI = str(Path(sys.executable).parent / "metisgraph")
SUMMARY = "The nightly backup job failed because the disk of the NFS mount was full"


@asynccontextmanager
async def over_http(url: str, token: str | None = None) -> AsyncIterator[ClientSession]:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    async with (
        httpx2.AsyncClient(headers=headers, timeout=120) as http,
        streamable_http_client(f"{url}/mcp", http_client=http) as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        yield session


@asynccontextmanager
async def over_stdio(url: str, token: str | None = None) -> AsyncIterator[ClientSession]:
    env = {"METISGRAPH_MCP_URL": url, **({"METISGRAPH_MCP_TOKEN": token} if token else {})}
    if os.environ.get("PYTHONPATH"):
        env["PYTHONPATH"] = os.environ["PYTHONPATH"]
    server = StdioServerParameters(command=CLI, args=["mcp"], env=env)
    async with stdio_client(server) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        yield session


def _result(called: Any) -> Any:
    assert not called.is_error, called.content
    if called.structured_content is not None:
        found = called.structured_content
        return found.get("result", found) if isinstance(found, dict) else found
    return json.loads(called.content[0].text)


async def _record_and_recall(session: ClientSession, project: str) -> list[dict[str, Any]]:
    tools = await session.list_tools()
    assert {t.name for t in tools.tools} == TOOLS
    plan = next(t for t in tools.tools if t.name == "plan_context")
    assert set(plan.input_schema["required"]) == {"project", "goal"}
    recorded = _result(
        await session.call_tool(
            "record_episode",
            {
                "project": project,
                "summary": SUMMARY,
                "command": "df -h /mnt/backup",
                "outcome": "failure",
                "error": "OSError: [Errno 28] No space left on device",
            },
        )
    )
    assert recorded["status"] == "written"
    recalled = _result(
        await session.call_tool(
            "recall",
            {"project": project, "query": "why did the backup fail? no space left", "k": 3},
        )
    )
    assert recalled["hits"][0]["episode"]["id"] == recorded["id"]
    planned = _result(
        await session.call_tool(
            "plan_context",
            {"project": project, "goal": "make the nightly backup succeed", "budget": 800},
        )
    )
    assert planned["memories"][0]["id"] == recorded["id"] and planned["tokens"] <= 800
    hits: list[dict[str, Any]] = recalled["hits"]
    top = hits[0]
    print(f"tools: {sorted(t.name for t in tools.tools)}")  # shown with -s (issue 11's note)
    print(f"recall: {top['episode']['id']} {top['score']:.3f} {top['episode']['summary']!r}")
    return hits


@pytest.mark.anyio
@pytest.mark.slow
async def test_tools_over_streamable_http(api_url: str, project: str) -> None:
    async with over_http(api_url) as session:
        await _record_and_recall(session, project)
        refused = await session.call_tool("recall", {"project": project, "query": " "})
        assert refused.is_error and "query must not be blank" in refused.content[0].text


def test_mcp_answers_only_to_allowed_host_names(api_url: str) -> None:
    """DNS rebinding: /mcp is behind the same Host check as /graphql."""
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}
    headers = {"Accept": "application/json, text/event-stream", "Host": "attacker.example"}
    refused = httpx.post(f"{api_url}/mcp", json=body, headers=headers, timeout=30)
    assert refused.status_code == 400 and "attacker.example" in refused.text
    listed = httpx.post(f"{api_url}/mcp", json=body, headers={**headers, "Host": "localhost"})
    assert listed.status_code == 200, listed.text
    assert {t["name"] for t in listed.json()["result"]["tools"]} == TOOLS


@pytest.mark.slow
@pytest.mark.anyio
async def test_tools_over_stdio_proxy_to_the_api(api_url: str, project: str) -> None:
    async with over_stdio(api_url) as session:
        await _record_and_recall(session, project)


@pytest.mark.slow
@pytest.mark.anyio
async def test_token_scopes_apply_to_mcp_tools(
    app_settings: Any, embedder: Any, serve: Any, store: Any, project: str
) -> None:
    """Stored keys (api/keys.py): a read-only key recalls but may not record, over both
    transports; a key of another project is refused; no token is a 401."""
    from metisgraph.api.http.app import create_app
    from metisgraph.api.keys import create_key

    settings = app_settings.model_copy(deep=True)
    settings.api.require_token = True
    other = f"{project}-other"
    reader = (await create_key(store, [project], ["read"], actor="test")).token
    elsewhere = (await create_key(store, [other], ["admin"], actor="test")).token
    episode = {"project": project, "summary": SUMMARY, "outcome": "failure"}
    with serve(create_app(settings, embedder=embedder, wait_ready=True)) as url:
        async with over_http(url, reader) as session:
            allowed = await session.call_tool("recall", {"project": project, "query": "backup"})
            assert not allowed.is_error, allowed.content
            for tool, arguments in (
                ("record_episode", episode),
                ("record_outcome", {"project": project, "memory_id": "ep-1", "success": True}),
            ):
                refused = await session.call_tool(tool, arguments)
                assert refused.is_error and (
                    f"not allowed to write project(s): {project}" in refused.content[0].text
                ), (tool, refused.content)
        async with over_stdio(url, reader) as session:
            refused = await session.call_tool("record_episode", episode)
            assert refused.is_error and "not allowed to write project(s)" in (
                refused.content[0].text
            )
        async with over_http(url, elsewhere) as session:
            denied = await session.call_tool(
                "plan_context", {"project": project, "goal": "make the backup succeed"}
            )
            assert denied.is_error and f"not allowed to read project(s): {project}" in (
                denied.content[0].text
            )
        with pytest.raises(Exception):  # noqa: B017 - no token: the HTTP layer answers 401
            async with over_http(url) as session:
                await session.list_tools()
