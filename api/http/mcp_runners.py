"""How the MCP tools reach GraphQL: in-process as the token's caller (the app's /mcp), or
over HTTP to a running API (``metisgraph mcp`` on stdio: no Neo4j, no model)."""

from __future__ import annotations

from typing import Any

import httpx
import strawberry
from pydantic import Field, SecretStr
from pydantic_settings import BaseSettings, SettingsConfigDict

from metisgraph.api.graphql.context import Context
from metisgraph.api.http.mcp_tools import GraphQLRunner, ToolError, data_or_error

__all__ = ["McpProxySettings", "in_process", "over_http"]


class McpProxySettings(BaseSettings):
    """Where ``metisgraph mcp`` finds the API, and the token it calls with."""

    model_config = SettingsConfigDict(env_prefix="METISGRAPH_MCP_", extra="ignore")

    url: str = Field(default="http://127.0.0.1:8000", description="The running API")
    token: SecretStr | None = Field(default=None, description="A bearer token of the API")
    timeout: float = Field(default=60.0, gt=0)


def in_process(schema: strawberry.Schema) -> GraphQLRunner:
    """Execute the schema in the app, as the caller the request's bearer token names."""

    async def run(document: str, variables: dict[str, Any], ctx: Any) -> dict[str, Any]:
        context = Context.of_request(ctx.request_context.request)
        result = await schema.execute(document, variable_values=variables, context_value=context)
        if result.errors:
            raise ToolError("; ".join(e.message for e in result.errors))
        return dict(result.data or {})

    return run


def over_http(settings: McpProxySettings, client: httpx.AsyncClient) -> GraphQLRunner:
    """Post each operation to the API's /graphql with the configured token."""
    endpoint = settings.url.rstrip("/") + "/graphql"
    token = settings.token.get_secret_value() if settings.token else None
    headers = {"Authorization": f"Bearer {token}"} if token else {}

    async def run(document: str, variables: dict[str, Any], ctx: Any) -> dict[str, Any]:
        try:
            response = await client.post(
                endpoint, headers=headers, json={"query": document, "variables": variables}
            )
        except httpx.TransportError as error:
            raise ToolError(f"metisgraph API at {settings.url} unreachable: {error}") from None
        if response.status_code == 401:
            raise ToolError("the metisgraph API wants a valid token (METISGRAPH_MCP_TOKEN)")
        try:
            body = response.json()
        except ValueError:
            raise ToolError(f"metisgraph API answered HTTP {response.status_code}") from None
        return data_or_error(body)

    return run
