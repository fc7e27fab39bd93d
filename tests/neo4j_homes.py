"""Where the tests' Neo4j servers keep their stores (tests/conftest.py starts them)."""

from __future__ import annotations

import os
import tempfile
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
