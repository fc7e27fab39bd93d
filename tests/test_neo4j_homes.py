"""The tests' Neo4j keeps its store in memory where the machine has /dev/shm (no fsync per
commit), under a path that still names the worktree; a home given is used as given."""

from __future__ import annotations

from pathlib import Path

import pytest
from neo4j_homes import IN_MEMORY, in_memory_usable, neo4j_test_home, scratch_home


def test_the_test_store_lives_in_memory_under_the_worktree_s_path(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, dead_port: int
) -> None:
    if not in_memory_usable():
        pytest.skip(f"{IN_MEMORY} is not here: the store stays in .metisgraph")
    monkeypatch.delenv("METISGRAPH_TEST_NEO4J_HOME", raising=False)
    root = tmp_path / "clone"
    home, in_memory = neo4j_test_home(root, 1, dead_port)
    assert in_memory and home.is_relative_to(IN_MEMORY)
    assert str(home).endswith(f"{root}/.metisgraph/test-neo4j-1")  # pkill -f "$PWD/…" finds it
    first, _ = neo4j_test_home(root, 0, dead_port)
    assert first.name == "test-neo4j" and first != home  # one store per worker

    monkeypatch.setenv("METISGRAPH_TEST_NEO4J_HOME", str(tmp_path / "mine"))
    assert neo4j_test_home(root, 1, dead_port) == (tmp_path / "mine-1", False)


def test_a_scratch_store_lives_in_memory_too(tmp_path_factory: pytest.TempPathFactory) -> None:
    if not in_memory_usable():
        pytest.skip(f"{IN_MEMORY} is not here")
    home, in_memory = scratch_home(tmp_path_factory)
    try:
        assert in_memory and home.is_dir() and home.parent == IN_MEMORY
    finally:
        home.rmdir()
