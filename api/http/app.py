"""The Starlette application: GraphQL at /graphql, MCP at /mcp, /export, the explorer page
at /explore, /healthz, /readyz and /metrics."""

from __future__ import annotations

import contextlib
import logging
from collections.abc import AsyncIterator
from typing import Any, TypedDict

import anyio
from mcp.server.streamable_http_manager import StreamableHTTPASGIApp
from mcp.server.transport_security import TransportSecuritySettings
from neo4j.exceptions import DriverError, Neo4jError
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route, request_response
from starlette.types import ASGIApp

from metisgraph.api.auth import TokenTable, parse_tokens
from metisgraph.api.graphql.maintain_service import maintain_periodically
from metisgraph.api.graphql.plan_service import warm_plans
from metisgraph.api.graphql.schema import build_schema
from metisgraph.api.http.authenticate import Authenticated
from metisgraph.api.http.bodies import BodyRead
from metisgraph.api.http.explorer import explorer_routes
from metisgraph.api.http.exports_route import export_endpoint
from metisgraph.api.http.hosts import HostCheck
from metisgraph.api.http.limits import ConcurrencyLimit
from metisgraph.api.http.mcp_runners import in_process
from metisgraph.api.http.mcp_tools import build_mcp
from metisgraph.api.http.observed import Observed
from metisgraph.api.http.ratelimit import RateLimiter
from metisgraph.api.http.streams import ByMethod, StreamPool
from metisgraph.api.http.transport import MemoryGraphQL
from metisgraph.api.keys import KeyRing
from metisgraph.api.metrics import metrics_endpoint
from metisgraph.api.services import LASTING, Services, prepare_services
from metisgraph.api.settings import Settings, load_settings
from metisgraph.graph import COUNTERS
from metisgraph.ingest import Embedder

__all__ = ["create_app"]

log = logging.getLogger("metisgraph")


class State(TypedDict):
    services: Services
    keys: KeyRing


async def healthz(request: Request) -> Response:
    return JSONResponse({"status": "ok"})


async def readyz(request: Request) -> Response:
    services: Services = request.state.services
    readiness = services.readiness
    reachable = await services.store.ping() if readiness.neo4j else False
    body: dict[str, Any] = {
        "ready": readiness.ready and reachable,
        "neo4j": reachable,
        "schema": readiness.schema,
        "model": readiness.model,
        "neo4j_version": services.server.version if services.server else None,
        "error": readiness.error,
        "retrying": not readiness.ready and not readiness.lasting,
        "startup_s": {k: round(v, 2) for k, v in readiness.timings.items()},
    }
    if body["ready"]:
        body["vector_indexes"] = await _vector_indexes(services)
    body["counters"] = [
        {"name": n, "labels": labels, "value": v} for n, labels, v in COUNTERS.snapshot()
    ]
    return JSONResponse(body, status_code=200 if body["ready"] else 503)


async def _vector_indexes(services: Services) -> dict[str, Any] | None:
    """Each vector index's probe. A failing index leaves recall answering (its channel
    works round it or is dropped), so it does not make the service unready."""
    try:
        health = await services.vector_health()
    except (Neo4jError, DriverError) as exc:  # Neo4j went away since the ping
        log.warning("vector index probe not answered: %s", type(exc).__name__)
        return None
    return {n: {"healthy": h.healthy, "error": h.error} for n, h in health.items()}


def _tokens(settings: Settings) -> tuple[TokenTable | None, bool]:
    """The configured tokens, and whether every request needs a token."""
    api = settings.api
    spec = api.api_tokens.get_secret_value() if api.api_tokens else ""
    tokens = parse_tokens(spec) if spec.strip() else None
    required = tokens is not None or api.require_token
    if not required and not api.loopback and not api.allow_anonymous:
        raise RuntimeError(
            f"refusing to serve on {api.host} without tokens: set METISGRAPH_API_TOKENS, or "
            "METISGRAPH_REQUIRE_TOKEN=true for keys made with 'metisgraph keys create' "
            "(METISGRAPH_ALLOW_ANONYMOUS=true to override)"
        )
    return tokens, required


def create_app(
    settings: Settings | None = None, *, embedder: Embedder | None = None, wait_ready: bool = False
) -> Starlette:
    """Build the app. One driver per process, created in the lifespan and closed with it.

    Start-up work (the embedded Neo4j, the model, the schema) runs in the background so
    /healthz answers at once and /readyz tells when recall can be served; ``wait_ready``
    makes the lifespan wait for it instead (tests, the CLI).
    """
    settings = settings or load_settings()
    tokens, required = _tokens(settings)
    limiter = RateLimiter(
        settings.api.rate_per_second, settings.api.rate_per_minute, share=settings.api.rate_workers
    )
    schema = build_schema(settings.api)
    # MCP over streamable HTTP: the same tools as `metisgraph mcp`, run in-process as the
    # token's caller. Stateless: each POST is whole, so any worker can answer it. Which Host
    # names are served is HostCheck's rule (METISGRAPH_ALLOWED_HOSTS) for every route, /mcp
    # included, so the SDK's own loopback-only Host/Origin list is off; a POST to /mcp must
    # still be application/json, which a cross-site page cannot send without CORS consent.
    mcp = build_mcp(in_process(schema))
    mcp.streamable_http_app(
        stateless_http=True,
        json_response=True,
        transport_security=TransportSecuritySettings(enable_dns_rebinding_protection=False),
    )

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[State]:
        services = prepare_services(settings, embedder, retry_s=settings.api.neo4j_retry_s)
        services.warm_plans = warm_plans  # planContext's own reads, before ready
        try:
            async with anyio.create_task_group() as tasks, mcp.session_manager.run():
                if wait_ready:
                    await services.warm_up()
                else:
                    tasks.start_soon(warm_up_until_ready, services)
                if settings.maintain.every_s:
                    tasks.start_soon(maintain_periodically, services, settings.maintain.every_s)
                yield {"services": services, "keys": KeyRing(services.store)}
                tasks.cancel_scope.cancel()
        finally:
            await services.close()

    api = settings.api
    slots = ConcurrencyLimit.settings(api)

    def authenticated(app: ASGIApp) -> Authenticated:
        return Authenticated(app, tokens, required, limiter)

    def work(app: ASGIApp) -> ASGIApp:
        """The caller known first, then its body read whole (bounded in size and time), and
        only then a request slot: a caller not yet known or a body still on its way holds
        none (issue 30)."""
        return authenticated(BodyRead(slots.around(app), api.max_body_bytes, api.body_timeout_s))

    graphql_ide = "graphiql" if api.dev else None
    mcp_app = StreamableHTTPASGIApp(mcp.session_manager)
    streams = StreamPool(mcp_app, per_caller=api.max_streams_per_caller, total=api.max_streams)
    routes = [
        Route("/healthz", healthz),
        Route("/readyz", readyz),
        Route("/metrics", metrics_endpoint),
        Route(
            "/graphql",
            work(MemoryGraphQL(schema, graphql_ide=graphql_ide)),
            methods=["GET", "POST"],
        ),
        # A GET is a long-lived event stream: its own pool, never a slot; POST and DELETE work.
        Route(
            "/mcp",
            ByMethod(authenticated(streams), work(mcp_app)),
            methods=["GET", "POST", "DELETE"],
        ),
        Route("/export", work(request_response(export_endpoint)), methods=["GET"]),
        *explorer_routes(),  # static: its data comes through /graphql with the user's token
    ]
    app = Starlette(routes=routes, lifespan=lifespan, middleware=[Middleware(Observed)])
    app.add_middleware(HostCheck, allowed=settings.api.host_names)
    return app


_WARM_UP_RETRY_MAX_S = 30.0


async def warm_up_until_ready(services: Services) -> None:
    """Start-up in the background, tried again with a growing wait until it succeeds: Neo4j
    briefly away at start must not leave the service unready until a restart. Meanwhile
    /readyz answers 503 with the last error. A failure in ``LASTING`` (the store holds
    another model's vectors) is not tried again: /readyz keeps it, ``retrying`` false."""
    wait = services.settings.api.warm_up_retry_s
    while True:
        try:
            await services.warm_up()
            return
        except LASTING:  # another model's store: no retry mends it (/readyz says what to do)
            COUNTERS.increment("warm_up_failures")
            return
        except Exception:  # kept on services.readiness (and logged) by warm_up
            COUNTERS.increment("warm_up_failures")
        await anyio.sleep(wait)
        wait = min(wait * 2, _WARM_UP_RETRY_MAX_S)
