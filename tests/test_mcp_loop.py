"""The MCP tools for the rest of the loop — review_queue, review, verify_snippet, maintain —
through a real MCP client over streamable HTTP, under the scopes of their GraphQL fields."""

from __future__ import annotations

from typing import Any

import pytest
from test_mcp import over_http, over_stdio

from metisgraph.ingest.sandbox import SandboxSettings
from metisgraph.ingest.sandbox.support import probe

pytestmark = pytest.mark.anyio

LOOP = {"review_queue", "review", "verify_snippet", "maintain"}
SLUGIFY = "def slugify(title):\n    return '-'.join(title.lower().split())\n"
RECORD_SNIPPET = """
mutation($input: SnippetRecordInput!) { recordSnippet(input: $input) { id status } }"""


def _result(called: Any) -> Any:
    assert not called.is_error, called.content
    found = called.structured_content
    return found.get("result", found) if isinstance(found, dict) else found


def _refused(called: Any, scope: str, project: str) -> None:
    assert called.is_error, called.content
    assert f"not allowed to {scope} project(s): {project}" in called.content[0].text


@pytest.mark.slow
async def test_loop_tools_review_verify_and_maintain_under_graphql_scopes(
    app_settings: Any, embedder: Any, serve: Any, store: Any, project: str
) -> None:
    from metisgraph.api.http.app import create_app
    from metisgraph.api.keys import create_key

    settings = app_settings.model_copy(deep=True)
    settings.api.require_token = True
    token = {
        scope: (await create_key(store, [project], [scope], actor="test")).token
        for scope in ("read", "write", "review")
    }
    critical = {
        "project": project,
        "summary": "Dropped the stale staging namespace to free the quota",
        "command": "kubectl delete namespace staging-old",
        "outcome": "success",
    }
    with serve(create_app(settings, embedder=embedder, wait_ready=True)) as url:
        async with over_http(url, token["write"]) as writer:
            assert {t.name for t in (await writer.list_tools()).tools} >= LOOP
            episode = _result(await writer.call_tool("record_episode", critical))["id"]
            _refused(
                await writer.call_tool("review_queue", {"project": project}), "review", project
            )
            approve = {"project": project, "memory_id": episode, "action": "approve"}
            _refused(await writer.call_tool("review", approve), "review", project)
            done = _result(await writer.call_tool("maintain", {"project": project}))
            assert done["project"] == project and done["episodes"] >= 1

        async with over_http(url, token["review"]) as reviewer:
            queue = _result(await reviewer.call_tool("review_queue", {"project": project}))
            pending = {i["id"]: i for i in queue["items"]}  # the episode, and its command
            assert episode in pending and queue["total"] == len(pending)
            assert "kubectl-delete" in pending[episode]["reason"]
            decided = _result(await reviewer.call_tool("review", approve | {"note": "planned"}))
            assert (decided["id"], decided["status"]) == (episode, "approved")
            assert decided["note"] == "planned"
            after = _result(await reviewer.call_tool("review_queue", {"project": project}))
            assert after["total"] == queue["total"] - 1
            assert episode not in {i["id"] for i in after["items"]}
            _refused(await reviewer.call_tool("maintain", {"project": project}), "write", project)

        async with over_stdio(url, token["read"]) as reader:  # the stdio proxy, same checks
            _refused(await reader.call_tool("maintain", {"project": project}), "write", project)
            verify = {"project": project, "snippet_id": "snippet:any"}
            _refused(await reader.call_tool("verify_snippet", verify), "write", project)
            _refused(await reader.call_tool("review", approve), "review", project)


@pytest.mark.sandbox
async def test_verify_snippet_tool_runs_the_stored_tests(
    api_url: str, gql: Any, project: str
) -> None:
    support = probe(SandboxSettings())
    if not support.ready:
        pytest.skip(support.reason())
    tests = ["assert slugify('Hello World') == 'hello-world'"]
    body = gql(RECORD_SNIPPET, {"input": {"project": project, "code": SLUGIFY, "tests": tests,
                                          "language": "python"}})  # fmt: skip
    snippet = body["data"]["recordSnippet"]["id"]
    async with over_http(api_url) as session:
        verified = _result(
            await session.call_tool("verify_snippet", {"project": project, "snippet_id": snippet})
        )
    assert (verified["snippetId"], verified["status"], verified["exitCode"]) == (
        snippet,
        "passed",
        0,
    )
    assert (verified["uses"], verified["successes"]) == (1, 1)
