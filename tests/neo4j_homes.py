"""Where the tests' Neo4j servers keep their stores (tests/conftest.py starts them)."""

from __future__ import annotations

import os
import tempfile
import threading
from pathlib import Path
from typing import Any

from metisgraph.graph.embedded import EmbeddedNeo4j
from metisgraph.graph.settings import EmbeddedNeo4jSettings

# Every commit to the test store is an fsync: 1.5 ms each on this machine's disk, 0.002 ms
# in memory (/dev/shm). Side by side, six store-bound modules on a warm server (recall
# contract, keys, snippets API, lineage graph, exports, forget; load 2.2-3.2): their calls
# took 18.0 s with the store on disk, 13.8 s in memory. A test store is thrown away anyway.
IN_MEMORY = Path("/dev/shm")


def neo4j_test_home(root: Path, worker: int, port: int) -> tuple[Path, bool]:
    """Where the test Neo4j of ``worker`` keeps its store, and whether that is in memory
    (then removed when the session stops its server): METISGRAPH_TEST_NEO4J_HOME when set;
    else in memory where the machine has it, under a path that still names the worktree
    (``pkill -f "$PWD/.metisgraph/test-neo4j"`` finds it); else .metisgraph/test-neo4j. A
    server already running on the .metisgraph home (METISGRAPH_TEST_KEEP_NEO4J) goes on
    being used: a second one on its port could not start."""
    suffix = f"-{worker}" if worker else ""
    given = os.environ.get("METISGRAPH_TEST_NEO4J_HOME")
    if given:
        return Path(f"{given}{suffix}"), False
    on_disk = root / ".metisgraph" / f"test-neo4j{suffix}"
    if not in_memory_usable():
        return on_disk, False
    if EmbeddedNeo4j(EmbeddedNeo4jSettings(home=on_disk, port=port)).status().running:
        return on_disk, False
    return IN_MEMORY / "metisgraph-tests" / on_disk.relative_to(on_disk.anchor), True


def in_memory_usable() -> bool:
    return IN_MEMORY.is_dir() and os.access(IN_MEMORY, os.W_OK)


def scratch_home(tmp_path_factory: Any) -> tuple[Path, bool]:
    """A new home for a scratch Neo4j (one session's), and whether it is in memory."""
    if in_memory_usable():
        return Path(tempfile.mkdtemp(prefix="metisgraph-scratch-", dir=IN_MEMORY)), True
    return tmp_path_factory.mktemp("scratch-neo4j"), False


class EarlyStart:
    """The test Neo4j started in a thread as soon as the run is known to need it (its tests
    collected): the JVM starts while the worker's first test loads the model, instead of
    before it (tests/conftest.py ``neo4j_settings`` takes the result)."""

    def __init__(self) -> None:
        self._thread: threading.Thread | None = None
        self._outcome: dict[str, Any] = {}
        self.server: EmbeddedNeo4j | None = None
        self.in_memory = False

    def begin(self, server: EmbeddedNeo4j, in_memory: bool) -> None:
        def start() -> None:
            try:
                self._outcome["started"] = server.start()
            except BaseException as error:  # raised again where the result is taken
                self._outcome["error"] = error

        self.server, self.in_memory = server, in_memory
        self._thread = threading.Thread(target=start, name="test-neo4j-start", daemon=True)
        self._thread.start()

    def take(self) -> bool | None:
        """Whether the early start started the server (None when none was begun); once."""
        if self._thread is None:
            return None
        self._thread.join()
        self._thread = None
        if "error" in self._outcome:
            raise self._outcome.pop("error")
        return bool(self._outcome.pop("started"))
