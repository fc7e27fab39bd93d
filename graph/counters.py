"""Counters of what went wrong and was worked round, kept in the process.

Small on purpose: a name, a few labels, a number. ``/readyz`` shows them; a metrics
exporter (Prometheus) can read ``snapshot()`` and publish them as its own counters.
"""

from __future__ import annotations

import threading
from collections import Counter

__all__ = ["COUNTERS", "Counters"]

Key = tuple[str, tuple[tuple[str, str], ...]]


class Counters:
    """Monotonic counters by name and labels; safe across threads."""

    def __init__(self) -> None:
        self._counts: Counter[Key] = Counter()
        self._lock = threading.Lock()

    def increment(self, name: str, amount: int = 1, **labels: str) -> None:
        key = (name, tuple(sorted(labels.items())))
        with self._lock:
            self._counts[key] += amount

    def value(self, name: str, **labels: str) -> int:
        with self._lock:
            return self._counts[(name, tuple(sorted(labels.items())))]

    def snapshot(self) -> list[tuple[str, dict[str, str], int]]:
        """Every counter: its name, labels and value, in a stable order."""
        with self._lock:
            items = sorted(self._counts.items())
        return [(name, dict(labels), value) for (name, labels), value in items]


COUNTERS = Counters()
