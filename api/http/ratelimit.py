"""Requests per second and per minute, per caller: a token bucket for each window.

Kept in the process. With N API workers behind a load balancer, each worker is told its
share (``METISGRAPH_RATE_WORKERS``, ``share``): it counts ``rate / N``, so a key spread over
the workers gets its stated rate in all, not N times it. The split assumes the balancer
spreads a key's requests (round robin); pinned to one worker, a key gets ``rate / N``. The
records-a-day quota is counted in Neo4j and holds across workers whatever the balancer does.
A caller over a rate is answered 429 with ``Retry-After`` (whole seconds until one fits).
"""

from __future__ import annotations

import math
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass

from metisgraph.api.auth import Caller

__all__ = ["RateLimiter"]

_CALLERS = 10_000


@dataclass
class _Bucket:
    capacity: float
    per_second: float
    tokens: float
    at: float

    def refill(self, now: float) -> None:
        self.tokens = min(self.capacity, self.tokens + (now - self.at) * self.per_second)
        self.at = now

    def wait(self) -> float:
        """Seconds until one request fits (0: it fits now)."""
        return 0.0 if self.tokens >= 1 else (1 - self.tokens) / self.per_second


class RateLimiter:
    """Per-caller buckets; a caller's own limits win over the defaults, 0 means unlimited."""

    def __init__(
        self,
        per_second: float = 0.0,
        per_minute: float = 0.0,
        clock: Callable[[], float] = time.monotonic,
        share: int = 1,
    ) -> None:
        if share < 1:
            raise ValueError(f"share: the number of workers, at least 1, got {share}")
        self.per_second = per_second
        self.per_minute = per_minute
        self.share = share
        self.clock = clock
        self._buckets: OrderedDict[tuple[str, str], _Bucket] = OrderedDict()
        self._lock = threading.Lock()

    def retry_after(self, caller: Caller) -> int | None:
        """None when the request may go (and it is counted), else the seconds to wait."""
        rates = []
        second = caller.limits.per_second
        minute = caller.limits.per_minute
        for window, rate, seconds in (
            ("second", self.per_second if second is None else second, 1.0),
            ("minute", self.per_minute if minute is None else minute, 60.0),
        ):
            if rate:
                rates.append((window, float(rate) / self.share, seconds))
        if not rates:
            return None
        now = self.clock()
        with self._lock:
            buckets = [self._bucket(caller.name, w, r, s, now) for w, r, s in rates]
            wait = max(b.wait() for b in buckets)
            if wait > 0:
                return max(1, math.ceil(wait))
            for bucket in buckets:
                bucket.tokens -= 1
        return None

    def _bucket(self, name: str, window: str, rate: float, seconds: float, now: float) -> _Bucket:
        key = (name, window)
        bucket = self._buckets.get(key)
        # A bucket holds at least one request: a rate below one a window (0.5 a second is
        # one request every 2 s) would otherwise never hold a whole token, and refuse all.
        capacity = max(1.0, rate)
        if bucket is None or bucket.capacity != capacity or bucket.per_second != rate / seconds:
            bucket = _Bucket(capacity, per_second=rate / seconds, tokens=capacity, at=now)
            self._buckets[key] = bucket
        bucket.refill(now)
        self._buckets.move_to_end(key)
        while len(self._buckets) > _CALLERS:
            self._buckets.popitem(last=False)
        return bucket
