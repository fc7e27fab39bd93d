"""The GraphQL transport: strawberry's ASGI app with our context, and a request body that is
refused with a clear 400 — never a 500 — when it is not JSON text we can work on.

What a body may not hold, whatever the field (the rule records have, ingest/adapters/
hazards.py, applied to the whole request: the query, every variable, the extensions — but
a batch's records, which that rule refuses one by one): bytes
that are not UTF-8, a lone surrogate (``"\\udfff"``: a Python string but not text; the
tokenizer, the hash and the store all fail on it far from where it came in), and values
nested more than ``MAX_DEPTH`` deep (the decoder's and every later walk's stack).
"""

from __future__ import annotations

import json
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.types import Receive, Scope, Send
from starlette.websockets import WebSocket
from strawberry.asgi import GraphQL

from metisgraph.api.graphql.context import Context
from metisgraph.ingest.adapters import hazards

__all__ = ["BadBody", "MemoryGraphQL", "request_json"]


class BadBody(ValueError):
    """A request body we cannot work on; the message says what and where (a 400)."""


def request_json(data: str | bytes) -> Any:
    """The decoded body, or ``BadBody`` saying what is wrong with it and where."""
    if isinstance(data, bytes):
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise BadBody(
                f"request body is not UTF-8 text (byte {exc.start}: {exc.reason})"
            ) from None
    else:
        text = data
    try:
        decoded = json.loads(text)
    except RecursionError:
        raise BadBody(_too_deep("request body")) from None
    except json.JSONDecodeError as exc:
        raise BadBody(f"request body is not JSON: {exc}") from None
    if not isinstance(decoded, dict | list):  # strawberry reads it as a mapping: a 500
        raise BadBody(f"request body is not a JSON object: got {type(decoded).__name__}")
    if isinstance(decoded, dict | list):
        found = hazards({"body": _without_record_batches(decoded)})
        if found:
            where, message = found[0]
            path = ".".join(str(p) for p in where[1:]) or "body"
            raise BadBody(f"request {path}: {message}")
    return decoded


def _without_record_batches(body: dict[str, Any] | list[Any]) -> dict[str, Any] | list[Any]:
    """The body with each object inside a list variable left out of the transport's check.

    Those are record batches (``recordEpisodes(inputs: [...])``): each record is checked
    by the record rule itself, which refuses the one that holds a hazard, naming its field,
    and writes the rest — one crafted record is one refusal, through every door. The
    decoder's own depth bound (a ``RecursionError``, above) still covers them.
    """
    if not isinstance(body, dict) or not isinstance(body.get("variables"), dict):
        return body
    variables = {
        name: [None if isinstance(item, dict) else item for item in value]
        if isinstance(value, list)
        else value
        for name, value in body["variables"].items()
    }
    return {**body, "variables": variables}


def _too_deep(what: str) -> str:
    return f"{what} is nested too deep (objects and lists inside each other)"


class MemoryGraphQL(GraphQL[Context, None]):
    """Strawberry's ASGI app with our typed context and our body rule."""

    def __init__(self, schema: Any, **kwargs: Any) -> None:
        super().__init__(schema, **kwargs)

    async def get_context(self, request: Request | WebSocket, response: Any) -> Context:
        return Context.of_request(request, response)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            await super().__call__(scope, receive, send)
        except BadBody as exc:  # raised while the body is decoded: nothing answered yet
            body = {"errors": [{"message": str(exc), "extensions": {"code": "BAD_REQUEST"}}]}
            await JSONResponse(body, status_code=400)(scope, receive, send)

    def parse_json(self, data: str | bytes) -> Any:
        return request_json(data)
