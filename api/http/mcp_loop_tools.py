"""The MCP tools for the rest of the loop: review what was recorded, verify code in the
sandbox, maintain the project. Each is one GraphQL operation sent through the server's
runner, so the caller's token needs the scope GraphQL asks for (api/scopes.py): review for
the queue and the decisions, write for verify_snippet and maintain."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from mcp.server import MCPServer
from mcp.server.mcpserver import Context
from pydantic import Field

__all__ = ["add_loop_tools"]

_PENDING = "kind id title summary command code outcome risk reason recorded"
REVIEW_QUEUE = f"""
query($project: String!, $kind: ReviewKind, $first: Int!, $after: String) {{
  reviewQueue(project: $project, kind: $kind, first: $first, after: $after) {{
    total endCursor hasNextPage items {{ {_PENDING} }}
  }}
}}"""
REVIEW = """
mutation($project: String!, $id: String!, $action: ReviewAction!, $note: String,
         $correction: CorrectionInput) {
  review(project: $project, memoryId: $id, action: $action, note: $note,
         correction: $correction) {
    kind id status reviewer note reviewedAt reason correctedBy
  }
}"""
VERIFY = """
mutation($project: String!, $id: String!, $command: String, $parameters: JSON) {
  verifySnippet(project: $project, snippetId: $id, command: $command,
                parameters: $parameters) {
    snippetId status reason command exitCode durationMs timedOut outputTail
    uses successes failures successRate
  }
}"""
MAINTAIN = """
mutation($project: String!) {
  maintain(project: $project) {
    project episodes dirty unsituated compared duplicates patterns dissolved retired revived
  }
}"""

Project = Annotated[str, Field(description="The project the memory belongs to")]
Runner = Any  # GraphQLRunner (mcp_tools); Any keeps the two modules apart


def add_loop_tools(mcp: MCPServer[Any], run: Runner) -> None:
    """Add review_queue, review, verify_snippet and maintain to ``mcp``."""

    @mcp.tool(
        description="Memories waiting for a reviewer (critical operations start pending), "
        "oldest first, paged; kept from recall until decided. Needs the review scope."
    )
    async def review_queue(
        project: Project,
        ctx: Context,
        kind: Literal["episode", "snippet"] | None = None,
        first: int = 20,
        after: str | None = None,
    ) -> dict[str, Any]:
        variables = {
            "project": project,
            "kind": kind.upper() if kind else None,
            "first": first,
            "after": after,
        }
        return (await run(REVIEW_QUEUE, variables, ctx))["reviewQueue"]  # type: ignore[no-any-return]

    @mcp.tool(
        description="Decide on a memory: approve, reject (never recalled again), hold, or "
        "correct (a corrected new version; give the fields to change). Needs the review scope."
    )
    async def review(
        project: Project,
        memory_id: str,
        action: Literal["approve", "reject", "hold", "correct"],
        ctx: Context,
        note: str | None = None,
        correction: dict[str, Any] | None = None,
    ) -> dict[str, Any]:
        variables = {
            "project": project,
            "id": memory_id,
            "action": action.upper(),
            "note": note,
            "correction": correction,
        }
        return (await run(REVIEW, variables, ctx))["review"]  # type: ignore[no-any-return]

    @mcp.tool(
        description="Run a snippet in the sandbox (no network, limits, a throw-away "
        "directory): its stored tests, else the test command its run used, or `command`; "
        "success links it VERIFIED_IN the "
        "environment, failure counts against it. Needs the write scope."
    )
    async def verify_snippet(
        project: Project,
        snippet_id: str,
        ctx: Context,
        command: str | None = None,
        parameters: dict[str, Any] | None = None,
    ) -> dict[str, Any]:
        variables = {
            "project": project,
            "id": snippet_id,
            "command": command,
            "parameters": parameters,
        }
        return (await run(VERIFY, variables, ctx))["verifySnippet"]  # type: ignore[no-any-return]

    @mcp.tool(
        description="Consolidate a project now: near-duplicates merge, lessons are drawn, "
        "dead snippets retire. Needs the write scope."
    )
    async def maintain(project: Project, ctx: Context) -> dict[str, Any]:
        return (await run(MAINTAIN, {"project": project}, ctx))["maintain"]  # type: ignore[no-any-return]
