"""The MCP server: metisgraph's tools for agents that speak the Model Context Protocol.

Each tool is one GraphQL operation, sent through a runner: in the app (streamable HTTP at
/mcp) the runner executes the schema in-process as the caller the bearer token names; for
``metisgraph mcp`` (stdio) it posts to a running API with the configured token. Either way
the GraphQL layer checks the caller's projects, so token scopes apply to every tool.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Annotated, Any, Literal

from mcp.server import MCPServer
from mcp.server.mcpserver import Context
from mcp.server.mcpserver.exceptions import ToolError
from pydantic import Field

from metisgraph.api.http.mcp_loop_tools import add_loop_tools

__all__ = ["GraphQLRunner", "ToolError", "build_mcp", "data_or_error"]

GraphQLRunner = Callable[[str, dict[str, Any], Any], Awaitable[dict[str, Any]]]
"""(document, variables, the MCP request's Context) -> the operation's data, or ToolError."""

INSTRUCTIONS = (
    "metisgraph is the long-term memory of software work: episodes (what was tried, where, "
    "with what outcome), verified code snippets and errors. Call plan_context before planning "
    "a step and cite the memories (M1, M2, ...) you rely on; record_episode after each step; "
    "record_outcome for each memory you used, saying whether it helped."
)
_EPISODE = "id summary outcome taskId step actionCommand observation error"
RECALL = f"""
query($project: String!, $query: String!, $context: RecallContext, $k: Int!) {{
  recall(project: $project, query: $query, context: $context, k: $k) {{
    abstained reason
    hits {{ score episode {{ {_EPISODE} }} snippets {{ compatible snippet {{ id template }} }}
           why {{ relevance channels {{ channel score }} }} }}
    conflicts {{ reason a {{ id }} b {{ id }} }}
  }}
}}"""
PLAN = """
query($project: String!, $task: PlanTaskInput!, $k: Int!, $budget: Int!, $verified: Boolean!) {
  planContext(project: $project, task: $task, k: $k, budget: $budget,
              requireVerified: $verified) {
    prompt tokens budget tokenizer leftOut abstained reason
    memories { label id kind why score }
  }
}"""
EPISODE = """
mutation($input: EpisodeInput!) {
  recordEpisode(input: $input) { id status errors { field message } notes }
}"""
OUTCOME = """
mutation($project: String!, $id: String!, $success: Boolean!, $note: String) {
  recordOutcome(project: $project, memoryId: $id, success: $success, note: $note) {
    memoryId kind uses successes failures successRate
  }
}"""
SNIPPETS = """
query($project: String!, $query: String!, $k: Int!, $verified: Boolean!) {
  searchSnippets(project: $project, query: $query, k: $k, requireVerified: $verified) {
    score compatibility { status reasons }
    snippet { id name language kind template successRate risk templateParameters { name } }
  }
}"""
LINEAGE = """
query($projects: [String!]!, $error: ErrorRef!, $limit: Int!) {
  lineage(projects: $projects, error: $error, limit: $limit) {
    sightingCount recurrenceCount warnings
    errors { id project }
    triedAndFailed { errors tools episode { id summary outcome } }
    fixes { via episode { id summary } snippets { id name language } }
    related { id signature tasks }
  }
}"""


def _given(**values: Any) -> dict[str, Any]:
    return {k: v for k, v in values.items() if v is not None}


Project = Annotated[str, Field(description="The project the memory belongs to")]
Outcome = Literal["success", "failure", "partial", "unknown"]


def build_mcp(run: GraphQLRunner) -> MCPServer[Any]:
    """The MCP server with its tools, each sent through ``run``."""
    mcp: MCPServer[Any] = MCPServer("metisgraph", instructions=INSTRUCTIONS)

    @mcp.tool(
        description="Recall the experience that helps with a question (episodes, the "
        "code across their bridge, conflicts), each with why it ranked."
    )
    async def recall(
        project: Project, query: str, ctx: Context, k: int = 5, error: str | None = None
    ) -> dict[str, Any]:
        context = _given(error=error) or None
        variables = {"project": project, "query": query, "k": k, "context": context}
        return (await run(RECALL, variables, ctx))["recall"]  # type: ignore[no-any-return]

    @mcp.tool(
        description="The planning prompt for a task within a token budget: numbered "
        "memories M1… (successes to follow, failures to avoid, code to reuse, warnings, "
        "conflicts) with their ids; every step must cite the Mx it relies on."
    )
    async def plan_context(
        project: Project,
        goal: str,
        ctx: Context,
        description: str | None = None,
        state: str | None = None,
        error: str | None = None,
        k: int = 8,
        budget: int = 2000,
        require_verified: bool = False,
    ) -> dict[str, Any]:
        task = _given(goal=goal, description=description, state=state, error=error)
        variables = {
            "project": project,
            "task": task,
            "k": k,
            "budget": budget,
            "verified": require_verified,
        }
        return (await run(PLAN, variables, ctx))["planContext"]  # type: ignore[no-any-return]

    @mcp.tool(
        description="Record one step of work: what was done, what was observed, how it "
        "ended, and the memory ids it relied on (cites: the plan_context memories it used; "
        "they count as used once it or its task succeeds). Validated, sanitized and linked "
        "like any memory."
    )
    async def record_episode(
        project: Project,
        summary: str,
        ctx: Context,
        task_id: str | None = None,
        step: int | None = None,
        command: str | None = None,
        observation: str | None = None,
        error: str | None = None,
        outcome: Outcome | None = None,
        reasoning: str | None = None,
        id: str | None = None,
        cites: list[str] | None = None,
    ) -> dict[str, Any]:
        action = {"type": "command", "command": command} if command else None
        record = _given(
            project=project,
            summary=summary,
            taskId=task_id,
            step=step,
            action=action,
            observation=observation,
            error=error,
            outcome=outcome,
            reasoning=reasoning,
            id=id,
            cites=cites,
        )
        return (await run(EPISODE, {"input": record}, ctx))["recordEpisode"]  # type: ignore[no-any-return]

    @mcp.tool(
        description="Report whether reusing a memory (an episode or snippet id, e.g. "
        "one plan_context cited) worked."
    )
    async def record_outcome(
        project: Project, memory_id: str, success: bool, ctx: Context, note: str | None = None
    ) -> dict[str, Any]:
        variables = {"project": project, "id": memory_id, "success": success, "note": note}
        return (await run(OUTCOME, variables, ctx))["recordOutcome"]  # type: ignore[no-any-return]

    @mcp.tool(
        description="Code snippets by meaning, with templates, parameters and whether "
        "they fit; require_verified keeps only sandbox-verified code."
    )
    async def search_snippets(
        project: Project, query: str, ctx: Context, k: int = 5, require_verified: bool = False
    ) -> list[dict[str, Any]]:
        variables = {"project": project, "query": query, "k": k, "verified": require_verified}
        return (await run(SNIPPETS, variables, ctx))["searchSnippets"]  # type: ignore[no-any-return]

    @mcp.tool(
        description="An error's lineage across projects: sightings, what was tried "
        "and failed, what fixed it, related errors. Give the error's text or key."
    )
    async def lineage(
        projects: list[str],
        ctx: Context,
        error_text: str | None = None,
        error_key: str | None = None,
        limit: int = 20,
    ) -> dict[str, Any]:
        error = _given(text=error_text, key=error_key)
        if not error:
            raise ToolError("give error_text or error_key")
        variables = {"projects": projects, "error": error, "limit": limit}
        return (await run(LINEAGE, variables, ctx))["lineage"]  # type: ignore[no-any-return]

    add_loop_tools(mcp, run)
    return mcp


def data_or_error(body: dict[str, Any]) -> dict[str, Any]:
    """A GraphQL answer's data, or a ToolError with its messages."""
    errors = body.get("errors") or []
    if errors:
        raise ToolError("; ".join(str(e.get("message", e)) for e in errors))
    data: dict[str, Any] = body.get("data") or {}
    return data
