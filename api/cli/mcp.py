"""`metisgraph mcp`: the MCP server on stdio, a thin proxy to a running API."""

from __future__ import annotations

__all__ = ["mcp_command"]


def mcp_command() -> None:
    """Serve metisgraph's MCP tools on stdio, proxied to the API at METISGRAPH_MCP_URL with
    METISGRAPH_MCP_TOKEN. Starts no Neo4j and loads no model."""
    import anyio
    import httpx

    from metisgraph.api.http.mcp_runners import McpProxySettings, over_http
    from metisgraph.api.http.mcp_tools import build_mcp

    settings = McpProxySettings()

    async def run() -> None:
        async with httpx.AsyncClient(timeout=settings.timeout) as client:
            await build_mcp(over_http(settings, client)).run_stdio_async()

    anyio.run(run)
