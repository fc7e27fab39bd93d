"""Prometheus metrics: requests and latency by operation, ingest counts, refusals, Neo4j errors.

One registry for the process (our own, so nothing of other libraries leaks in), read at
``GET /metrics``. Labels are bounded on purpose: a route of ours, a status code, a GraphQL
operation named by its root fields (fields of our schema, never the client's operation name),
a counter's own labels. The counters the layers below keep (``graph.COUNTERS``: recall
channels dropped, vector search fallbacks, index probe failures, ingest records, Neo4j
errors) are published as they are, each as ``metisgraph_<name>_total``.
"""

from __future__ import annotations

import contextlib
import time
from collections import defaultdict
from collections.abc import Iterator
from typing import Any

from neo4j.exceptions import DriverError, Neo4jError
from prometheus_client import (
    CONTENT_TYPE_LATEST,
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    ProcessCollector,
    generate_latest,
)
from prometheus_client.core import CounterMetricFamily, Metric
from prometheus_client.registry import Collector
from starlette.requests import Request
from starlette.responses import Response
from strawberry.extensions import SchemaExtension

from metisgraph.graph import COUNTERS

__all__ = [
    "IN_FLIGHT",
    "OVERLOAD",
    "QUEUED",
    "RECALL_STAGE_SECONDS",
    "REGISTRY",
    "REQUESTS",
    "REQUEST_SECONDS",
    "STREAMS",
    "OperationMetrics",
    "metrics_endpoint",
]

REGISTRY = CollectorRegistry(auto_describe=True)
ProcessCollector(registry=REGISTRY)  # memory and CPU of this process (the load proof reads it)

_SECONDS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0)

REQUESTS = Counter(
    "metisgraph_http_requests",
    "HTTP requests answered, by route, method and status",
    ["route", "method", "status"],
    registry=REGISTRY,
)
REQUEST_SECONDS = Histogram(
    "metisgraph_http_request_duration_seconds",
    "Time from a request's arrival to its answer (waiting for a slot included), by route",
    ["route"],
    buckets=_SECONDS,
    registry=REGISTRY,
)
OPERATIONS = Counter(
    "metisgraph_graphql_operations",
    "GraphQL operations run, by operation (its root fields), type and outcome",
    ["operation", "type", "outcome"],
    registry=REGISTRY,
)
OPERATION_SECONDS = Histogram(
    "metisgraph_graphql_operation_duration_seconds",
    "Time to parse, validate and execute a GraphQL operation, by operation",
    ["operation"],
    buckets=_SECONDS,
    registry=REGISTRY,
)
RECALL_STAGE_SECONDS = Histogram(
    "metisgraph_recall_stage_duration_seconds",
    "Time recall spent in each stage: embed (the question's vectors, remembered per tenant), "
    "channels, expand, total (from the first channel). Here, not in the answer: a caller "
    "learns nothing of how the shared cache and Neo4j behaved for it",
    ["stage"],
    buckets=_SECONDS,
    registry=REGISTRY,
)
IN_FLIGHT = Gauge("metisgraph_requests_in_flight", "Requests being served now", registry=REGISTRY)
QUEUED = Gauge(
    "metisgraph_requests_queued",
    "Requests waiting for a slot (the concurrency limit)",
    registry=REGISTRY,
)
OVERLOAD = Counter(
    "metisgraph_overload_refusals",
    "Requests answered 503 by the concurrency limit: queue full, or waited too long",
    ["reason"],
    registry=REGISTRY,
)
STREAMS = Gauge(
    "metisgraph_event_streams_open",
    "Long-lived event streams (GET /mcp) open now: their own pool, never a request slot",
    registry=REGISTRY,
)
READY = Gauge(
    "metisgraph_ready", "1 when Neo4j, the model and the schema are ready", registry=REGISTRY
)
VECTOR_INDEX_HEALTHY = Gauge(
    "metisgraph_vector_index_healthy",
    "1 when the vector index answered its probe (a filtered search) at the last scrape",
    ["index"],
    registry=REGISTRY,
)

_MAX_FIELDS_IN_NAME = 3


class _ProcessCounters(Collector):
    """``graph.COUNTERS`` as Prometheus counters, one family per name."""

    def collect(self) -> Iterator[Metric]:
        families: dict[str, list[tuple[dict[str, str], int]]] = defaultdict(list)
        for name, labels, value in COUNTERS.snapshot():
            families[name].append((labels, value))
        for name, samples in sorted(families.items()):
            keys = sorted({k for labels, _ in samples for k in labels})
            family = CounterMetricFamily(
                f"metisgraph_{name}", f"{name.replace('_', ' ')} (process counter)", labels=keys
            )
            for labels, value in samples:
                family.add_metric([labels.get(k, "") for k in keys], value)
            yield family


REGISTRY.register(_ProcessCounters())


def operation_name(document: Any) -> tuple[str, str]:
    """An operation's name for metrics and logs: its type and its root fields, sorted.

    The client's own operation name is not used: it is free text, and a label of free
    text is an unbounded number of series. Root fields are fields of our schema.
    """
    from graphql import FieldNode, OperationDefinitionNode

    if document is None:
        return "invalid", "unknown"
    operations = [d for d in document.definitions if isinstance(d, OperationDefinitionNode)]
    if len(operations) != 1:
        return "invalid", "unknown"
    operation = operations[0]
    fields = sorted(
        {s.name.value for s in operation.selection_set.selections if isinstance(s, FieldNode)}
    )
    if not fields:
        name = "fragments"
    elif len(fields) > _MAX_FIELDS_IN_NAME:
        name = "several"
    else:
        name = ",".join(fields)
    return name, operation.operation.value


class OperationMetrics(SchemaExtension):
    """Counts and times each GraphQL operation; leaves its name on the request's state,
    where the access log finds it."""

    def on_operation(self) -> Iterator[None]:
        started = time.perf_counter()
        yield
        context = self.execution_context
        name, kind = operation_name(context.graphql_document)
        result = context.result
        failed = result is None or bool(getattr(result, "errors", None))
        OPERATIONS.labels(name, kind, "error" if failed else "ok").inc()
        OPERATION_SECONDS.labels(name).observe(time.perf_counter() - started)
        request = getattr(context.context, "request", None)
        if request is not None:
            request.state.operation = name


async def metrics_endpoint(request: Request) -> Response:
    """The metrics in Prometheus' text format. Probes the vector indexes when ready (the
    probes of ``/readyz``); an index not answered (Neo4j away) is left out."""
    services = request.state.services
    ready = services.readiness.ready
    READY.set(1 if ready else 0)
    VECTOR_INDEX_HEALTHY.clear()
    if ready:
        with contextlib.suppress(Neo4jError, DriverError):
            for index, health in (await services.vector_health()).items():
                VECTOR_INDEX_HEALTHY.labels(index).set(1 if health.healthy else 0)
    return Response(generate_latest(REGISTRY), media_type=CONTENT_TYPE_LATEST)
