"""The per-store cache of what a process read of each project: its age, its store, its size."""

from __future__ import annotations

import time

import pytest

from metisgraph.graph import GraphStore
from metisgraph.graph.project_cache import ProjectCache


def _store() -> GraphStore:
    return GraphStore(driver=None)  # type: ignore[arg-type]  # no I/O when built


def test_a_read_is_fresh_within_its_age_and_stale_after(monkeypatch: pytest.MonkeyPatch) -> None:
    cache: ProjectCache[int] = ProjectCache()
    store, now = _store(), [100.0]
    monkeypatch.setattr(time, "monotonic", lambda: now[0])
    assert cache.stale(store, ["a", "b", "a"], 30) == ["a", "b"]
    cache.put(store, "a", 1)
    now[0] += 29
    assert cache.stale(store, ["a", "b"], 30) == ["b"] and cache.fresh(store, "a", 30) == 1
    now[0] += 1
    assert cache.stale(store, ["a"], 30) == ["a"] and cache.fresh(store, "a", 30) is None
    assert cache.kept(store, ["a", "b"]) == {"a": 1}  # however old
    cache.drop(store, "a")
    assert cache.kept(store, ["a"]) == {}


def test_each_store_keeps_its_own_and_at_most_the_limit() -> None:
    cache: ProjectCache[str] = ProjectCache(limit=2)
    one, two = _store(), _store()
    cache.put(one, "a", "one's")
    assert cache.kept(two, ["a"]) == {} and cache.stale(two, ["a"], 60) == ["a"]
    cache.put(one, "b", "b")
    cache.put(one, "b", "b again")  # a project kept already is not one more
    assert cache.kept(one, ["a", "b"]) == {"a": "one's", "b": "b again"}
    cache.put(one, "c", "c")  # past the limit: the others forgotten
    assert cache.kept(one, ["a", "b", "c"]) == {"c": "c"}
