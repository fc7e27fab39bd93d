"""The tests' Neo4j keeps its store in memory where the machine has /dev/shm (no fsync per
commit), under a path that still names the worktree; a home given is used as given."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
from neo4j_homes import IN_MEMORY, EarlyStart, in_memory_usable, neo4j_test_home, scratch_home


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


class _Server:
    """Stands in for EmbeddedNeo4j: its start waits until the test lets it finish."""

    def __init__(self, fails: bool = False) -> None:
        self.may_finish, self.began, self.fails = threading.Event(), threading.Event(), fails

    def start(self) -> bool:
        self.began.set()
        if not self.may_finish.wait(10):
            raise TimeoutError("start was never let finish")
        if self.fails:
            raise RuntimeError("Neo4j exited with code 1")
        return True


def test_the_test_server_starts_while_the_worker_goes_on() -> None:
    """conftest starts each worker's Neo4j once its tests are collected; the first test
    loads the model meanwhile (``neo4j_settings``) and then takes the started server."""
    server, early = _Server(), EarlyStart()
    assert early.take() is None  # nothing begun: neo4j_settings starts it itself
    early.begin(server, True)  # type: ignore[arg-type]
    assert server.began.wait(10)  # the start runs, and this thread goes on meanwhile
    server.may_finish.set()
    assert early.take() is True and early.server is server and early.in_memory
    assert early.take() is None  # taken once: the session's end does not stop it twice

    failing, early = _Server(fails=True), EarlyStart()
    early.begin(failing, False)  # type: ignore[arg-type]
    failing.may_finish.set()
    with pytest.raises(RuntimeError, match="exited with code 1"):
        early.take()  # the start's error surfaces where the server is taken: in the test
