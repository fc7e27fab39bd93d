"""Sync and async clients over the GraphQL API: tokens, retries, typed results."""

from __future__ import annotations

import asyncio
import math
import time
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from typing import Any, TypeVar

import httpx

from metisgraph_client import _operations as ops
from metisgraph_client._errors import (
    MetisgraphError,
    NotReady,
    RateLimited,
    TransportError,
    Unavailable,
    _AskedToWait,
)
from metisgraph_client._models import (
    OutcomeStats,
    PlanContext,
    RecallResult,
    RecordResult,
    SnippetHit,
)

__all__ = ["AsyncClient", "Client"]

T = TypeVar("T")
_RETRY_STATUS = (502, 503, 504)
_RETRYABLE = (httpx.TransportError, NotReady, _AskedToWait)


class _Settings:
    def __init__(self, url: str, token: str | None, retries: int, backoff: float,
                 max_wait: float) -> None:  # fmt: skip
        self.endpoint = url.rstrip("/") + ("" if url.rstrip("/").endswith("/graphql") else
                                           "/graphql")  # fmt: skip
        self.headers = {"Authorization": f"Bearer {token}"} if token else {}
        self.retries = retries
        self.backoff = backoff
        self.max_wait = max_wait

    def pause(self, attempt: int) -> float:
        return float(self.backoff * (2**attempt))

    def wait(self, operation: ops.Operation[Any], error: Exception, attempt: int,
             waited: float) -> float | None:  # fmt: skip
        """Seconds to wait before sending again after this failure, or None to give up.

        Sent again: a request that never left (connection refused); a repeatable one after
        any failure worth another try; any request the service says it did not run (429,
        or 503 BUSY from its concurrency limit). The wait is the service's Retry-After when
        it states one, else a growing pause; attempts stop after ``retries``, and when the
        waits would pass ``max_wait`` seconds in all (a quota's wait of hours is not slept).
        """
        if attempt >= self.retries:
            return None
        said = error.retry_after if isinstance(error, (_AskedToWait, NotReady)) else None
        if isinstance(error, httpx.ConnectError):
            sendable = True
        elif isinstance(error, RateLimited) or (isinstance(error, Unavailable)
                                                and error.code == "BUSY"):  # fmt: skip
            sendable = True  # refused before it ran: a repeat cannot do anything twice
        else:
            sendable = operation.repeatable
        pause = said if said is not None and said > 0 else self.pause(attempt)
        return pause if sendable and waited + pause <= self.max_wait else None


def _payload(operation: ops.Operation[Any]) -> dict[str, Any]:
    return {"query": operation.document, "variables": operation.variables}


def _retry_after(response: httpx.Response) -> float | None:
    """The Retry-After header in seconds (delta-seconds or an HTTP date), None if absent."""
    value = response.headers.get("retry-after")
    if value is None:
        return None
    try:
        seconds = float(value)
    except ValueError:
        try:
            when = parsedate_to_datetime(value)
        except (TypeError, ValueError):
            return None
        when = when if when.tzinfo is not None else when.replace(tzinfo=UTC)
        seconds = (when - datetime.now(UTC)).total_seconds()
    return max(0.0, seconds) if math.isfinite(seconds) else None


def _refusal(response: httpx.Response) -> MetisgraphError:
    """The typed error of a 429 or a 502/503/504, with the wait and the service's message."""
    try:
        body = response.json()
    except ValueError:
        body = None
    errors = [e for e in (body.get("errors") or []) if isinstance(e, dict)] if isinstance(
        body, dict) else []  # fmt: skip
    said = "; ".join(str(e.get("message", "")) for e in errors)
    message = f"HTTP {response.status_code}: {said}" if said else (
        f"HTTP {response.status_code} from {response.request.url}")  # fmt: skip
    wait = _retry_after(response)
    if response.status_code == 429:
        return RateLimited(message, wait)
    if said.startswith("metisgraph is starting"):
        return NotReady(said, wait)
    codes = [(e.get("extensions") or {}).get("code") for e in errors]
    return Unavailable(message, wait, next((str(c) for c in codes if c), None))


def _parse(operation: ops.Operation[T], response: httpx.Response) -> T:
    if response.status_code == 429 or response.status_code in _RETRY_STATUS:
        raise _refusal(response)
    if response.status_code not in (200, 400, 401):
        raise TransportError(f"HTTP {response.status_code} from {response.request.url}")
    try:
        body = response.json()
    except ValueError:
        body = None
    return ops.answer_of(operation, response.status_code, body)


def _failed(error: Exception) -> Exception:
    if isinstance(error, MetisgraphError):
        return error
    return TransportError(f"metisgraph unreachable: {error}")


class Client:
    """A blocking client. ``Client(url, token=…)``; use it as a context manager or close()."""

    def __init__(self, url: str, *, token: str | None = None, timeout: float = 30.0,
                 retries: int = 3, backoff: float = 0.2, max_wait: float = 30.0,
                 transport: httpx.BaseTransport | None = None) -> None:  # fmt: skip
        self._settings = _Settings(url, token, retries, backoff, max_wait)
        self._http = httpx.Client(timeout=timeout, headers=self._settings.headers,
                                  transport=transport)  # fmt: skip

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    def close(self) -> None:
        self._http.close()

    def execute(self, operation: ops.Operation[T]) -> T:
        """Send one operation; retried as ``retries`` and ``max_wait`` allow (honouring the
        service's Retry-After); its typed result or an error."""
        attempt, waited = 0, 0.0
        while True:
            try:
                response = self._http.post(self._settings.endpoint, json=_payload(operation))
                return _parse(operation, response)
            except _RETRYABLE as error:
                pause = self._settings.wait(operation, error, attempt, waited)
                if pause is None:
                    raise _failed(error) from error
                time.sleep(pause)
                attempt, waited = attempt + 1, waited + pause

    def plan_context(self, project: str, goal: str, **task: Any) -> PlanContext:
        return self.execute(ops.plan_context(project, goal, **task))

    def recall(self, project: str, query: str, **options: Any) -> RecallResult:
        return self.execute(ops.recall(project, query, **options))

    def search_snippets(self, project: str, query: str, **options: Any) -> list[SnippetHit]:
        return self.execute(ops.search_snippets(project, query, **options))

    def record_task(self, project: str, goal: str, **fields: Any) -> RecordResult:
        return self.execute(ops.record_task(project, goal, **fields))

    def record_episode(self, project: str, summary: str, **fields: Any) -> RecordResult:
        return self.execute(ops.record_episode(project, summary, **fields))

    def record_outcome(self, project: str, memory_id: str, success: bool,
                       note: str | None = None, key: str | None = None,
                       ) -> OutcomeStats:  # fmt: skip
        return self.execute(ops.record_outcome(project, memory_id, success, note, key))


class AsyncClient:
    """The same client for asyncio: ``async with AsyncClient(url) as client: …``."""

    def __init__(self, url: str, *, token: str | None = None, timeout: float = 30.0,
                 retries: int = 3, backoff: float = 0.2, max_wait: float = 30.0,
                 transport: httpx.AsyncBaseTransport | None = None) -> None:  # fmt: skip
        self._settings = _Settings(url, token, retries, backoff, max_wait)
        self._http = httpx.AsyncClient(timeout=timeout, headers=self._settings.headers,
                                       transport=transport)  # fmt: skip

    async def __aenter__(self) -> AsyncClient:
        return self

    async def __aexit__(self, *_: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        await self._http.aclose()

    async def execute(self, operation: ops.Operation[T]) -> T:
        attempt, waited = 0, 0.0
        while True:
            try:
                response = await self._http.post(self._settings.endpoint,
                                                 json=_payload(operation))  # fmt: skip
                return _parse(operation, response)
            except _RETRYABLE as error:
                pause = self._settings.wait(operation, error, attempt, waited)
                if pause is None:
                    raise _failed(error) from error
                await asyncio.sleep(pause)
                attempt, waited = attempt + 1, waited + pause

    async def plan_context(self, project: str, goal: str, **task: Any) -> PlanContext:
        return await self.execute(ops.plan_context(project, goal, **task))

    async def recall(self, project: str, query: str, **options: Any) -> RecallResult:
        return await self.execute(ops.recall(project, query, **options))

    async def search_snippets(self, project: str, query: str, **options: Any) -> list[SnippetHit]:
        return await self.execute(ops.search_snippets(project, query, **options))

    async def record_task(self, project: str, goal: str, **fields: Any) -> RecordResult:
        return await self.execute(ops.record_task(project, goal, **fields))

    async def record_episode(self, project: str, summary: str, **fields: Any) -> RecordResult:
        return await self.execute(ops.record_episode(project, summary, **fields))

    async def record_outcome(self, project: str, memory_id: str, success: bool,
                             note: str | None = None, key: str | None = None,
                             ) -> OutcomeStats:  # fmt: skip
        return await self.execute(ops.record_outcome(project, memory_id, success, note, key))
