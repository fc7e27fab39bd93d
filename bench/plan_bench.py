"""planContext over HTTP on the benchmark corpus, and the SDK's overhead over raw HTTP.

`metisgraph serve` runs in a subprocess against the corpus's Neo4j (the recall corpus of
the same size and seed); the corpus's questions become tasks (goal: the question; error:
the error the caller sees now, for half of them), `k` 8 and a 2,000-token budget (the
defaults). One request at a time. Each task is asked twice, alternating which goes first:
by raw httpx posting the SDK's own document and variables, and by
``metisgraph_client.Client.plan_context``. The planContext figures are the raw calls' wall
times.

Both clients send through one timing transport that clocks the HTTP exchange (request
written to response body read). What a call spends outside it is its client's own cost:
building and encoding the request, decoding the answer and, for the SDK, validating it
into typed results. The SDK's overhead over raw HTTP is the difference of the two clients'
own costs (p50 of each), which leaves the server's variance out; the difference of the
wall-time medians is kept beside it.
"""

from __future__ import annotations

import contextlib
import statistics
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from bench.corpus import Corpus, Query
from bench.database import BenchNeo4j
from bench.recall_bench import _stage_means_ms, _stage_seconds, metisgraph_server, percentile
from metisgraph_client import Client
from metisgraph_client._operations import plan_context as plan_operation

__all__ = ["PlanFigures", "bench_plan"]

_WARMUP = 20  # tasks asked first and not measured (model, caches, question vectors)
# How many warm-up calls, cycling through those 20 (as recall's `--warmup`: Neo4j's JIT needs
# thousands of queries to settle, and this part starts its own Neo4j); the first calls of a
# fresh start are timed apart ("first_calls").
WARMUP_CALLS = 20
K, BUDGET = 8, 2000


class TimedTransport(httpx.BaseTransport):
    """httpx's transport, clocking each exchange up to the whole response body read."""

    def __init__(self) -> None:
        self._inner = httpx.HTTPTransport()
        self.last_ms = 0.0

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        started = time.perf_counter()
        response = self._inner.handle_request(request)
        response.read()
        self.last_ms = (time.perf_counter() - started) * 1000
        return response

    def close(self) -> None:
        self._inner.close()


@dataclass
class _Calls:
    wall_ms: list[float] = field(default_factory=list)
    own_ms: list[float] = field(default_factory=list)  # wall minus the HTTP exchange

    def add(self, wall_ms: float, exchange_ms: float) -> None:
        self.wall_ms.append(wall_ms)
        self.own_ms.append(wall_ms - exchange_ms)


@dataclass
class PlanFigures:
    size: int
    tasks: int
    plan_context: dict[str, Any] = field(default_factory=dict)
    sdk: dict[str, Any] = field(default_factory=dict)
    prompt: dict[str, Any] = field(default_factory=dict)
    before: dict[str, Any] = field(default_factory=dict)  # `--against`: the other checkout


def _summary(values: list[float]) -> dict[str, float]:
    return {
        "p50_ms": round(statistics.median(values), 3),
        "p95_ms": round(percentile(values, 0.95), 3),
        "max_ms": round(max(values), 3),
    }


def _operation(project: str, q: Query) -> Any:
    return plan_operation(project, q.text, error=q.error, k=K, budget=BUDGET)


def _raw(client: httpx.Client, endpoint: str, project: str, q: Query) -> dict[str, Any]:
    operation = _operation(project, q)
    response = client.post(
        endpoint, json={"query": operation.document, "variables": operation.variables}
    )
    body = response.json()
    if body.get("errors"):
        raise RuntimeError(f"planContext failed: {body['errors']}")
    result: dict[str, Any] = body["data"]["result"]
    return result


def _ask(
    base: str,
    project: str,
    tasks: list[Query],
    warmup: list[Query],
    other: str | None = None,
    calls: int = WARMUP_CALLS,
) -> dict[str, Any]:
    """``other``: another server's base URL, asked every task raw too (after ours on even
    tasks, before on odd ones): its wall times are ``before``."""
    raw_calls, sdk_calls, other_ms = _Calls(), _Calls(), []
    tokens, memories, abstained = [], [], 0
    transport = TimedTransport()
    endpoint = f"{base}/graphql"
    with (
        httpx.Client(timeout=120, transport=transport) as raw,
        Client(base, timeout=120, transport=transport, retries=0) as sdk,
    ):
        first: list[float] = []
        for number in range(max(calls, len(warmup))):
            q = warmup[number % len(warmup)]
            started = time.perf_counter()
            _raw(raw, endpoint, project, q)
            if number < len(warmup):  # the fresh server's first calls, each task once
                first.append((time.perf_counter() - started) * 1000)
                sdk.plan_context(project, q.text, error=q.error, k=K, budget=BUDGET)
            if other:
                _raw(raw, f"{other}/graphql", project, q)
        stages = _stage_seconds(raw, endpoint)
        for number, q in enumerate(tasks):
            order = ["raw", "sdk", "other"] if number % 2 == 0 else ["other", "sdk", "raw"]
            for who in order:
                started = time.perf_counter()
                if who == "other":
                    if other:
                        _raw(raw, f"{other}/graphql", project, q)
                        other_ms.append((time.perf_counter() - started) * 1000)
                elif who == "raw":
                    result = _raw(raw, endpoint, project, q)
                    raw_calls.add((time.perf_counter() - started) * 1000, transport.last_ms)
                    tokens.append(result["tokens"])
                    memories.append(len(result["memories"]))
                    abstained += bool(result["abstained"])
                else:
                    sdk.plan_context(project, q.text, error=q.error, k=K, budget=BUDGET)
                    sdk_calls.add((time.perf_counter() - started) * 1000, transport.last_ms)
        recall_stages = _stage_means_ms(stages, _stage_seconds(raw, endpoint))
    raw_own, sdk_own = statistics.median(raw_calls.own_ms), statistics.median(sdk_calls.own_ms)
    return {
        "plan_context": {
            **_summary(raw_calls.wall_ms),
            "k": K,
            "budget": BUDGET,
            "recall_stage_mean_ms": {k: round(v, 2) for k, v in sorted(recall_stages.items())},
            "warmup_calls": max(calls, len(warmup)),
            "first_calls": _summary(first),
        },
        "sdk": {
            "overhead_p50_ms": round(sdk_own - raw_own, 3),
            "sdk_own_ms": _summary(sdk_calls.own_ms),
            "raw_own_ms": _summary(raw_calls.own_ms),
            "wall_p50_difference_ms": round(
                statistics.median(sdk_calls.wall_ms) - statistics.median(raw_calls.wall_ms), 3
            ),
            "sdk_wall_ms": _summary(sdk_calls.wall_ms),
        },
        "before": _summary(other_ms) if other_ms else {},
        "prompt": {
            "tokens_median": statistics.median(tokens),
            "memories_median": statistics.median(memories),
            "abstained": abstained,
        },
    }


def bench_plan(
    neo4j: BenchNeo4j,
    corpus: Corpus,
    tasks: int,
    port: int,
    logs: Path,
    against: Path | None = None,
    warmup_calls: int = WARMUP_CALLS,
) -> PlanFigures:
    """``against``: another checkout's `metisgraph`, served beside (port + 100), asked the
    same tasks (raw calls) in alternating order. ``warmup_calls``: raw planContext calls
    cycling through the warm-up tasks (each once by the SDK too) before any is measured."""
    asked = corpus.queries(tasks + _WARMUP)
    asked, warmup = asked[:tasks], asked[tasks:]
    logs.mkdir(parents=True, exist_ok=True)
    with contextlib.ExitStack() as servers:
        other = None
        if against is not None:
            log = logs / "metisgraph-plan-against.log"
            url = servers.enter_context(metisgraph_server(neo4j, port + 100, log, against))
            other = url.removesuffix("/graphql")
        url = servers.enter_context(metisgraph_server(neo4j, port, logs / "metisgraph-plan.log"))
        base = url.removesuffix("/graphql")
        figures = _ask(base, corpus.project, asked, warmup, other, warmup_calls)
    return PlanFigures(size=corpus.size, tasks=len(asked), **figures)
