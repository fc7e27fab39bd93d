"""GET /export: a project's graph as node-link JSON, GraphML or a CSV table, streamed.

Query parameters: ``project`` (one the bearer token may read), ``format`` (json, graphml,
csv), ``table`` (csv: nodes or edges), ``since`` (ISO 8601), ``vectors`` (json: true by
default, so the export can be imported back into a usable store).
"""

from __future__ import annotations

import logging
import re
import uuid
from collections.abc import AsyncIterator
from datetime import datetime

from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse

from metisgraph.api.audit import audit
from metisgraph.api.auth import ANONYMOUS, Caller, Forbidden
from metisgraph.api.graphql.tenancy import utc
from metisgraph.api.scopes import Scope
from metisgraph.api.services import Services
from metisgraph.graph.exports import CSV_TABLES, FORMATS, export_chunks

__all__ = ["export_endpoint"]

log = logging.getLogger("metisgraph.api")

_MEDIA = {"json": "application/json", "graphml": "application/graphml+xml", "csv": "text/csv"}
_FILE = re.compile(r"[^A-Za-z0-9._-]+")


class _BadRequest(ValueError):
    pass


def _problem(status: int, message: str) -> JSONResponse:
    return JSONResponse({"errors": [{"message": message}]}, status_code=status)


async def export_endpoint(request: Request) -> Response:
    services: Services = request.state.services
    caller: Caller = getattr(request.state, "caller", ANONYMOUS)
    if services.readiness.lasting:
        return _problem(503, "metisgraph cannot serve until its operator acts (see /readyz)")
    if not services.readiness.ready:
        return _problem(503, "metisgraph is starting, try again shortly")
    try:
        project, fmt, table, since, vectors = _arguments(request)
        caller.require(project, Scope.read)
    except Forbidden as exc:
        return _problem(403, str(exc))
    except _BadRequest as exc:
        return _problem(400, str(exc))
    await audit(services.store, caller.name, "export", project, target=fmt)
    chunks = export_chunks(
        services.store,
        project,
        fmt,
        since=since,
        table=table,
        vectors=vectors,
        model=services.embedder.settings.model,
        dimension=services.embedder.dimension,
    )
    name = _FILE.sub("_", project).strip("_") or "export"
    suffix = f"-{table}.csv" if fmt == "csv" else f".{fmt}"
    return StreamingResponse(
        _encoded(chunks),
        media_type=_MEDIA[fmt],
        headers={"content-disposition": f'attachment; filename="{name}{suffix}"'},
    )


def _arguments(request: Request) -> tuple[str, str, str | None, datetime | None, bool]:
    params = request.query_params
    project = (params.get("project") or "").strip()
    if not project:
        raise _BadRequest("project: required (one project the token may read)")
    fmt = params.get("format", "json")
    if fmt not in FORMATS:
        raise _BadRequest(f"format: one of {', '.join(FORMATS)}, got {fmt[:40]!r}")
    table = params.get("table")
    if fmt == "csv" and table not in CSV_TABLES:
        raise _BadRequest("table: a CSV export is one table, nodes or edges")
    since = None
    if params.get("since"):
        try:
            since = utc(datetime.fromisoformat(params["since"]))
        except ValueError:
            raise _BadRequest("since: an ISO 8601 date or time") from None
    vectors = params.get("vectors", "true").lower()
    if vectors not in ("true", "false"):
        raise _BadRequest("vectors: true or false")
    return project, fmt, table, since, vectors == "true"


async def _encoded(chunks: AsyncIterator[str]) -> AsyncIterator[bytes]:
    try:
        async for chunk in chunks:
            yield chunk.encode("utf-8")
    except Exception as exc:
        # The status went out with the first bytes: the body ends early (invalid on purpose).
        reference = uuid.uuid4().hex[:12]
        log.error("export failed %s: %s", reference, type(exc).__name__)
        raise
