"""The HTTP room: the Starlette app and what stands in front of GraphQL — host check,
authentication, rate and concurrency limits, request logs and metrics — and the routes
beside it: /export, the explorer page, the MCP mount."""

__all__: list[str] = []
