"""Sync and async clients over the GraphQL API: tokens, retries, typed results."""

from __future__ import annotations

import asyncio
import time
from typing import Any, TypeVar

import httpx

from metisgraph_client import _operations as ops
from metisgraph_client._errors import NotReady, TransportError
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


class _Settings:
    def __init__(self, url: str, token: str | None, retries: int, backoff: float) -> None:
        self.endpoint = url.rstrip("/") + ("" if url.rstrip("/").endswith("/graphql") else
                                           "/graphql")  # fmt: skip
        self.headers = {"Authorization": f"Bearer {token}"} if token else {}
        self.retries = retries
        self.backoff = backoff

    def pause(self, attempt: int) -> float:
        return float(self.backoff * (2**attempt))

    def retry(self, operation: ops.Operation[Any], error: Exception, attempt: int) -> bool:
        """Whether to send again after this failure: a repeatable request, or one that never
        left (connection refused), while attempts remain."""
        if attempt >= self.retries:
            return False
        if isinstance(error, httpx.ConnectError):
            return True
        return operation.repeatable and isinstance(error, (httpx.TransportError, NotReady,
                                                           _Overloaded))  # fmt: skip


class _Overloaded(Exception):
    """A 502, 503 or 504 from a proxy or a starting server: worth another try."""


def _payload(operation: ops.Operation[Any]) -> dict[str, Any]:
    return {"query": operation.document, "variables": operation.variables}


def _parse(operation: ops.Operation[T], response: httpx.Response) -> T:
    if response.status_code in _RETRY_STATUS:
        raise _Overloaded(f"HTTP {response.status_code}")
    if response.status_code not in (200, 400, 401):
        raise TransportError(f"HTTP {response.status_code} from {response.request.url}")
    try:
        body = response.json()
    except ValueError:
        body = None
    return ops.answer_of(operation, response.status_code, body)


def _failed(error: Exception) -> Exception:
    if isinstance(error, NotReady):
        return error
    return TransportError(f"metisgraph unreachable: {error}")


class Client:
    """A blocking client. ``Client(url, token=…)``; use it as a context manager or close()."""

    def __init__(self, url: str, *, token: str | None = None, timeout: float = 30.0,
                 retries: int = 3, backoff: float = 0.2,
                 transport: httpx.BaseTransport | None = None) -> None:  # fmt: skip
        self._settings = _Settings(url, token, retries, backoff)
        self._http = httpx.Client(timeout=timeout, headers=self._settings.headers,
                                  transport=transport)  # fmt: skip

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    def close(self) -> None:
        self._http.close()

    def execute(self, operation: ops.Operation[T]) -> T:
        """Send one operation; retried as ``retries`` allows; its typed result or an error."""
        attempt = 0
        while True:
            try:
                response = self._http.post(self._settings.endpoint, json=_payload(operation))
                return _parse(operation, response)
            except (httpx.TransportError, NotReady, _Overloaded) as error:
                if not self._settings.retry(operation, error, attempt):
                    raise _failed(error) from error
                time.sleep(self._settings.pause(attempt))
                attempt += 1

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
                 retries: int = 3, backoff: float = 0.2,
                 transport: httpx.AsyncBaseTransport | None = None) -> None:  # fmt: skip
        self._settings = _Settings(url, token, retries, backoff)
        self._http = httpx.AsyncClient(timeout=timeout, headers=self._settings.headers,
                                       transport=transport)  # fmt: skip

    async def __aenter__(self) -> AsyncClient:
        return self

    async def __aexit__(self, *_: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        await self._http.aclose()

    async def execute(self, operation: ops.Operation[T]) -> T:
        attempt = 0
        while True:
            try:
                response = await self._http.post(self._settings.endpoint,
                                                 json=_payload(operation))  # fmt: skip
                return _parse(operation, response)
            except (httpx.TransportError, NotReady, _Overloaded) as error:
                if not self._settings.retry(operation, error, attempt):
                    raise _failed(error) from error
                await asyncio.sleep(self._settings.pause(attempt))
                attempt += 1

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
